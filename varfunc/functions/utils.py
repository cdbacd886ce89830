"""Helpers shared by the ops: shapes for backward, float data for forward."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError


def float_data(a: Any) -> Any:
    """a, or a float64 copy of integer or boolean data (NumPy would pick float16 for int8 or bool)."""
    return a.astype(np.float64) if a.dtype.kind in "biu" else a


def sum_to_shape(grad: Any, shape: tuple) -> Any:
    """Sum a broadcast gradient back down to the shape of the input it belongs to."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad  # of shape now, if grad broadcasts to it (_do_backward checks every gradient's shape)


def broadcast_error(op: str, a: Any, b: Any) -> ShapeError:
    """The error for two operands whose shapes do not broadcast (raise it from the ValueError)."""
    return ShapeError(
        f"{op}: shapes {a.shape} and {b.shape} cannot be broadcast together; each pair of trailing "
        "dims must be equal or one of them 1 (use view or unsqueeze to line them up)"
    )


INTEGERS = (int, np.integer)  # a dim may be a NumPy integer too (x.sum(axis_array[0]))


def _is_integer(d: Any) -> bool:
    return isinstance(d, INTEGERS) and not isinstance(d, bool)


def normalize_dims(op: str, dim: Any, ndim: int) -> tuple:
    """dim (an int, a tuple of ints, or None for all) as a sorted tuple of non-negative axes.

    A 0-d Variable accepts dim 0 or -1, as PyTorch does, and has no axis to reduce: ().
    """
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int and -ndim <= dim < ndim:  # the usual case, one dim in range: no checks left
        return (dim % ndim,)
    dims = (dim,) if isinstance(dim, INTEGERS) else dim
    # (a bool is an int to Python: x.sum(True) reduced dim 1)
    if not isinstance(dims, (tuple, list)) or not all(_is_integer(d) for d in dims):
        if hasattr(dim, "shape"):  # x.max(y) meant elementwise (v0.1's cmax), or an array of dims
            pair = op in ("max", "min")
            elementwise = f"; the elementwise {op} of two is c{op}: x.c{op}(y)" if pair else ""
            raise ShapeError(
                f"{op}: dim must be an int or a tuple of ints, got a {type(dim).__name__} of shape "
                f"{dim.shape}{elementwise}"
            )
        raise ShapeError(f"{op}: dim must be an int or a tuple of ints, got {dim!r}")
    if not dims:  # NumPy would reduce over no axis, PyTorch over every axis: say which is meant
        raise ShapeError(f"{op}: dim={dim!r} names no dimension; use dim=None for all of them")
    axes = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise ShapeError(
                f"{op}: dim {d} is out of range for a Variable with {ndim} dimension(s); "
                f"use a dim from {-max(ndim, 1)} to {max(ndim, 1) - 1}"
            )
        axes.append(int(d) % max(ndim, 1))
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: dim {tuple(dims)} names one dimension twice; name each once")
    return tuple(sorted(axes)) if ndim else ()


def check_dim(op: str, dim: int, ndim: int) -> int:
    """One dim, checked and made non-negative."""
    if ndim == 0:
        raise ShapeError(f"{op}: a 0-d Variable has no dimension {dim!r} to work along; view(1) it first")
    if isinstance(dim, (tuple, list)) and not dim:  # (normalize_dims would suggest dim=None: all of them)
        raise ShapeError(f"{op}: takes one dim (an int), got {dim!r}")
    axes = normalize_dims(op, dim, ndim)
    if len(axes) != 1:
        raise ShapeError(f"{op}: takes one dim (an int), got {dim!r}; call it once for each dim")
    return axes[0]


def int_sizes(op: str, sizes: tuple, lowest: int = -1, what: str = "sizes") -> tuple:
    """sizes (or dims), if each is an int >= lowest (a bool is not one); else a ShapeError that says why."""
    for size in sizes:
        if not _is_integer(size):
            fix = ": n / 2 is a float, n // 2 an int" if isinstance(size, float) and what == "sizes" else ""
            raise ShapeError(f"{op}: {what} must be ints, got {size!r} in {sizes}{fix}")
        if size < lowest:
            raise ShapeError(f"{op}: got {size} in {sizes}; each of the {what} is >= {lowest}")
    return sizes
