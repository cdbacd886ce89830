"""Chapter 09 (On the GPU): where gradients live, and device-agnostic code (checked without a GPU)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import backend
from .core import NOT_SOLVED, SECRET, CheckFailed, exercise, expect_close, expect_equal, require

# --- ch09.grad_device -------------------------------------------------------------------------------

# What the kit does on a machine with one GPU (see _Transfer.backward and Module.to): a gradient
# lives where its leaf's data lives; a moved copy of a leaf is not a leaf.
_GRAD_DEVICE_ANSWERS = {
    "x.grad device": ("cpu", "CudaTransfer.backward sends the gradient back to the device x came from"),
    "x_gpu.is_leaf": (False, "x.cuda() is computed by a Function (CudaTransfer), so it has a creator"),
    "fc.weight.grad device": ("cuda:0", "model.cuda() moves the parameters themselves: they stay leaves"),
    "grad device of the Variable w was copied from": (
        "cpu",
        "the leaf is the CPU Variable; .cuda() made a new Variable w that is not a leaf",
    ),
}


@exercise("ch09.grad_device", title="Predict where gradients live after .cuda()", points=2)
def check_grad_device(ns: dict) -> None:
    require(ns, "predicted")
    predicted = ns["predicted"]
    if not isinstance(predicted, dict):
        raise CheckFailed("predicted", "a dict with one answer per key", type(predicted).__name__)
    unfilled = [key for key in _GRAD_DEVICE_ANSWERS if predicted.get(key) is ...]
    if unfilled:  # the template's values, still ...
        keys = ", ".join(repr(key) for key in unfilled)
        raise CheckFailed(
            NOT_SOLVED,
            hint=f'fill in the values: replace the ... of {keys} in predicted with "cpu", "cuda:0", '
            "True or False",
        )
    for key, (answer, hint) in _GRAD_DEVICE_ANSWERS.items():
        if key not in predicted:
            raise CheckFailed(f"predicted[{key!r}]", "an answer", "missing", "keep every key of the template")
        got = predicted[key]
        if isinstance(answer, bool):
            ok = isinstance(got, (bool, np.bool_)) and bool(got) is answer
        else:
            ok = isinstance(got, str) and got.strip().lower() == answer
        if not ok:
            raise CheckFailed(f"predicted[{key!r}]", SECRET, got, hint)


# --- ch09.one_hot ------------------------------------------------------------------------------------


_MIXED_DEVICES_HINT = (
    "a GPU array cannot be combined with a NumPy array, which lives on the CPU: make every array "
    "with the labels' array module, xp = get_array_module(labels)"
)


def _on_fake_gpu(value: Any) -> Any:
    return value.view(_FakeGpuArray) if isinstance(value, np.ndarray) else value


class _FakeGpuArray(np.ndarray):
    """A NumPy array that get_array_module takes for a CuPy array (its type's module says cupy).

    Like CuPy, its ufuncs (+, ==, np.exp, ...) refuse plain NumPy arrays with a TypeError; NumPy
    scalars and Python numbers are allowed (NumPy hands a scalar over as a 0-d array, so 0-d arrays
    pass too). Otherwise they compute as NumPy does.
    """

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        outs = kwargs.get("out") or ()
        for operand in (*inputs, *outs):
            if type(operand) is np.ndarray and operand.ndim > 0:
                raise TypeError(f"Unsupported type {np.ndarray} ({_MIXED_DEVICES_HINT})")
        inputs = tuple(x.view(np.ndarray) if isinstance(x, _FakeGpuArray) else x for x in inputs)
        if outs:
            kwargs["out"] = tuple(x.view(np.ndarray) if isinstance(x, np.ndarray) else x for x in outs)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if outs and all(isinstance(x, np.ndarray) for x in outs):
            return outs[0] if len(outs) == 1 else outs
        if isinstance(result, tuple):
            return tuple(_on_fake_gpu(r) for r in result)
        return _on_fake_gpu(result)


_FakeGpuArray.__module__ = "cupy._fake_for_grading"


class _FakeCupy:
    """NumPy, with every array it returns viewed as a _FakeGpuArray: a stand-in GPU array module."""

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(np, name)
        if not callable(attribute) or isinstance(attribute, (type, np.ufunc)):
            return attribute  # a ufunc on a _FakeGpuArray returns one (and keeps .outer, .reduce, ...)

        def on_fake_gpu(*args: Any, **kwargs: Any) -> Any:
            return _on_fake_gpu(attribute(*args, **kwargs))

        return on_fake_gpu


@contextlib.contextmanager
def _fake_gpu() -> Iterator[None]:
    """Make get_array_module answer the fake module for _FakeGpuArray inputs, for one check."""
    saved = backend._cupy
    backend._cupy = _FakeCupy()
    try:
        yield
    finally:
        backend._cupy = saved


_ONE_HOT_HINT = (
    "row i holds a single 1, in column labels[i], and zeros elsewhere; make the arrays with "
    "xp = get_array_module(labels), in float32"
)


def _one_hot_case(one_hot: Any, case: str, labels: list, num_classes: int) -> None:
    got = one_hot(np.array(labels, dtype=np.int64), num_classes)
    expected = np.zeros((len(labels), num_classes), dtype=np.float32)
    expected[np.arange(len(labels)), labels] = 1
    expect_close(case, got, expected, _ONE_HOT_HINT)
    expect_equal(f"{case}: dtype", str(got.dtype), "float32", "float32 is PyTorch's default type")


@exercise(
    "ch09.one_hot",
    title="A device-agnostic one_hot with get_array_module",
    points=3,
    needs=("one_hot",),
)
def check_one_hot(ns: dict) -> None:
    one_hot = ns["one_hot"]
    _one_hot_case(one_hot, "one_hot([2, 0, 1], 3)", [2, 0, 1], 3)
    _one_hot_case(one_hot, "one_hot([1, 1], 4) (repeated labels, unused classes)", [1, 1], 4)
    _one_hot_case(one_hot, "one_hot([], 3) (no labels)", [], 3)
    labels = np.array([0, 2, 2, 1]).view(_FakeGpuArray)
    try:
        with _fake_gpu():
            got = one_hot(labels, 3)
    except TypeError as error:
        if not str(error).startswith("Unsupported type"):
            raise
        raise CheckFailed(
            "labels on a (simulated) GPU: your code mixed a NumPy array into a GPU operation",
            "arrays of the labels' array module (cupy) only",
            f"TypeError: {error}",
            "create arrays with xp = get_array_module(labels), not with np directly",
        ) from None
    if not isinstance(got, _FakeGpuArray):
        raise CheckFailed(
            "labels on a (simulated) GPU: the result must be on the same device",
            "an array of the labels' array module (cupy)",
            f"{type(got).__module__}.{type(got).__name__}",
            "create arrays with xp = get_array_module(labels), not with np directly",
        )
    expected = np.eye(3, dtype=np.float32)[[0, 2, 2, 1]]
    expect_close("labels on a (simulated) GPU: the values", np.asarray(got), expected, _ONE_HOT_HINT)
