"""Chapter 09 (On the GPU): where gradients live, and device-agnostic code (checked without a GPU)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..variable import Variable
from .core import (
    NOT_SOLVED,
    SECRET,
    CheckFailed,
    exercise,
    expect_close,
    expect_equal,
    quoted,
    require,
    running,
)
from .fake_gpu import HOST_COPY, IMPLICIT_CONVERSION, MIXED_DEVICES, FakeGpuArray, fake_gpu
from .predictions import expect_written_by_hand, predictions_wrong

# --- ch09.grad_device -------------------------------------------------------------------------------

# What the kit does on a machine with one GPU (see _Transfer.backward and Module.to): a gradient
# lives where its leaf's data lives; a moved copy of a leaf is not a leaf.
_GRAD_DEVICE_ANSWERS = {
    "x.grad device": "cpu",
    "x_gpu.is_leaf": False,
    "fc.weight.grad device": "cuda:0",
    "grad device of the Variable w was copied from": "cpu",
}
# Questions, not facts: they are shown for every key, and a fact would give its answer away.
_GRAD_DEVICE_HINTS = {
    "x.grad device": "where does CudaTransfer.backward send the gradient?",
    "x_gpu.is_leaf": "does x.cuda() have a creator?",
    "fc.weight.grad device": "does model.cuda() make new Variables, or move the parameters themselves?",
    "grad device of the Variable w was copied from": "which Variable is the leaf: the one .cuda() made?",
}


def _device_answer(value: Any) -> Any:
    """A prediction in the template's form ("cpu", "cuda:0" or "cuda", True or False), or None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("cpu", "cuda", "cuda:0"):
        return "cuda:0" if value.strip().lower() == "cuda" else value.strip().lower()
    return None


@exercise("ch09.grad_device", title="Predict where gradients live after .cuda()", points=2)
def check_grad_device(ns: dict) -> None:
    require(ns, "predicted")
    expect_written_by_hand(ns, "predicted")
    predicted = ns["predicted"]
    if not isinstance(predicted, dict):
        raise CheckFailed(
            "predicted",
            "a dict with one answer per key",
            type(predicted).__name__,
            'keep the template\'s dict: predicted = {"x.grad device": ..., ...}, one answer per key',
        )
    unfilled = [key for key in _GRAD_DEVICE_ANSWERS if predicted.get(key) is ...]
    if unfilled:  # the template's values, still ...
        keys = ", ".join(repr(key) for key in unfilled)
        raise CheckFailed(
            NOT_SOLVED,
            hint=f'fill in the values: replace the ... of {keys} in predicted with "cpu", "cuda:0", '
            "True or False",
        )
    for key, answer in _GRAD_DEVICE_ANSWERS.items():
        if key not in predicted:
            raise CheckFailed(f"predicted[{key!r}]", "an answer", "missing", "keep every key of the template")
        kind = "True or False" if isinstance(answer, bool) else '"cpu" or "cuda:0"'
        if type(_device_answer(predicted[key])) is not type(answer):
            hint = quoted(predicted[key]) or f"answer with {kind}"
            raise CheckFailed(f"predicted[{key!r}]", kind, predicted[key], hint)
    wrong = [key for key, answer in _GRAD_DEVICE_ANSWERS.items() if _device_answer(predicted[key]) != answer]
    if wrong:  # not which ones: for questions with two answers each, that would be the answer
        raise CheckFailed(
            predictions_wrong(len(wrong), len(_GRAD_DEVICE_ANSWERS)),
            SECRET,
            {key: predicted[key] for key in _GRAD_DEVICE_ANSWERS},
            "; ".join(f"{key}: {hint}" for key, hint in _GRAD_DEVICE_HINTS.items()),
        )


# --- ch09.one_hot ------------------------------------------------------------------------------------


_ONE_HOT_HINT = (
    "row i holds a single 1, in column labels[i], and zeros elsewhere; make the arrays with "
    "xp = get_array_module(labels), in float32"
)


def _one_hot_case(one_hot: Any, case: str, labels: list, num_classes: int) -> None:
    with running(case):
        got = one_hot(np.array(labels, dtype=np.int64), num_classes)
    if got is not None and not isinstance(got, np.ndarray):  # (got.dtype below would fail, blaming you)
        raise CheckFailed(
            case,
            "a plain array",
            "a Variable" if isinstance(got, Variable) else f"a {type(got).__name__}",
            "one_hot returns a plain array, not a Variable: return the array"
            if isinstance(got, Variable)
            else "one_hot returns the array itself, made with xp (not a list, not .tolist())",
        )
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
    labels = FakeGpuArray(np.array([0, 2, 2, 1]))
    try:
        with (
            fake_gpu(host_copies=False, host_numbers=False),
            running("labels [0, 2, 2, 1] on a (simulated) GPU"),
        ):
            got = one_hot(labels, 3)
    except TypeError as error:
        if str(error).startswith(HOST_COPY):
            raise CheckFailed(
                "labels on a (simulated) GPU: your code copied them to the host",
                "arrays of the labels' array module (cupy), on the GPU",
                f"TypeError: {error}",
                "build the result where the labels are, with xp = get_array_module(labels), from whole "
                "arrays: a copy to the host and back (of the labels, or of one label at a time with int(), "
                ".item() or an if) is the slow path this exercise avoids",
            ) from None
        if not str(error).startswith((MIXED_DEVICES, IMPLICIT_CONVERSION)):
            raise
        raise CheckFailed(
            "labels on a (simulated) GPU: your code mixed a NumPy array with the GPU's",
            "arrays of the labels' array module (cupy) only",
            f"TypeError: {error}",
            "a GPU array cannot meet or become a NumPy array (np.asarray, np.eye(k)[labels], ...): "
            "create every array with xp = get_array_module(labels)",
        ) from None
    if not isinstance(got, FakeGpuArray):
        raise CheckFailed(
            "labels on a (simulated) GPU: the result must be on the same device",
            "an array of the labels' array module (cupy)",
            f"{type(got).__module__}.{type(got).__name__}",
            "create arrays with xp = get_array_module(labels), not with np directly",
        )
    expected = np.eye(3, dtype=np.float32)[[0, 2, 2, 1]]
    expect_close("labels on a (simulated) GPU: the values", got.get(), expected, _ONE_HOT_HINT)
