"""Checks for chapter 05 (gradients of operations): sigmoid from its output, broadcasting, matmul."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..functions import utils
from ..functions.pointwise import Sigmoid
from ..functions.utils import sum_to_shape
from ..variable import Variable
from .core import (
    MISSING_GRAD_OUTPUT,
    ROUNDED_TO_FLOAT32,
    CheckFailed,
    exercise,
    expect_close,
    expect_equal,
    kit_code_refused,
    running,
)
from .in_place import expect_in_place_changes_caught, expect_nodes_independent
from .numerical import cell_call, gradcheck_case
from .skipped import backward_skipping_unneeded


@exercise("ch05.sigmoid", title="MySigmoid: backward from the saved output", points=2, needs=("MySigmoid",))
def check_sigmoid(ns: dict) -> None:
    """Forward values and dtype, also far from 0, the output saved (not the input), gradcheck on several
    shapes, and the gradient far from 0; the kit's Sigmoid is switched off meanwhile."""
    hint = "write the sigmoid and its derivative yourself, with NumPy (np.exp)"
    with kit_code_refused("MySigmoid", hint, (Sigmoid, "apply"), (Sigmoid, "derivative")):
        _check_sigmoid(ns["MySigmoid"])


def _check_sigmoid(MySigmoid: Any) -> None:
    a = np.array([-3.0, -0.5, 0.0, 2.5])
    with running("forward of [-3, -0.5, 0, 2.5]"):
        y = MySigmoid()(Variable(a))
    expect_close("forward of [-3, -0.5, 0, 2.5]", y, 1 / (1 + np.exp(-a)), "sigmoid(a) = 1 / (1 + exp(-a))")
    expect_equal(
        "dtype of forward's result for float64 input",
        str(y.dtype),
        "float64",
        "keep the input's dtype (gradcheck needs float64): no float32 constants or casts in forward",
    )
    far = np.array([-30.0, -8.0, 8.0, 30.0])  # a clip at +-5 or a cut-off to 0 and 1 is wrong here
    with running("forward of [-30, -8, 8, 30]"):
        y_far = MySigmoid()(Variable(far))
    expect_close(
        "forward of [-30, -8, 8, 30]",
        y_far,
        np.exp(-np.logaddexp(0, -far)),
        "far from 0 the sigmoid comes close to 0 and 1 but never reaches them: no clipping or cut-off of a",
        atol=1e-15,  # errors of about 1e-16 near 0 pass, as 0.5 * (1 + tanh(a / 2)) makes; 0 does not
        at=("a", far),
    )
    huge = np.array([-1000.0, 1000.0])  # exp(a) overflows to inf
    with np.errstate(all="ignore"), running("forward of [-1000, 1000]"):  # 1 / (1 + inf) warns, rightly 0
        y_huge = MySigmoid()(Variable(huge))
    expect_close("forward of [-1000, 1000]", y_huge, [0.0, 1.0], _OVERFLOW, at=("a", huge))
    with running("forward of a float32 input"):
        y32 = MySigmoid()(Variable(a.astype(np.float32)))
    expect_equal(
        "dtype of forward's result for float32 input",
        str(y32.dtype),
        "float32",
        "keep the input's dtype: a float32 input gives a float32 result, as the kit's Sigmoid does (no "
        "float64 casts in forward)",
    )
    saved = y.creator.saved_tensors
    expect_equal("number of saved tensors", len(saved), 1, "save exactly one array: the output")
    expect_close(
        "the saved tensor is the output y",
        saved[0],
        y.data,
        "call self.save_for_backward(y) on the result of forward, not on its input",
    )
    rng = np.random.default_rng(5)
    for shape in [(3, 4), (5,), ()]:
        x = rng.normal(size=shape) * 2
        gradcheck_case(
            f"gradcheck on shape {shape}",
            lambda v: MySigmoid()(v),
            [x],
            _sigmoid_hint(MySigmoid),
            cell_call("MySigmoid", shape),
        )
    _check_backward_reads_saved_tensors(MySigmoid, a)
    _check_gradient_far_from_0(MySigmoid)


_FAR = np.array([-1000.0, -30.0, -20.0, -8.0, 8.0, 20.0, 30.0, 1000.0])
_FAR_TEXT = "[" + ", ".join(f"{v:g}" for v in _FAR) + "]"
_OVERFLOW = (
    "exp(a) overflows to inf for |a| past 709, and inf / inf is nan: at a = 1000 the sigmoid is 1 and at "
    "a = -1000 it is 0 (1 / (1 + inf) is 0, a number; only inf / inf is nan)"
)


def _check_gradient_far_from_0(MySigmoid: Any) -> None:
    """y (1 - y) where it is tiny, to its digits: a clip of the saved y (against 0 and 1) is wrong there."""
    x = Variable(_FAR.copy())
    with np.errstate(all="ignore"), running(f"gradient on {_FAR_TEXT}"):  # 1 / (1 + inf) warns, rightly 0
        MySigmoid()(x).backward(np.ones_like(_FAR))
    expect_close(
        f"gradient on {_FAR_TEXT}",
        x.grad,
        np.exp(-np.logaddexp(0, -_FAR) - np.logaddexp(0, _FAR)),  # y (1 - y), to its last digits
        _OVERFLOW
        if np.isnan(np.asarray(x.grad, dtype=float)).any()
        else "far from 0 the slope y (1 - y) is tiny but exact (2.06e-9 at a = 20, 9.36e-14 at a = -30): "
        "compute it from the saved y as it is, with no clipping or rounding of y",
        rtol=1e-6,
        atol=1e-15,  # 1 - y loses digits near y = 1 (a = 30): about 1e-16, whatever the formula
        at=("a", _FAR),
    )


# Common wrong gradients, wrong(y, g) for the output y and grad_output g, and what each says.
_SIGMOID_MISTAKES = [
    (lambda y, g: g * y, "the factor (1 - y) is missing"),
    (lambda y, g: g * (1 - y * y), "1 - y² is tanh's derivative, not the sigmoid's"),
    (lambda y, g: y * (1 - y), MISSING_GRAD_OUTPUT),
    (
        lambda y, g: -g * y * (1 - y),
        "the sign is wrong: the sigmoid rises everywhere, so its slope is positive",
    ),
]


def _sigmoid_hint(MySigmoid: Any) -> str:
    """What MySigmoid's gradient on a few values says about its mistake, or the chapter's formula."""
    a, g = np.array([-1.5, -0.25, 0.5, 2.0]), np.array([0.5, -1.0, 2.0, 1.5])
    x = Variable(a.copy())
    try:
        MySigmoid()(x).backward(g.copy())
    except Exception:  # noqa: BLE001 - gradcheck reports the error itself
        pass
    else:
        y = 1 / (1 + np.exp(-a))
        for wrong, says in _SIGMOID_MISTAKES:
            if x.grad.shape == a.shape and np.allclose(x.grad, wrong(y, g)):
                return says
    return "d sigmoid / da = y (1 - y), multiplied by grad_output"


def _check_backward_reads_saved_tensors(MySigmoid: Any, a: np.ndarray) -> None:
    """Backward must compute from self.saved_tensors alone: after forward, the saved output is swapped
    for other values a sigmoid gives, y2, and the gradient must be y2 (1 - y2)."""
    case = "backward computes its gradient from self.saved_tensors"
    x = Variable(a)
    with running(case):
        y = MySigmoid()(x)
        other = 1 / (1 + np.exp(-(a + 1.0)))  # not -a: y (1 - y) is the same there
        ((_, counter, version),) = y.creator._saved  # (array, version counter, version when saved)
        y.creator._saved = ((other, counter, version),)
        y.backward(np.ones_like(a))
    if np.allclose(x.grad, other * (1 - other)):
        return
    seen = 1 / (1 + np.exp(-a))
    if np.allclose(x.grad, seen * (1 - seen)):
        raise CheckFailed(
            case,
            "the gradient of the array self.saved_tensors holds",
            "the gradient of the values forward saw, kept somewhere else",
            "compute the gradient from self.saved_tensors only, not from the input or output kept elsewhere",
        )
    expect_close(
        case, x.grad, other * (1 - other), "compute the gradient from the array in self.saved_tensors"
    )


@exercise(
    "ch05.broadcast",
    title="Summing gradients back to the input's shape",
    points=3,
    needs=("my_sum_to_shape", "BroadcastMul"),
)
def check_broadcast(ns: dict) -> None:
    """my_sum_to_shape against the package's sum_to_shape, then BroadcastMul under gradcheck."""
    hint = (
        "write the sum yourself in my_sum_to_shape (grad.sum(axis=..., keepdims=...)), and call "
        "my_sum_to_shape in BroadcastMul.backward"
    )
    _check_broadcast(ns["my_sum_to_shape"], ns["BroadcastMul"], hint)


_NEIGHBOUR_DIM = (
    "the last dim, stretched from 1 to 4, was not summed: whether dim i is summed depends on shape[i] and "
    "grad.shape[i], the same i (after the leading dims are summed away), not on another dim of grad"
)


def _check_broadcast(my_sum_to_shape: Any, BroadcastMul: Any, hint: str) -> None:
    """my_sum_to_shape against references computed first, then BroadcastMul under gradcheck, while the
    package's sum_to_shape is switched off."""
    rng = np.random.default_rng(6)
    cases = [
        ((3, 4), (4,)),
        ((3, 4), (3, 1)),
        ((3, 4), (1, 4)),
        ((2, 1, 1, 4), (1, 1, 1)),  # size-1 dims of grad beside a stretched one: each dim decides alone
        ((2, 3, 4), (1, 1, 4)),
        ((3, 4), ()),
        ((3, 4), (3, 4)),
    ]
    grads = [rng.normal(size=grad_shape) for grad_shape, _ in cases]
    references = [sum_to_shape(grad, shape) for grad, (_, shape) in zip(grads, cases)]
    switched_off = "my_sum_to_shape and BroadcastMul, with the package's sum_to_shape switched off"
    with kit_code_refused(switched_off, hint, (utils, "sum_to_shape")):
        for (grad_shape, shape), grad, reference in zip(cases, grads, references):
            case = f"my_sum_to_shape(grad of shape {grad_shape}, {shape})"
            with running(case, f"my_sum_to_shape(np.ones({grad_shape}), {shape})"):
                got = my_sum_to_shape(grad, shape)
            expect_close(case, got, reference, _sum_hint(grad_shape, grad, got))
        pairs = [((3, 1), (4,)), ((2, 3), ()), ((2, 3), (2, 3)), ((1, 3), (2, 1)), ((4,), (2, 3, 4))]
        for shape_a, shape_b in pairs:
            a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
            case = f"BroadcastMul forward, shapes {shape_a} and {shape_b}"
            with running(case, cell_call("BroadcastMul", shape_a, shape_b)):
                got = BroadcastMul()(Variable(a), Variable(b))
            expect_close(case, got, a * b, "forward is a * b")
            gradcheck_case(
                f"BroadcastMul gradcheck, shapes {shape_a} and {shape_b}",
                lambda u, v: BroadcastMul()(u, v),
                [a, b],
                "grad_a = g * b and grad_b = g * a, each summed back to its input's shape",
                cell_call("BroadcastMul", shape_a, shape_b),
            )
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3,))
    expect_nodes_independent(  # after the switch-off: the sums and Add of this graph call sum_to_shape
        "BroadcastMul",
        lambda u, v: BroadcastMul()(u, v),
        [a, b],
        [a + 1.0, b - 2.0],
        lambda u, v: [np.ones_like(u) * v, u.sum(axis=0)],
    )


def _sum_hint(grad_shape: tuple, grad: np.ndarray, got: Any) -> str:
    """_NEIGHBOUR_DIM where got is what leaving the stretched last dim of (2, 1, 1, 4) unsummed gives."""
    if grad_shape == (2, 1, 1, 4):
        try:
            unsummed = np.asarray(got.data if isinstance(got, Variable) else got, dtype=float)
        except (TypeError, ValueError):
            unsummed = None
        if unsummed is not None and unsummed.shape == (1, 1, 4) and np.allclose(unsummed, grad.sum(axis=0)):
            return _NEIGHBOUR_DIM
    return "sum over the extra leading dims, then (keeping dims) over dims where shape has 1"


_MATMUL_SHAPES = (
    "each gradient has its input's shape: grad_a is (n x m), grad_b is (m x p); which product of g "
    "(n x p) with the other input, transposed or not, gives that shape?"
)


@exercise("ch05.matmul", title="MyMatmul: the two matrix gradients", points=3, needs=("MyMatmul",))
def check_matmul(ns: dict) -> None:
    """gradcheck on square and non-square matrices, the dtype of a float32 product, None for an input
    that needs no grad, and two nodes in one graph."""
    MyMatmul = ns["MyMatmul"]
    rng = np.random.default_rng(7)
    for n, m, p in [(2, 3, 4), (3, 3, 3), (1, 5, 1), (4, 2, 3)]:
        a, b = rng.normal(size=(n, m)), rng.normal(size=(m, p))
        with running(f"forward ({n}x{m}) @ ({m}x{p})", cell_call("MyMatmul", (n, m), (m, p))):
            got = MyMatmul()(Variable(a), Variable(b))
        expect_close(f"forward ({n}x{m}) @ ({m}x{p})", got, a @ b, "forward is the matrix product a @ b")
        gradcheck_case(
            f"gradcheck ({n}x{m}) @ ({m}x{p})",
            lambda u, v: MyMatmul()(u, v),
            [a, b],
            _MATMUL_SHAPES,
            cell_call("MyMatmul", (n, m), (m, p)),
            _MATMUL_SHAPES,
        )
    case = "forward (2x3) @ (3x4) of float32 matrices"
    with running(case):
        got = MyMatmul()(Variable(np.ones((2, 3), np.float32)), Variable(np.ones((3, 4), np.float32)))
    expect_equal(
        f"{case}: dtype of the result",
        str(got.dtype),
        "float32",
        "keep the inputs' dtype: float32 matrices give a float32 product, as the kit's matmul does (no "
        "float64 casts in forward)",
    )
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    u, v = Variable(a.copy()), Variable(b.copy())
    case = "gradients for float64 (2x3) @ (3x4), to float64's last digits"
    with running(case):
        MyMatmul()(u, v).backward(np.ones((2, 4)))
    for label, leaf, exact in (("a", u, np.ones((2, 4)) @ b.T), ("b", v, a.T @ np.ones((2, 4)))):
        expect_close(
            f"{case}: {label}.grad",
            leaf.grad,
            exact,
            ROUNDED_TO_FLOAT32,
            rtol=1e-12,
            atol=1e-14,
        )
    for needs_a, needs_b in [(True, False), (False, True)]:
        case = f"backward called directly, with only input {0 if needs_a else 1} requiring grad"
        fn = MyMatmul()
        snippet = (
            f"fn = MyMatmul(); fn(Variable(np.ones((2, 3)), requires_grad={needs_a}), "
            f"Variable(np.ones((3, 4)), requires_grad={needs_b})); fn.backward(np.ones((2, 4)))"
        )
        with running(case, snippet):
            inputs = [Variable(a, requires_grad=needs_a), Variable(b, requires_grad=needs_b)]
            out = fn(*inputs)
            grads = backward_skipping_unneeded(case, fn, inputs, (1, 0), np.ones(out.shape))  # a's reads b
        if not isinstance(grads, tuple) or len(grads) != 2:
            raise CheckFailed(
                case,
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
    expect_in_place_changes_caught(
        "MyMatmul",
        lambda u, v: MyMatmul()(u, v),
        [a, b],
        [np.ones((2, 4)) @ b.T, a.T @ np.ones((2, 4))],
        ("a", "b"),
    )
    expect_nodes_independent(
        "MyMatmul",
        lambda u, v: MyMatmul()(u, v),
        [a, b],
        [a * 2 - 1, b + 0.5],
        lambda u, v: [np.ones((2, 4)) @ v.T, u.T @ np.ones((2, 4))],
    )
