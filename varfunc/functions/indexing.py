"""Indexing: x[key] as the Index op, with the key checked before it reaches the data.

A key is copied when the op is made (backward scatters the gradient through it), shortened when it
is shown, and on the GPU checked for its range there, since CuPy wraps an index that is out of range
around where NumPy refuses it.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from ..backend import device_of, get_array_module, is_array, scatter_add
from ..errors import DeviceError, ShapeError
from ..function import Function

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
    _no_memory(bool, shape)[tuple(stand_ins)]  # NumPy's errors for the key's form and host parts
    if _picks(stand_ins) == 0:
        return  # the index arrays broadcast to nothing: NumPy reads none of their values then
    for (k, axis), gpu in zip(key_axes(parts, len(shape)), on_gpu):
        if gpu and k.dtype.kind in "iu":
            size = shape[axis]
            outside = (k < -size) | (k >= size)
            if outside.any():
                first = int(k[outside].reshape(-1)[0])  # an error: one number may come to the host
                raise IndexError(f"index {first} is out of bounds for axis {axis} with size {size}")


def _picks(parts: tuple) -> int:
    """How many places a key's index arrays pick together (their broadcast size); 1 without any."""
    shapes = []
    for k in parts:
        k = np.asarray(k) if isinstance(k, list) else k
        if is_array(k):  # a mask picks as many places as it holds True
            shapes.append((int(np.count_nonzero(k)),) if k.dtype.kind == "b" else k.shape)
    return math.prod(np.broadcast_shapes(*shapes)) if shapes else 1


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


def key_axes(parts: tuple, ndim: int) -> Any:
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
