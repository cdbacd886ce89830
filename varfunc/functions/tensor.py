"""Shape and indexing ops: view, expand, transpose, permute, squeeze, indexing, cat, type, clone.

NumPy returns views for most of these; _do_forward copies any view it gets back, so every
Variable owns its memory and an in-place change to one never changes another.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..backend import device_of, get_array_module, is_array, scatter_add, to_device
from ..errors import DeviceError, DTypeError, ShapeError
from ..function import Function
from .utils import check_dim, int_sizes, normalize_dims, sum_to_shape

# A list or array key with more entries than this is shown by its ends and its size (in the node's
# repr, the graph's labels and the errors): x[list(range(10**6))] would print the whole list.
_KEY_ENTRIES_SHOWN = 10


def _unwrap_key(key: Any) -> Any:
    """An index key with any Variables in it replaced by their arrays, and arrays and lists copied.

    Backward scatters the gradient through the same key, so it must not see later changes to it
    (idx.add_(1), idx[:] = ...): with the caller's own index array, the gradient would land elsewhere.
    """
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    key = getattr(key, "_data", key)
    if hasattr(key, "shape") and hasattr(key, "copy"):
        return key.copy()
    if isinstance(key, list):
        return _copy_list_key(key)
    return key


def _copy_list_key(key: list) -> Any:
    """A list key, copied: a long list of integers or booleans as the array NumPy would make of it.

    NumPy turns a list key into an array on every use, and a deep copy of a million ints costs more
    than the indexing itself, so a long list is turned into its array once (a copy of its own).
    A short list stays a list, shown as written; one NumPy cannot read (floats, slices, rows of
    different lengths) is deep-copied for NumPy to refuse with its own message.
    """
    try:
        array = np.asarray(key)
    except (TypeError, ValueError):  # rows of different lengths, a Variable that requires grad
        return copy.deepcopy(key)
    if array.dtype.kind in "biu" and array.size > _KEY_ENTRIES_SHOWN:
        return array
    return copy.deepcopy(key)


def _key_text(key: Any) -> str:
    """repr(key), but each list or array of more than _KEY_ENTRIES_SHOWN entries shortened to its
    first and last three entries and its size: [0, 1, 2, ..., 97, 98, 99] (list of 100)."""
    if type(key) is tuple:  # x[a, b]: each part on its own
        inner = ", ".join(map(_key_text, key))
        return f"({inner},)" if len(key) == 1 else f"({inner})"
    if type(key) is list:
        if len(key) <= _KEY_ENTRIES_SHOWN:
            return f"[{', '.join(map(_key_text, key))}]"
        ends = [*map(_key_text, key[:3]), "...", *map(_key_text, key[-3:])]
        return f"[{', '.join(ends)}] (list of {len(key)})"
    if is_array(key) and key.size > _KEY_ENTRIES_SHOWN:
        flat = key.reshape(-1)
        ends = [*map(repr, flat[:3].tolist()), "...", *map(repr, flat[-3:].tolist())]
        return f"array([{', '.join(ends)}], shape={key.shape})"
    return repr(key)


def _is_basic(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, (int, slice)) or k is None or k is Ellipsis for k in parts)


class Index(Function):
    """a[key]; backward puts the gradient back at the indexed places (and adds repeated ones up)."""

    def __init__(self, key: Any) -> None:
        self.key = _unwrap_key(key)

    def forward(self, a):
        parts = self.key if isinstance(self.key, tuple) else (self.key,)
        _check_key_devices(self.key, parts, device_of(a))
        try:
            if type(a) is not np.ndarray:  # CuPy wraps an index that is out of range around
                _in_range(parts, a.shape)
            return a[self.key]
        except (IndexError, ValueError) as error:  # ValueError: a slice step of 0
            raise ShapeError(
                f"Variable[{_key_text(self.key)}]: {error} (the Variable has shape {a.shape})"
            ) from None

    def backward(self, grad_output):
        shape = self.input_shapes[0]
        xp = get_array_module(grad_output)
        grad = xp.zeros(shape, dtype=grad_output.dtype)
        if _is_basic(self.key):
            grad[self.key] = grad_output
        else:
            scatter_add(grad, self.key, grad_output)
        return grad

    def extra_repr(self) -> str:
        return _key_text(self.key)


def _check_key_devices(key: Any, parts: tuple, device: str) -> None:
    """A DeviceError for an index array on another device than the data (a host one may index GPU
    data: CuPy copies it over, as x_gpu + np_array does)."""
    for k in parts:
        if is_array(k) and device_of(k) not in ("cpu", device):
            raise DeviceError(
                f"Variable[{_key_text(key)}]: the index is on {device_of(k)} but the Variable is on "
                f"{device}; move one of them first with .cuda() or .cpu()"
            )


def _in_range(parts: tuple, shape: tuple) -> None:
    """NumPy's IndexError for a key out of range, which CuPy would wrap around instead. NumPy checks
    the key on a stand-in of the data that takes no memory, each GPU index array standing in too (its
    form is checked, not its values); integer GPU indices are then checked on their GPU, one
    reduction each, so that no index is copied to the host."""
    on_gpu = [device_of(k) != "cpu" for k in parts]
    stand_ins = [_stand_in(k) if gpu else k for k, gpu in zip(parts, on_gpu)]
    if _no_memory(bool, shape)[tuple(stand_ins)].size == 0:
        return  # nothing is read, and NumPy checks no index then
    for (k, axis), gpu in zip(_axes(parts, len(shape)), on_gpu):
        if gpu and k.dtype.kind in "iu":
            size = shape[axis]
            outside = (k < -size) | (k >= size)
            if outside.any():
                first = int(k[outside].reshape(-1)[0])  # an error: one number may come to the host
                raise IndexError(f"index {first} is out of bounds for axis {axis} with size {size}")


def _stand_in(k: Any) -> np.ndarray:
    """A host array of a GPU index's form: zeros for integers (always in range), and for a mask as
    many True as it holds (how many it picks decides the result's shape; only that count is copied)."""
    if k.dtype.kind != "b":
        return _no_memory(k.dtype, k.shape)
    mask = np.zeros(k.shape, dtype=bool)
    mask.reshape(-1)[: int(k.sum())] = True
    return mask


def _no_memory(dtype: Any, shape: tuple) -> np.ndarray:
    """Zeros of that dtype and shape that take no memory: every element is the same one."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape, (0,) * len(shape))


def _axes(parts: tuple, ndim: int) -> Any:
    """(part, the first axis it indexes) for each part of a key, for data of ndim dims."""
    taken = [_axes_taken(k) for k in parts]
    used = sum(n for n, k in zip(taken, parts) if k is not Ellipsis)
    axis = 0
    for k, n in zip(parts, taken):
        yield k, axis
        axis += ndim - used if k is Ellipsis else n


def _axes_taken(k: Any) -> int:
    """How many axes of the data one part of a key indexes: a mask its ndim, None none, others one."""
    if k is None or isinstance(k, (bool, np.bool_)):  # True and False add an axis, as None does
        return 0
    if isinstance(k, list):  # a short list (a long one is an array already): NumPy reads it so
        k = np.asarray(k)
    return k.ndim if is_array(k) and k.dtype.kind == "b" else 1


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
        return str(self.dtype)


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
