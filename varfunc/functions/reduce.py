"""Reductions: sum, mean, and the selections max, min, median and mode (values and indices)."""

from __future__ import annotations

import math
from typing import Any

from ..backend import check_flag, get_array_module
from ..errors import ShapeError
from ..function import Function
from .utils import check_dim, normalize_dims


def _expand_back(grad: Any, shape: tuple, axes: tuple, keepdim: bool) -> Any:
    """Broadcast the gradient of a reduction back over the reduced axes of the input's shape."""
    xp = get_array_module(grad)
    if grad.ndim == 0:  # everything was reduced (the usual loss): the one value, everywhere
        return xp.full(shape, grad)  # (a few µs, where expand_dims and broadcast_to take 15)
    if not keepdim and axes:
        grad = xp.expand_dims(grad, axes)
    return xp.broadcast_to(grad, shape)


class Sum(Function):
    """Sum over dim (an int, a tuple, or None for all); keepdim keeps reduced dims as size 1."""

    def __init__(self, dim: Any = None, keepdim: bool = False) -> None:
        self.dim = dim
        check_flag(type(self).__name__.lower(), "keepdim", keepdim)  # "yes" reached NumPy's TypeError
        self.keepdim = keepdim

    def forward(self, a):
        self.axes = normalize_dims("sum", self.dim, a.ndim)
        if a.dtype.kind == "u":  # as torch: an int64 sum, not NumPy's uint64 (where s - 10 wraps)
            return a.sum(axis=self.axes, keepdims=self.keepdim, dtype="int64")
        return a.sum(axis=self.axes, keepdims=self.keepdim)

    def backward(self, grad_output):
        return _expand_back(grad_output, self.input_shapes[0], self.axes, self.keepdim)

    def extra_repr(self) -> str:
        return "" if self.dim is None else f"dim={self.dim!r}" + (", keepdim=True" if self.keepdim else "")


class Mean(Sum):
    """Mean over dim; each input element gets grad / (number of elements averaged)."""

    def forward(self, a):
        self.axes = normalize_dims("mean", self.dim, a.ndim)
        self.count = math.prod(a.shape[axis] for axis in self.axes)
        if a.dtype.kind == "f" and a.dtype.itemsize >= 4 and self.count:
            # What NumPy's mean computes for float32 and float64, without its Python wrapper
            # (about 7 µs a call). float16 and integers keep mean: it sums them in a wider dtype.
            return a.sum(axis=self.axes, keepdims=self.keepdim) / self.count
        return a.mean(axis=self.axes, keepdims=self.keepdim)

    def backward(self, grad_output):
        if grad_output.dtype.itemsize < 4:  # float16 holds no count above 65,504: divide in float32
            grad = (grad_output.astype("float32") / self.count).astype(grad_output.dtype)
        else:
            grad = grad_output / self.count
        return _expand_back(grad, self.input_shapes[0], self.axes, self.keepdim)


class _SelectionFunction(Function):
    """Picks one element along dim (max, min, median, mode): returns values and their indices.

    With dim=None it picks one element of the whole array and returns only the value. Backward
    sends the gradient to the picked element and zero elsewhere. (v0.1.3 read ``dim or last dim``,
    so dim=0 silently reduced over the last dim; here dim=0 means dim 0.)
    """

    def __init__(self, dim: Any = None, keepdim: bool = False) -> None:
        self.dim = dim
        check_flag(type(self).__name__.lower(), "keepdim", keepdim)  # "yes" reached NumPy's TypeError
        self.keepdim = keepdim

    def forward(self, a):
        xp = get_array_module(a)
        name = type(self).__name__.lower()
        if self.dim is None:
            if a.size == 0:
                raise ShapeError(f"{name}: cannot select from an empty Variable of shape {a.shape}")
            self.flat_index = int(self.select_index(xp, a.reshape(-1), 0))
            value = a.reshape(-1)[self.flat_index]
            return value.reshape((1,) * a.ndim) if self.keepdim else value
        self.axis = check_dim(name, self.dim, a.ndim)
        if a.shape[self.axis] == 0:  # other dims may be empty: an empty batch gives empty results
            raise ShapeError(
                f"{name}: cannot select along dim {self.dim}, which has size 0 (shape {a.shape})"
            )
        indices = xp.expand_dims(self.select_index(xp, a, self.axis), self.axis)
        values = xp.take_along_axis(a, indices, axis=self.axis)
        if not self.keepdim:
            values, indices = values.squeeze(self.axis), indices.squeeze(self.axis)
        self.indices = indices
        self.mark_non_differentiable(indices)
        return values, indices

    def backward(self, grad_output, grad_indices=None):
        shape = self.input_shapes[0]
        xp = get_array_module(grad_output)
        grad = xp.zeros(shape, dtype=grad_output.dtype)
        if self.dim is None:
            grad.reshape(-1)[self.flat_index] = grad_output.reshape(())
            return grad
        indices, values = self.indices, grad_output
        if not self.keepdim:
            indices = xp.expand_dims(indices, self.axis)
            values = xp.expand_dims(values, self.axis)
        xp.put_along_axis(grad, indices, values, axis=self.axis)
        return grad

    def extra_repr(self) -> str:
        return "" if self.dim is None else f"dim={self.dim}"


class Max(_SelectionFunction):
    """The largest element (first one on ties), over all or along dim."""

    def select_index(self, xp, a, axis):
        return xp.argmax(a, axis=axis)


class Min(_SelectionFunction):
    """The smallest element (first one on ties), over all or along dim."""

    def select_index(self, xp, a, axis):
        return xp.argmin(a, axis=axis)


class Median(_SelectionFunction):
    """The lower median (the element at rank (n-1)//2, as PyTorch), over all or along dim.

    A slice holding a NaN has median NaN (as PyTorch and np.median): its first NaN is picked.
    """

    def select_index(self, xp, a, axis):
        order = xp.argsort(a, axis=axis, kind="stable")  # NaNs sort last
        index = xp.take(order, (a.shape[axis] - 1) // 2, axis=axis)
        nan = xp.isnan(a)
        if nan.any():
            index = xp.where(nan.any(axis=axis), xp.argmax(nan, axis=axis), index)
        return index


class Mode(_SelectionFunction):
    """The most frequent value (the smallest one on ties) along dim (default: the last)."""

    def __init__(self, dim: Any = -1, keepdim: bool = False) -> None:
        super().__init__(dim, keepdim)

    def select_index(self, xp, a, axis):
        order = xp.argsort(a, axis=axis, kind="stable")
        ranked = xp.moveaxis(xp.take_along_axis(a, order, axis=axis), axis, -1)
        # Sorted, equal values sit in runs: find where each element's run starts, and its place in it.
        n = ranked.shape[-1]
        position = xp.arange(n)
        new_run = xp.ones(ranked.shape, dtype=bool)
        new_run[..., 1:] = ranked[..., 1:] != ranked[..., :-1]  # NaN != NaN: each NaN a run of its own
        starts = xp.sort(xp.where(new_run, position, n), axis=-1)  # each row's run starts, then n's
        start = xp.take_along_axis(starts, xp.cumsum(new_run, axis=-1) - 1, axis=-1)
        longest_end = xp.argmax(position - start, axis=-1)[..., None]  # first longest = smallest value
        first = xp.take_along_axis(start, longest_end, axis=-1)
        return xp.take_along_axis(xp.moveaxis(order, axis, -1), first, axis=-1)[..., 0]
