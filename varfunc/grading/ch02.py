"""Checks for chapter 02, Variables and leaves: making parameters, telling leaves apart, predicting .grad."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..leaf import Leaf
from ..variable import Variable
from .core import (
    SECRET,
    CheckFailed,
    as_numbers,
    exercise,
    expect_close,
    expect_equal,
    quoted,
    require,
    running,
)
from .predictions import expect_written_by_hand


def _param_cases() -> list[tuple[str, Any, np.dtype, np.ndarray]]:
    """(case, input, expected dtype, expected values) for make_param."""
    float32 = np.array([[0.5, -1.5], [2.0, 4.0]], dtype=np.float32)
    float16 = np.array([0.25, -3.0, 8.0], dtype=np.float16)
    float64 = np.array([[1.5, -2.0, 0.25], [3.0, 0.0, -7.5]])
    f64 = np.dtype(np.float64)
    return [
        ("make_param([1, 2, 3]) (a list of ints)", [1, 2, 3], f64, np.array([1.0, 2.0, 3.0])),
        ("make_param([0.5, -2.0]) (a list of floats)", [0.5, -2.0], f64, np.array([0.5, -2.0])),
        ("make_param(3) (a Python int)", 3, f64, np.array(3.0)),
        ("make_param(np.array([True, False]))", np.array([True, False]), f64, np.array([1.0, 0.0])),
        ("make_param of a 2x2 float32 array", float32, np.dtype(np.float32), float32.copy()),
        ("make_param of a float16 array", float16, np.dtype(np.float16), float16.copy()),
        ("make_param(np.arange(4))", np.arange(4), f64, np.arange(4.0)),
        ("make_param of a uint8 array", np.array([1, 200], dtype=np.uint8), f64, np.array([1.0, 200.0])),
        ("make_param of an int32 array", np.array([-3, 7], dtype=np.int32), f64, np.array([-3.0, 7.0])),
        ("make_param of a 2x3 float64 array", float64, f64, float64.copy()),
        ("make_param(np.array(2.0)) (a 0-d float64 array)", np.array(2.0), f64, np.array(2.0)),
    ]


@exercise(
    "ch02.make_param",
    title="make_param(values): a leaf that requires grad, float data, its own memory",
    points=2,
    needs=("make_param",),
)
def check_make_param(ns: dict) -> None:
    """make_param must return a float leaf requiring grad that owns its memory, for many kinds of input."""
    make_param = ns["make_param"]
    for case, values, dtype, expected in _param_cases():
        with running(case):
            param = make_param(values)
        if not isinstance(param, Variable):
            raise CheckFailed(case, "a Variable", type(param).__name__, "return Variable(...)")
        expect_equal(
            f"{case}: dtype",
            param.dtype,
            dtype,
            "integer and boolean data become float64; floating-point data keeps its dtype",
        )
        expect_close(f"{case}: values", param.data, expected, "the values must not change")
        expect_equal(
            f"{case}: requires_grad",
            param.requires_grad,
            True,
            "a parameter needs a gradient: pass requires_grad=True",
        )
        expect_equal(f"{case}: creator is a Leaf", isinstance(param.creator, Leaf), True)
        if isinstance(values, np.ndarray) and np.shares_memory(param.data, values):
            raise CheckFailed(
                f"{case}: memory",
                "an array of its own",
                "the caller's array (changing one would change the other)",
                "Variable(array) wraps the array without copying: copy it first (np.array(values, ...))",
            )


@exercise(
    "ch02.describe",
    title="describe(v): leaf that requires grad, leaf without grad, volatile, or computed",
    points=2,
    needs=("describe",),
)
def check_describe(ns: dict) -> None:
    """describe must tell the four kinds of Variable apart, on leaves, volatile and computed Variables."""
    describe = ns["describe"]
    x = Variable(np.array([1.0, 2.0]))
    constant = Variable(np.array([1.0, 2.0]), requires_grad=False)
    volatile = Variable(np.array([1.0]), volatile=True)
    switched_off = Variable(np.array([3.0]))
    switched_off.requires_grad = False
    frozen = Variable(np.array([1.0, -1.0]))  # a .grad from a backward, then frozen: the .grad stays
    (frozen * 2).sum().backward()
    frozen.requires_grad = False
    cases = [
        ("a float leaf", x, "leaf, requires grad"),
        ("an int leaf", Variable(np.array([1, 2])), "leaf, no grad"),
        ("a float leaf made with requires_grad=False", constant, "leaf, no grad"),
        ("a leaf whose requires_grad was set to False", switched_off, "leaf, no grad"),
        ("a leaf with a .grad from a backward, then requires_grad set to False", frozen, "leaf, no grad"),
        ("a volatile Variable", volatile, "volatile"),
        ("volatile * 2 (computed from a volatile Variable)", volatile * 2, "volatile"),
        ("x * 2", x * 2, "computed by MulConstant"),
        ("x + x", x + x, "computed by Add"),
        ("constant * 2 (computed, but needs no grad)", constant * 2, "computed by MulConstant"),
    ]
    for case, variable, expected in cases:
        with running(f"describe({case})"):
            got = describe(variable)
        expect_equal(f"describe({case})", got, expected, _describe_hint(variable, got, expected))


def _describe_hint(v: Variable, got: object, expected: str) -> str:
    """What the Variable of a failed case is made of, to compare with what describe made of it; or
    that describe found the right kind but wrote it another way."""
    if got is None:
        return "got None: did describe forget `return`? (print shows a string; return gives it back)"
    if not isinstance(got, str):
        return "return one of the four strings"
    if " ".join(got.split()).lower() == expected.lower():
        return f"right kind; write exactly {expected!r}, as the exercise spells it (lower case)"
    name = type(v.creator).__name__
    if expected.startswith("computed by") and got.lower().startswith("computed by"):
        if name in got:
            return "right kind; use the class name alone, type(v.creator).__name__, with nothing after it"
        return "right kind; name the creator by its class in the kit, type(v.creator).__name__"
    article = "an" if name[0] in "AEIOU" else "a"
    creator = "None" if v.creator is None else f"{article} {name}"
    return (
        f"this Variable has volatile={v.volatile}, requires_grad={v.requires_grad} and creator "
        f"{creator}: which of these decides what it is?"
    )


def _run_prediction_code() -> tuple[Any, Any]:
    """Run the chapter's prediction code and return (a.grad, b.grad)."""
    a = Variable(np.array([1.0, 2.0]))
    a.backward(np.array([3.0, 4.0]))
    a.backward(np.array([0.5, 0.5]))
    b = Variable(np.array([1, 2]))
    return a.grad, b.grad


@exercise("ch02.predict_grad", title="predict a.grad and b.grad before running the code", points=1)
def check_predict_grad(ns: dict) -> None:
    """The student's predictions must match what the kit computes for the chapter's code."""
    require(ns, "predicted_a_grad", "predicted_b_grad")
    expect_written_by_hand(ns, "predicted_a_grad", "predicted_b_grad")
    a_grad, b_grad = _run_prediction_code()
    predicted_a, predicted_b = ns["predicted_a_grad"], ns["predicted_b_grad"]
    if predicted_a is None:
        raise CheckFailed("a.grad", SECRET, None, "a holds floats, so it requires grad and has a .grad")
    expect_close(
        "a.grad after the two backward calls",
        as_numbers("predicted_a_grad", predicted_a),
        a_grad,
        "each backward call adds into .grad; it does not replace it",
        secret=True,
    )
    if b_grad is None and predicted_b is not None:
        raise CheckFailed(
            "b.grad",
            SECRET,
            predicted_b,
            quoted(predicted_b) or "what dtype does b hold, and does a Variable of that dtype require grad?",
        )
