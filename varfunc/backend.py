"""The only module that knows NumPy from CuPy: array modules, devices, moving arrays, GPU detection."""

from __future__ import annotations

import numbers
import os
import re
import warnings
from types import ModuleType
from typing import Any

import numpy as np

from .errors import DeviceError, DTypeError

_cupy: ModuleType | None = None  # imported on first need, so CPU users never pay for it
_gpu_status: tuple[bool, str] | None = None

# Kinds of data a Variable can hold: bool, signed and unsigned integers, floats.
_NUMERIC_KINDS = "biuf"


def _is_cupy_array(x: Any) -> bool:
    return type(x).__module__.startswith("cupy")


def _cupy_module() -> ModuleType:
    global _cupy
    if _cupy is None:
        import cupy  # optional dependency, imported only when a GPU is used

        _cupy = cupy
    return _cupy


def is_array(x: Any) -> bool:
    """True for a NumPy or CuPy ndarray."""
    # type(x) is np.ndarray first: the cheapest test, and true for almost every array; isinstance
    # then takes NumPy's subclasses (np.matrix, masked arrays)
    return type(x) is np.ndarray or isinstance(x, np.ndarray) or _is_cupy_array(x)


def get_array_module(*arrays: Any) -> ModuleType:
    """The array module (numpy or cupy) that the given arrays belong to."""
    for a in arrays:
        if type(a) is not np.ndarray and _is_cupy_array(a):  # (the type test first: it is cheaper)
            return _cupy_module()
    return np


def set_shape(array: Any, shape: tuple) -> None:
    """array.shape = shape: the same memory read another way, in place (what a forward that set its
    input's shape did, put back). NumPy 2.5 deprecates it; nothing else changes the array itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        array.shape = shape


def as_array(data: Any) -> Any:
    """Turn array-likes and Python scalars into an ndarray; NumPy and CuPy arrays pass through."""
    if type(data) is np.ndarray:
        array = data
    elif isinstance(data, np.generic):  # a NumPy scalar: what an op on a 0-d array returns
        array = np.asarray(data)
    elif _is_cupy_array(data):
        array = data
    else:
        try:
            array = np.asarray(data)
        except (ValueError, TypeError) as error:
            raise DTypeError(
                f"Variable: cannot turn {type(data).__name__} into an array ({error}); "
                "pass a NumPy array, a nested list of numbers or a Python number"
            ) from None
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise DTypeError(
            f"Variable: data of dtype {array.dtype} is not supported; "
            "use booleans, integers or floats (for example np.asarray(data, dtype=np.float64))"
        )
    return array


def as_gradient(grad: Any, dtype: Any, returned: str, device: str | None = None) -> Any:
    """A gradient a backward or a hook returned (returned: who, "X.backward returned"), as a plain
    array of dtype. An np.matrix becomes an ndarray: its * is a matrix product, which would make every
    gradient computed from it wrong. A complex gradient for real data is refused: its imaginary part
    would be dropped. So is one on another device than device, when one is given (where its input
    lives: checked for code outside the kit)."""
    if device is not None and device_of(grad) != device:
        raise DeviceError(
            f"{returned} a gradient on {device_of(grad)} for an input on {device}; make it where the "
            "input lives, with the input's array module: xp = get_array_module(grad_output), then "
            "xp.zeros(...), not np.zeros(...) (chapter 09)"
        )
    if isinstance(grad, np.ndarray) and type(grad) is not np.ndarray:
        if isinstance(grad, np.ma.MaskedArray):
            raise DTypeError(
                f"{returned} a masked array, whose masked elements count as numbers; return grad.filled(0)"
            )
        grad = np.asarray(grad)
    if grad.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        raise DTypeError(
            f"{returned} a complex gradient ({grad.dtype}) for {dtype} data: its imaginary part would be "
            "dropped; return a real array"
        )
    return grad if grad.dtype == dtype else grad.astype(dtype)


def check_flag(where: str, name: str, value: Any) -> None:
    """DTypeError unless value is True or False: a string such as "no" would count as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise DTypeError(f"{where}: {name} must be True or False, got {value!r}")


def python_number(x: Any) -> Any:
    """A NumPy scalar as the Python number it holds (np.float64(2) would make float32 data float64),
    and another real number (a Fraction) as a float (NumPy would make object arrays of it)."""
    if type(x) is float or type(x) is int:  # first: the checks below are slower
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, numbers.Real) and not isinstance(x, int):
        return float(x)
    return x


def device_of(array: Any) -> str:
    """The device an array lives on: 'cpu' or 'cuda:N'."""
    if _is_cupy_array(array):
        return f"cuda:{array.device.id}"
    return "cpu"


def check_same_device(op_name: str, arrays: tuple) -> None:
    """Raise a DeviceError naming the op and the devices if the arrays do not all live on one device."""
    # Fast path: when every array is a plain NumPy array (the usual case), return at once, without
    # device_of or a set. (A for's else runs only when the loop did not break: all of one type.)
    first = type(arrays[0])
    for a in arrays:
        if type(a) is not first:
            break
    else:
        if first is np.ndarray:
            return
    devices = [device_of(a) for a in arrays]
    if len(set(devices)) > 1:
        listed = ", ".join(f"input {i} on {d}" for i, d in enumerate(devices))
        raise DeviceError(
            f"{op_name}: inputs live on different devices ({listed}); "
            "move them to one device first with .cuda() or .cpu()"
        )


def scatter_add(target: Any, key: Any, values: Any) -> None:
    """target[key] += values, adding repeated indices up (unlike plain fancy-index assignment)."""
    # CuPy has ufunc.at since v12, built on atomics: into int32, uint32, uint64 or floats (a gradient)
    get_array_module(target).add.at(target, key, values)


def gpu_status() -> tuple[bool, str]:
    """(True, description) when a CUDA GPU can run CuPy kernels here, else (False, what is missing)."""
    global _gpu_status
    if _gpu_status is None:
        _gpu_status = _probe_gpu()
    return _gpu_status


def _probe_gpu() -> tuple[bool, str]:
    if os.environ.get("VARFUNC_FORCE_CPU"):
        return False, "the GPU is switched off by the VARFUNC_FORCE_CPU environment variable"
    try:
        cupy = _cupy_module()
    except Exception as error:  # noqa: BLE001 - any import failure means "no cupy"
        return False, f"CuPy is not installed ({error}); install it with pip install -e '.[gpu]'"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # noqa: BLE001
        return False, f"CuPy is installed but no NVIDIA driver answered ({error})"
    if count < 1:
        return False, "CuPy is installed and the driver answered, but there is no GPU device"
    try:
        probe = cupy.arange(4, dtype=cupy.float32)
        float((probe * 2).sum())  # compiles and runs one kernel: proves the whole tool chain
    except Exception as error:  # noqa: BLE001
        return False, f"a GPU was found but CuPy could not run a kernel on it ({error})"
    return True, f"{count} CUDA device(s), CuPy {cupy.__version__}"


def to_device(array: Any, device: str) -> Any:
    """A copy of the array on 'cpu' or 'cuda[:N]' (the same array if it is already there).

    cupy.asarray returns an array already on the current GPU as it is, and copies one from another
    GPU (or from the host) to it: so the move happens with device N made the current one."""
    if device == "cpu":
        return array.get() if _is_cupy_array(array) else array
    if not isinstance(device, str) or not re.fullmatch(r"cuda(:[0-9]+)?", device):
        dtype = (
            "" if isinstance(device, str) else " (a dtype changes with .double(), .float() or .type(dtype))"
        )
        raise DeviceError(f"to_device: unknown device {device!r}; use 'cpu' or 'cuda' / 'cuda:N'{dtype}")
    available, reason = gpu_status()
    if not available:
        raise DeviceError(f"cannot move data to {device}: {reason}")
    cupy = _cupy_module()
    index = int(device.split(":")[1]) if ":" in device else cupy.cuda.runtime.getDevice()
    with cupy.cuda.Device(index):
        return cupy.asarray(array)


def loaded_array(where: str, value: Any, like: Any) -> Any:
    """value (an array, a list) as a new array of like's dtype on like's device, for load_state_dict.

    Refused with a DTypeError: data that is not real numbers (complex, text, objects; astype would
    drop an imaginary part or make NaN of None) and numbers too large for the dtype (1e300 in float32
    would become inf), which would load as weights or buffers that are silently not the saved ones.
    """
    try:
        array = value if hasattr(value, "astype") else np.asarray(value)  # lists, torch tensors
    except (TypeError, ValueError) as error:  # a ragged list
        raise DTypeError(f"{where} is a {type(value).__name__} that makes no array ({error})") from None
    if array.dtype.kind not in "fiu":
        raise DTypeError(
            f"{where} holds {array.dtype} data, which is not real numbers; store float or integer arrays"
        )
    array = to_device(array, device_of(like))
    xp = get_array_module(array)
    with np.errstate(over="ignore"):  # refused below, with a clearer message than NumPy's warning
        converted = xp.array(array, dtype=like.dtype, copy=True)  # a NumPy scalar too becomes an array
    if array.dtype.kind == "f" and bool((xp.isfinite(array) & ~xp.isfinite(converted)).any()):
        raise DTypeError(
            f"{where} holds numbers too large for {like.dtype} (they would become inf); "
            "store values that fit the parameter's dtype"
        )
    return converted
