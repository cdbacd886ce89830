"""Checks for chapter 05 (gradients of operations): sigmoid from its output, broadcasting, matmul."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..errors import GradcheckError
from ..function import Function
from ..functions import utils
from ..functions.utils import sum_to_shape
from ..gradcheck import gradcheck
from ..variable import Variable
from .core import CheckFailed, exercise, expect_close, expect_equal


def _gradcheck(case: str, fn: Any, inputs: list, hint: str) -> None:
    """CheckFailed with gradcheck's first table lines when backward disagrees with central differences."""
    try:
        gradcheck(fn, inputs)
    except GradcheckError as error:
        lines = str(error).splitlines()
        raise CheckFailed(case, "gradcheck passes", " | ".join(lines[:3]), hint) from None


@exercise("ch05.sigmoid", title="MySigmoid: backward from the saved output", points=2, needs=("MySigmoid",))
def check_sigmoid(ns: dict) -> None:
    """Forward values, the output saved (not the input), and gradcheck on several shapes."""
    MySigmoid = ns["MySigmoid"]
    a = np.array([-3.0, -0.5, 0.0, 2.5])
    y = MySigmoid()(Variable(a))
    expect_close("forward of [-3, -0.5, 0, 2.5]", y, 1 / (1 + np.exp(-a)), "sigmoid(a) = 1 / (1 + exp(-a))")
    expect_equal(
        "dtype of forward's result for float64 input",
        str(y.dtype),
        "float64",
        "keep the input's dtype (gradcheck needs float64): no float32 constants or casts in forward",
    )
    saved = y.creator.saved_tensors
    expect_equal("number of saved tensors", len(saved), 1, "save exactly one array: the output")
    expect_close(
        "the saved tensor is the output y",
        saved[0],
        y.data,
        "call self.save_for_backward(y) on the result of forward, not on its input",
    )
    _check_backward_reads_saved_tensors(MySigmoid, a)
    rng = np.random.default_rng(5)
    for shape in [(3, 4), (5,), ()]:
        x = rng.normal(size=shape) * 2
        _gradcheck(
            f"gradcheck on shape {shape}",
            lambda v: MySigmoid()(v),
            [x],
            "d sigmoid / da = y (1 - y), multiplied by grad_output",
        )


def _check_backward_reads_saved_tensors(MySigmoid: Any, a: np.ndarray) -> None:
    """Backward's gradient once every float array forward kept as an attribute is NaN: it must come
    from self.saved_tensors alone."""
    x = Variable(a)
    fn = MySigmoid()
    y = fn(x)
    kept = [name for name, value in vars(fn).items() if _is_own_float_array(name, value)]
    if not kept:
        return
    for name in kept:
        setattr(fn, name, np.full_like(getattr(fn, name), np.nan))
    y.backward(np.ones_like(a))
    expect_close(
        f"backward after forward, with {', '.join('self.' + name for name in kept)} set to NaN",
        x.grad,
        y.data * (1 - y.data),
        "compute the gradient from self.saved_tensors only, not from attributes set in forward",
    )


def _is_own_float_array(name: str, value: Any) -> bool:
    """True for a float array the student's Function set as an attribute (not a kit graph field)."""
    return not hasattr(Function, name) and isinstance(value, np.ndarray) and value.dtype.kind == "f"


class _CalledTheKitsSum(Exception):
    """Raised when the student's code calls the package's sum_to_shape during the check."""


def _refuse(grad: Any, shape: Any) -> Any:
    code = sys._getframe(1).f_code  # the caller: my_sum_to_shape, or BroadcastMul.backward
    raise _CalledTheKitsSum(getattr(code, "co_qualname", code.co_name))


@contextmanager
def _without_sum_to_shape(ns: dict) -> Iterator[None]:
    """While it runs, the package's sum_to_shape raises, under every name the student's code can reach.

    The kit's modules that imported it (and the student's namespace, for the chapter's import) get the
    refusal too; the check's own reference (this module's sum_to_shape) is left alone.
    """
    kit = utils.sum_to_shape
    modules = [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("varfunc.") and not name.startswith("varfunc.grading") and m is not None
    ]
    patched = [(vars(m), key) for m in modules for key, value in list(vars(m).items()) if value is kit]
    patched += [(ns, key) for key, value in list(ns.items()) if value is kit]
    for names, key in patched:
        names[key] = _refuse
    try:
        yield
    finally:
        for names, key in patched:
            names[key] = kit


@exercise(
    "ch05.broadcast",
    title="Summing gradients back to the input's shape",
    points=3,
    needs=("my_sum_to_shape", "BroadcastMul"),
)
def check_broadcast(ns: dict) -> None:
    """my_sum_to_shape against the package's sum_to_shape, then BroadcastMul under gradcheck."""
    try:
        with _without_sum_to_shape(ns):
            _check_broadcast(ns["my_sum_to_shape"], ns["BroadcastMul"])
    except _CalledTheKitsSum as call:
        caller = str(call)
        raise CheckFailed(
            f"{caller} called the package's sum_to_shape",
            "your own sum over the dims",
            "a call to sum_to_shape",
            "write the sum yourself in my_sum_to_shape: grad.sum(axis=..., keepdims=...)"
            if caller == "my_sum_to_shape"
            else f"call your my_sum_to_shape in {caller}, not the package's sum_to_shape",
        ) from None


def _check_broadcast(my_sum_to_shape: Any, BroadcastMul: Any) -> None:
    """my_sum_to_shape against references computed first, then BroadcastMul under gradcheck."""
    rng = np.random.default_rng(6)
    cases = [
        ((3, 4), (4,)),
        ((3, 4), (3, 1)),
        ((3, 4), (1, 4)),
        ((2, 3, 4), (3, 1)),
        ((2, 3, 4), (1, 1, 4)),
        ((3, 4), ()),
        ((3, 4), (3, 4)),
    ]
    grads = [rng.normal(size=grad_shape) for grad_shape, _ in cases]
    references = [sum_to_shape(grad, shape) for grad, (_, shape) in zip(grads, cases)]
    for (grad_shape, shape), grad, reference in zip(cases, grads, references):
        expect_close(
            f"my_sum_to_shape(grad of shape {grad_shape}, {shape})",
            my_sum_to_shape(grad, shape),
            reference,
            "sum over the extra leading dims, then (keeping dims) over dims where shape has 1",
        )
    pairs = [((3, 1), (4,)), ((2, 3), ()), ((2, 3), (2, 3)), ((1, 3), (2, 1)), ((4,), (2, 3, 4))]
    for shape_a, shape_b in pairs:
        a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
        expect_close(
            f"BroadcastMul forward, shapes {shape_a} and {shape_b}",
            BroadcastMul()(Variable(a), Variable(b)),
            a * b,
            "forward is a * b",
        )
        _gradcheck(
            f"BroadcastMul gradcheck, shapes {shape_a} and {shape_b}",
            lambda u, v: BroadcastMul()(u, v),
            [a, b],
            "grad_a = g * b and grad_b = g * a, each summed back to its input's shape",
        )


@exercise("ch05.matmul", title="MyMatmul: the two matrix gradients", points=3, needs=("MyMatmul",))
def check_matmul(ns: dict) -> None:
    """gradcheck on square and non-square matrices; None for an input that needs no grad."""
    MyMatmul = ns["MyMatmul"]
    rng = np.random.default_rng(7)
    for n, m, p in [(2, 3, 4), (3, 3, 3), (1, 5, 1), (4, 2, 3)]:
        a, b = rng.normal(size=(n, m)), rng.normal(size=(m, p))
        expect_close(f"forward ({n}x{m}) @ ({m}x{p})", MyMatmul()(Variable(a), Variable(b)), a @ b)
        _gradcheck(
            f"gradcheck ({n}x{m}) @ ({m}x{p})",
            lambda u, v: MyMatmul()(u, v),
            [a, b],
            "each gradient has its input's shape: grad_a is (n x m), grad_b is (m x p); which product "
            "of g (n x p) with the other input, transposed or not, gives that shape?",
        )
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    for needs_a, needs_b in [(True, False), (False, True)]:
        fn = MyMatmul()
        out = fn(Variable(a, requires_grad=needs_a), Variable(b, requires_grad=needs_b))
        grads = fn.backward(np.ones(out.shape))
        if not isinstance(grads, tuple) or len(grads) != 2:
            raise CheckFailed(
                f"backward called directly, with only input {0 if needs_a else 1} requiring grad",
                "a tuple of two gradients (grad_a, grad_b)",
                repr(grads) if not isinstance(grads, tuple) else f"a tuple of {len(grads)}",
                "return one gradient per input, None for the input that does not need one",
            )
        for index, needed in enumerate((needs_a, needs_b)):
            if not needed:
                expect_equal(
                    f"backward's gradient for input {index} when it does not require grad",
                    type(grads[index]).__name__,
                    "NoneType",
                    "return None where self.needs_input_grad[i] is False (skip the product)",
                )
