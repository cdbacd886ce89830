"""A stand-in for CuPy, for checking device-agnostic code on a machine without a GPU.

``FakeGpuArray`` holds a NumPy array and refuses what a CuPy array refuses: to become a NumPy array
implicitly (``np.asarray(x)``, indexing a NumPy array with it) and to meet a NumPy array in a ufunc
(``x == np.arange(3)``). Python numbers and NumPy scalars mix freely, NumPy arrays may be written
into it or index it (CuPy copies those to the GPU), an integer index out of range wraps around, and
``.get()`` gives the NumPy array, as in CuPy.
Inside ``fake_gpu()``, ``get_array_module`` answers a NumPy whose arrays are FakeGpuArrays. A check
can refuse copies to the host: of arrays (``host_copies=False``: ``.get()``, ``.tolist()``), and also
of single numbers (``host_numbers=False``: ``.item()``, ``int()``, ``float()``, ``bool()``, each of
which CuPy answers with a copy to the host; the kit's own code reads such numbers, in error messages).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from .. import backend
from ..functions.indexing import key_axes

MIXED_DEVICES = "Unsupported type"  # how CuPy's TypeErrors start, for a NumPy operand and ...
HOST_COPY = "A copy to the host, in a check that asks for none"
_HOST_COPIES_REFUSED = False  # set by fake_gpu(host_copies=False)
_HOST_NUMBERS_REFUSED = False  # set by fake_gpu(host_numbers=False)
IMPLICIT_CONVERSION = "Implicit conversion to a NumPy array is not allowed"  # ... for np.asarray(x)


def on_fake_gpu(value: Any) -> Any:
    """value with every NumPy array in it (a tuple's or list's too: np.split gives a list) put on the
    fake GPU; a NumPy scalar (what NumPy's reductions give) becomes a 0-d one there, as CuPy's
    reductions give 0-d GPU arrays."""
    if isinstance(value, (tuple, list)):
        return type(value)(on_fake_gpu(v) for v in value)
    if isinstance(value, np.generic):
        value = np.asarray(value)
    return FakeGpuArray(value) if isinstance(value, np.ndarray) else value


def _on_cpu(value: Any, refuse_numpy: bool) -> Any:
    """value with every FakeGpuArray in it (a tuple's or list's too) as its NumPy array."""
    if isinstance(value, (tuple, list)):
        return type(value)(_on_cpu(v, refuse_numpy) for v in value)
    if isinstance(value, FakeGpuArray):
        return value._array
    if refuse_numpy and type(value) is np.ndarray and value.ndim > 0:
        raise TypeError(f"{MIXED_DEVICES} {np.ndarray}: a GPU array cannot be combined with a NumPy array")
    return value


def _wrapped_key(key: Any, shape: tuple) -> Any:
    """key on the host, each integer index array taken modulo its axis's length: CuPy wraps an index
    out of range around where NumPy refuses it (a documented difference), and so must its stand-in."""
    parts = _on_cpu(key if isinstance(key, tuple) else (key,), refuse_numpy=False)
    parts = tuple(np.asarray(k) if isinstance(k, list) else k for k in parts)
    wrapped = tuple(
        np.mod(k, shape[axis])
        if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and axis < len(shape) and shape[axis]
        else k
        for k, axis in key_axes(parts, len(shape))
    )
    return wrapped if isinstance(key, tuple) else wrapped[0]


# CuPy's ufunc.at scatters with CUDA's atomic operations: for these ufuncs, into these dtypes only
SCATTER_UFUNCS = ("add", "subtract", "maximum", "minimum")
SCATTER_DTYPES = ("int32", "float16", "float32", "float64", "uint32", "uint64")


def _check_scatter(ufunc: np.ufunc, dtype: np.dtype) -> None:
    """CuPy's errors for a ufunc.at it cannot do (an int64 or bool target, multiply.at, ...)."""
    if ufunc.__name__ not in SCATTER_UFUNCS:
        raise NotImplementedError(f"{ufunc.__name__}.at is not supported on CuPy")
    if dtype.name not in SCATTER_DTYPES:
        raise TypeError(f"scatter_{ufunc.__name__} only supports {', '.join(SCATTER_DTYPES)}")


class FakeGpuArray(NDArrayOperatorsMixin):
    """A NumPy array that the kit's backend takes for a CuPy array on cuda:0 (see the module's doc)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(f"{IMPLICIT_CONVERSION}. Please use `.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "at":  # ufunc.at(a, key, b): the key may hold NumPy arrays, as a[key] may
            a, key, *b = inputs
            a = _on_cpu(a, True)
            _check_scatter(ufunc, a.dtype)
            return ufunc.at(a, _wrapped_key(key, a.shape), *_on_cpu(b, True))
        out = kwargs.get("out")  # (NumPy hands it over as a tuple)
        if out is not None:
            kwargs["out"] = _on_cpu(out, refuse_numpy=True)
        with np.errstate(all="ignore"):  # a CUDA kernel neither warns nor raises: inf and nan, quietly
            result = getattr(ufunc, method)(*_on_cpu(inputs, refuse_numpy=True), **kwargs)
        result = on_fake_gpu(result)
        if out is None:
            return result
        # CuPy returns the out array itself (so a -= b keeps a): the same FakeGpuArray here
        results = result if isinstance(result, tuple) else (result,)
        kept = tuple(given if given is not None else new for given, new in zip(out, results))
        return kept[0] if len(kept) == 1 else kept

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        return on_fake_gpu(func(*_on_cpu(args, refuse_numpy=True), **kwargs))

    @property
    def shape(self) -> tuple:
        return self._array.shape

    @shape.setter
    def shape(self, shape: tuple) -> None:  # a.shape = ...: the same memory read another way
        backend.set_shape(self._array, shape)

    @property
    def flags(self) -> Any:
        """CuPy's flags: c_contiguous, f_contiguous and owndata only (CuPy has no read-only arrays)."""
        flags = self._array.flags
        return SimpleNamespace(
            c_contiguous=flags.c_contiguous, f_contiguous=flags.f_contiguous, owndata=flags.owndata
        )

    def __getitem__(self, key: Any) -> Any:
        return on_fake_gpu(self._array[_wrapped_key(key, self._array.shape)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._array[_wrapped_key(key, self._array.shape)] = _on_cpu(value, refuse_numpy=False)

    def __getattr__(self, name: str) -> Any:  # shape, dtype, astype, max, ...: NumPy's, results on the GPU
        # _array: not set yet (a copy being made); __array_interface__ and the like would hand
        # NumPy the array without asking __array__
        if name == "_array" or name.startswith("__"):
            raise AttributeError(name)
        # CuPy's tolist is get().tolist(): with host_copies=False, one number's is still let through
        if name == "tolist" and (_HOST_NUMBERS_REFUSED or _HOST_COPIES_REFUSED and self._array.size > 1):
            raise TypeError(f"{HOST_COPY}: .tolist() copied a GPU array to the host")
        if name == "item":
            self._number_read("x.item()")
        attribute = getattr(self._array, name)
        if not callable(attribute):
            return on_fake_gpu(attribute)
        return lambda *args, **kwargs: on_fake_gpu(attribute(*_on_cpu(args, False), **kwargs))

    def __len__(self) -> int:
        return len(self._array)

    def __int__(self) -> int:
        return int(self._number_read("int(x)"))

    def __float__(self) -> float:
        return float(self._number_read("float(x)"))

    def __bool__(self) -> bool:
        return bool(self._number_read("bool(x), an if or a while on a GPU array,"))

    def _number_read(self, how: str) -> np.ndarray:
        """The array, for a number read back to the host (CuPy copies it); refused with host_numbers=False."""
        if _HOST_NUMBERS_REFUSED:
            raise TypeError(f"{HOST_COPY}: {how} copied a number of a GPU array to the host")
        return self._array

    def __repr__(self) -> str:
        return f"array({self._array.tolist()!r}, dtype={self._array.dtype}) on the (simulated) GPU"

    def get(self) -> np.ndarray:
        """The array, copied to the CPU (CuPy's way out); refused where a check asks for no host copy."""
        if _HOST_COPIES_REFUSED:
            raise TypeError(f"{HOST_COPY}: .get() or to_device(x, 'cpu') copied a GPU array to the host")
        return self._array.copy()


FakeGpuArray.__module__ = "cupy._fake_for_grading"  # what the backend's CuPy test looks at
FakeGpuArray.device = type("Device", (), {"id": 0})()


class _FakeDevice:
    """cupy.cuda.Device(0) as a context manager, and cupy.cuda.runtime's device queries."""

    def __init__(self, index: int = 0) -> None:
        self.index = index

    def __enter__(self) -> _FakeDevice:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class _FakeCuda:
    """The parts of cupy.cuda that backend.to_device uses: one device, number 0."""

    Device = _FakeDevice
    runtime = type("runtime", (), {"getDevice": staticmethod(lambda: 0)})


class _FakeCupy:
    """NumPy, with every array its functions return put on the fake GPU."""

    cuda = _FakeCuda

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(np, name)
        if not callable(attribute) or isinstance(attribute, (type, np.ufunc)):
            return attribute  # dtypes; a ufunc on a FakeGpuArray returns one
        # xp.asarray(a NumPy array) is CuPy's way in; its other functions refuse NumPy arrays
        refuse = name not in ("asarray", "array", "ascontiguousarray", "asnumpy")
        return lambda *args, **kwargs: on_fake_gpu(attribute(*_on_cpu(args, refuse), **kwargs))


@contextlib.contextmanager
def fake_gpu(host_copies: bool = True, host_numbers: bool = True) -> Iterator[None]:
    """For one check: get_array_module answers the fake CuPy for FakeGpuArray inputs, to_device(x,
    'cuda') gives one; with host_copies=False a copy of an array to the host (.get()) is a TypeError,
    and with host_numbers=False one number read back (.item(), int(x), float(x), bool(x)) too."""
    global _HOST_COPIES_REFUSED, _HOST_NUMBERS_REFUSED
    saved = backend._cupy, backend._gpu_status, _HOST_COPIES_REFUSED, _HOST_NUMBERS_REFUSED
    backend._cupy, backend._gpu_status = _FakeCupy(), (True, "1 simulated GPU")
    _HOST_COPIES_REFUSED, _HOST_NUMBERS_REFUSED = not host_copies, not host_numbers
    try:
        yield
    finally:
        backend._cupy, backend._gpu_status, _HOST_COPIES_REFUSED, _HOST_NUMBERS_REFUSED = saved
