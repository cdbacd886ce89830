"""Shape ops: view, expand, transpose, permute, squeeze, cat, type, clone (indexing: indexing.py).

NumPy returns views for most of these; _wrap_outputs (called by _do_forward) copies any view it gets
back, so every Variable owns its memory and an in-place change to one never changes another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import device_of, get_array_module, to_device
from ..errors import DTypeError, ShapeError
from ..function import Function
from .utils import check_dim, int_sizes, normalize_dims, sum_to_shape


class View(Function):
    """a with a new shape holding the same elements in the same order (-1: inferred)."""

    def __init__(self, *sizes: int) -> None:
        self.sizes = int_sizes("view", sizes)
        if sizes.count(-1) > 1:
            raise ShapeError(f"view: {sizes} has more than one -1; only one size can be inferred")

    def forward(self, a):
        try:
            return a.reshape(self.sizes)
        except ValueError:
            raise ShapeError(
                f"view: cannot view a Variable of shape {a.shape} ({a.size} elements) as "
                f"{self.sizes}; the number of elements must stay the same"
            ) from None

    def backward(self, grad_output):
        return grad_output.reshape(self.input_shapes[0])

    def extra_repr(self) -> str:
        return ", ".join(map(str, self.sizes))


class Expand(Function):
    """a broadcast to sizes (-1 keeps a dim); backward sums over the expanded dims."""

    def __init__(self, *sizes: int) -> None:
        self.sizes = int_sizes("expand", sizes)

    def forward(self, a):
        offset = len(self.sizes) - a.ndim
        target = tuple(
            a.shape[i - offset] if size == -1 and i >= offset else size for i, size in enumerate(self.sizes)
        )
        try:
            return get_array_module(a).broadcast_to(a, target)
        except ValueError:
            raise ShapeError(
                f"expand: cannot expand shape {a.shape} to {self.sizes}; only dims of size 1 "
                "can grow, and new dims go in front"
            ) from None

    def backward(self, grad_output):
        return sum_to_shape(grad_output, self.input_shapes[0])

    def extra_repr(self) -> str:
        return ", ".join(map(str, self.sizes))


class Transpose(Function):
    """a with two dims swapped."""

    def __init__(self, dim0: int, dim1: int) -> None:
        self.dims = (dim0, dim1)

    def forward(self, a):
        axes = [check_dim("transpose", d, a.ndim) for d in self.dims]
        return get_array_module(a).swapaxes(a, *axes)

    def backward(self, grad_output):
        return get_array_module(grad_output).swapaxes(grad_output, *self.dims)

    def extra_repr(self) -> str:
        return f"{self.dims[0]}, {self.dims[1]}"


class Permute(Function):
    """a with its dims reordered; backward applies the inverse order."""

    def __init__(self, *dims: int) -> None:
        self.dims = int_sizes("permute", dims, lowest=-len(dims), what="dims")

    def forward(self, a):
        # each dim once, in range (a negative dim counts from the end)
        if sorted(d + a.ndim if d < 0 else d for d in self.dims) != list(range(a.ndim)):
            raise ShapeError(f"permute: {self.dims} is not an order of the {a.ndim} dims of shape {a.shape}")
        return get_array_module(a).transpose(a, self.dims)

    def backward(self, grad_output):
        xp = get_array_module(grad_output)
        inverse = [0] * len(self.dims)
        for position, d in enumerate(self.dims):
            inverse[d % len(self.dims)] = position
        return xp.transpose(grad_output, inverse)

    def extra_repr(self) -> str:
        return ", ".join(map(str, self.dims))


class Squeeze(Function):
    """a without dims of size 1 (only those in dim, an int or a tuple, if given; others are left as is)."""

    def __init__(self, dim: Any = None) -> None:
        self.dim = dim

    def forward(self, a):
        if self.dim is None:
            return a.squeeze()
        axes = normalize_dims("squeeze", self.dim, a.ndim)  # a 0-d Variable takes dim 0 or -1: ()
        return a.squeeze(tuple(axis for axis in axes if a.shape[axis] == 1))

    def backward(self, grad_output):
        return grad_output.reshape(self.input_shapes[0])

    def extra_repr(self) -> str:
        return "" if self.dim is None else f"dim={self.dim}"


class Unsqueeze(Function):
    """a with a new dim of size 1 inserted at dim."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, a):
        try:
            axis = check_dim("unsqueeze", self.dim, a.ndim + 1)  # the output's dims: one more
        except ShapeError as error:
            if "out of range" not in str(error):  # not an int (a bool, a tuple): that error as it is
                raise
            raise ShapeError(
                f"unsqueeze: dim {self.dim} is out of range for a Variable with {a.ndim} dimension(s); "
                f"the new dim goes at a position from {-a.ndim - 1} to {a.ndim}"
            ) from None
        return get_array_module(a).expand_dims(a, axis)

    def backward(self, grad_output):
        return grad_output.reshape(self.input_shapes[0])

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Concat(Function):
    """The inputs joined along dim; backward hands each input its slice of the gradient."""

    def __init__(self, dim: int = 0) -> None:
        self.dim = dim

    def forward(self, *arrays):
        first = arrays[0]
        axis = check_dim("cat", self.dim, first.ndim)
        for position, a in enumerate(arrays):
            if a.ndim != first.ndim or any(a.shape[i] != first.shape[i] for i in range(a.ndim) if i != axis):
                raise ShapeError(
                    f"cat: input {position} has shape {a.shape} but input 0 has {first.shape}; "
                    f"all sizes except dim {self.dim} must match"
                )
        return get_array_module(first).concatenate(arrays, axis=axis)

    def backward(self, grad_output):
        axis = check_dim("cat", self.dim, grad_output.ndim)
        xp = get_array_module(grad_output)
        ends = []
        for shape in self.input_shapes[:-1]:
            ends.append((ends[-1] if ends else 0) + shape[axis])
        return tuple(xp.split(grad_output, ends, axis=axis))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Type(Function):
    """a converted to another dtype; backward converts the gradient back (broken in v0.1.3)."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype

    def forward(self, a):
        try:
            result = a.astype(self.dtype)
        except TypeError:  # not a dtype at all: "foo"
            result = None
        if result is None or result.dtype.kind not in "biuf":
            raise DTypeError(
                f"type: {self.dtype!r} is not a dtype a Variable can hold; use a boolean, integer or "
                "float dtype such as np.float32, 'float64' or np.int64"
            )
        self.input_dtype = a.dtype
        if not np.issubdtype(result.dtype, np.inexact):  # integers and booleans have no gradient
            self.mark_non_differentiable(result)
        return result

    def backward(self, grad_output):
        return grad_output.astype(self.input_dtype)

    def extra_repr(self) -> str:
        try:
            return np.dtype(self.dtype).name  # float32, for np.float32 and "float32" alike
        except TypeError:  # not a dtype (forward refuses it)
            return repr(self.dtype)


class Clone(Function):
    """A copy of a; the gradient passes through unchanged."""

    def forward(self, a):
        return a.copy()

    def backward(self, grad_output):
        return grad_output


class _Transfer(Function):
    """Moves data to another device; backward moves the gradient back to where the input lived."""

    target = "cpu"

    def forward(self, a):
        self.source = device_of(a)
        return to_device(a, self.target)

    def backward(self, grad_output):
        return to_device(grad_output, self.source)

    def extra_repr(self) -> str:
        return repr(self.target)


class CudaTransfer(_Transfer):
    """To a GPU, 'cuda' (the current one) or 'cuda:N': v0.1.4's CudaTransfer without its device-0 quirk."""

    def __init__(self, device: str = "cuda") -> None:
        self.target = device


class CpuTransfer(_Transfer):
    """To the CPU (as a NumPy array)."""
