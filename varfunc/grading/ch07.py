"""Checks for chapter 07 (writing your own Function): softplus, a straight-through clamp, needs_input_grad."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..variable import Variable
from .core import CheckFailed, exercise, expect_close, expect_equal, running
from .in_place import expect_in_place_changes_caught, expect_nodes_independent
from .numerical import cell_call, gradcheck_case
from .skipped import backward_skipping_unneeded

# 5 and 15: a forward that switches to a for a > t is right at these points only if t is past 15
WIDE = np.array([-1000.0, -30.0, -1.0, 0.0, 1.0, 5.0, 15.0, 30.0, 1000.0])
POINTS = "[" + ", ".join(f"{a:g}" for a in WIDE) + "]"


def _sigmoid(a: np.ndarray) -> np.ndarray:
    """sigmoid(a) = 1 / (1 + exp(-a)), accurate to the last digits from -1000 to 1000."""
    return np.exp(-np.logaddexp(0, -a))


@exercise("ch07.softplus", title="A numerically stable Softplus", points=3, needs=("Softplus",))
def check_softplus(ns: dict) -> None:
    """Finite, exact values and gradients from -1000 to 1000, then gradcheck on several shapes."""
    Softplus = ns["Softplus"]
    x = Variable(WIDE.copy())
    with np.errstate(all="ignore"):  # a naive answer overflows: report the wrong value, not a warning
        with running(f"forward on {POINTS}"):
            y = Softplus()(x)
        expect_close(
            f"forward on {POINTS}",
            y,
            np.logaddexp(0, WIDE),
            _reduced_max(y, WIDE)
            or "log(1 + exp(a)) overflows for large a, and np.log(1 + t) loses a tiny t (a = -30): "
            "use max(a, 0) + np.log1p(exp(-|a|))",
            rtol=1e-9,
            atol=1e-300,
            at=("a", WIDE),
        )
        with running(f"gradient on {POINTS} with grad_output = 2"):
            y.backward(np.full(WIDE.shape, 2.0))
        expect_close(
            f"gradient on {POINTS} with grad_output = 2",
            x.grad,
            2 * _sigmoid(WIDE),
            "d softplus / da = sigmoid(a), times grad_output; exp(a) / (1 + exp(a)) is inf / inf = nan "
            "for large a",
            rtol=1e-7,
            atol=1e-15,  # near 0, allow errors of about 1e-16, as 0.5 * (1 + tanh(a / 2)) makes
            at=("a", WIDE),
        )
        expect_close(
            f"gradient on {POINTS} for a float64 input: float64's digits, not float32's",
            x.grad,
            2 * _sigmoid(WIDE),
            "the gradient has only float32's 7 digits: compute the sigmoid in a's own dtype (no float32 "
            "cast)",
            rtol=1e-9,
            atol=1e-15,
            at=("a", WIDE),
        )
    rng = np.random.default_rng(8)
    for shape in [(5,), (2, 3), ()]:
        gradcheck_case(
            f"gradcheck on shape {shape}",
            lambda v: Softplus()(v),
            [rng.normal(size=shape) * 3],
            "multiply sigmoid(a) by grad_output",
            cell_call("Softplus", shape),
        )
    a32 = np.array([-200.0, -30.0, 0.0, 50.0, 100.0, 500.0], dtype=np.float32)
    x32 = Variable(a32.copy())
    with np.errstate(all="ignore"):
        with running("forward on the float32 input [-200, -30, 0, 50, 100, 500]"):
            y32 = Softplus()(x32)
        expect_close(
            "forward on the float32 input [-200, -30, 0, 50, 100, 500]",
            y32,
            np.logaddexp(0, a32),
            _reduced_max(y32, a32)
            or "float32 overflows past exp(88): switch to the stable form long before float64's 709",
            rtol=1e-6,
            at=("a", a32),
        )
        expect_equal(
            "dtype of forward's result for the float32 input [-200, -30, 0, 50, 100, 500]",
            str(y32.dtype),
            "float32",
            "keep the input's dtype: a float32 input gives a float32 result, as the kit's own ops do (no "
            "float64 casts in forward)",
        )
        with running("the gradient for the float32 input [-200, -30, 0, 50, 100, 500]"):
            y32.backward(np.ones(a32.shape, dtype=np.float32))
        expect_close(
            "the gradient for the float32 input [-200, -30, 0, 50, 100, 500]",
            x32.grad,
            _sigmoid(a32.astype(np.float64)),
            "sigmoid(a) times grad_output; in float32 exp overflows past 88: keep every value finite",
            rtol=1e-6,
            atol=1e-7,
        )
    a = np.array([-1.0, 0.5, 2.0])
    expect_in_place_changes_caught("Softplus", lambda v: Softplus()(v), [a], [_sigmoid(a)], inputs=("a",))
    expect_nodes_independent("Softplus", lambda v: Softplus()(v), [a], [a * 2 + 0.3], lambda v: [_sigmoid(v)])


_REDUCES = (
    "np.max(a, 0) reduces: it is the largest element of a (along axis 0), one number for all; the "
    "elementwise max(a, 0) is np.maximum(a, 0)"
)


def _reduced_max(y: Any, a: np.ndarray) -> str:
    """_REDUCES where forward's result y looks made with np.max(a, 0) (a's largest value, or one number),
    else ''."""
    if not isinstance(y, Variable):
        return ""  # expect_close says what else it is
    got = np.asarray(y.data)
    if got.shape == () and a.shape != ():
        return _REDUCES
    with np.errstate(all="ignore"):
        off = got - np.log1p(np.exp(-np.abs(a)))
    return _REDUCES if got.shape == a.shape and np.allclose(off, a.max()) else ""


@exercise(
    "ch07.clamp_ste",
    title="A clamp with a straight-through gradient and a non-differentiable mask",
    points=3,
    needs=("ClampSTE",),
)
def check_clamp_ste(ns: dict) -> None:
    """Values, the mask (0/1 in a's dtype, no grad), and the gradient passed straight through."""
    ClampSTE = ns["ClampSTE"]
    a = np.array([-2.0, -1.0, -0.5, 0.0, 0.7, 1.0, 3.0])  # -1 and 1 are on the bounds: inside
    x = Variable(a.copy())
    with running("ClampSTE(-1, 1)(x)"):
        result = ClampSTE(-1.0, 1.0)(x)
    if not isinstance(result, tuple) or len(result) != 2:
        got = f"a tuple of {len(result)}" if isinstance(result, tuple) else f"one {type(result).__name__}"
        raise CheckFailed(
            "ClampSTE(-1, 1)(x) returns two outputs",
            "(clamped, mask)",
            got,
            "forward returns 2 arrays: the clamped values and the mask (return clamped, mask)",
        )
    clamped, mask = result
    expect_close("clamped values", clamped, np.clip(a, -1.0, 1.0), "np.clip(a, lo, hi)")
    expect_equal(
        "mask values",
        mask.data.tolist(),
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        "1.0 where a was outside [lo, hi]; a value equal to lo or hi is inside",
    )
    expect_equal(
        "mask dtype",
        str(mask.dtype),
        "float64",
        "0.0 and 1.0 in a's dtype: convert the boolean mask with .astype(a.dtype)",
    )
    expect_equal(
        "mask.requires_grad",
        mask.requires_grad,
        False,
        "a float output requires grad unless forward calls self.mark_non_differentiable(mask)",
    )
    expect_equal(
        "clamped.requires_grad",
        clamped.requires_grad,
        True,
        "only the mask is non-differentiable: mark_non_differentiable(mask), not the clamped values",
    )
    weights = np.array([1.0, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0])  # signs mixed: abs(g) is no pass-through
    with running("backward of sum(clamped * [1, -2, 3, -4, 5, -6, 7])"):
        (clamped * weights).sum().backward()
    expect_close(
        "x.grad for sum(clamped * [1, -2, 3, -4, 5, -6, 7])",
        x.grad,
        weights,
        "straight-through: return grad_output unchanged, also where the value was clipped",
    )
    y = Variable(np.array([[0.5, 4.0], [-3.0, 0.0]], dtype=np.float32))
    with running("ClampSTE(-2, 2) on a 2x2 float32 input"):
        clamped, mask = ClampSTE(-2.0, 2.0)(y)
    expect_equal("mask dtype for a float32 input", str(mask.dtype), "float32", "a's dtype, not float")
    expect_equal(
        "clamped dtype for a float32 input",
        str(clamped.dtype),
        "float32",
        "the clamped values were cast to another dtype: keep a's dtype (np.clip keeps it)",
    )
    with running("backward of clamped.sum() + mask.sum() (2x2 float32 input)"):
        (clamped.sum() + mask.sum()).backward()
    expect_close(
        "y.grad when the mask is used too (2x2 float32 input)",
        y.grad,
        np.ones((2, 2)),
        "straight-through: the clamped output's gradient, unchanged; the mask adds nothing (no gradient)",
    )
    _check_two_clamps(ClampSTE)
    _check_values_on_decimal_bounds(ClampSTE)


def _whole(lo: float, hi: float) -> list:
    """(lo, hi) with either or both made whole numbers (int(), round(), floor or ceil)."""
    ways = (float, np.round, np.trunc, np.floor, np.ceil)
    pairs = {(float(f(lo)), float(g(hi))) for f, g in itertools.product(ways, ways)}
    return sorted(pairs - {(lo, hi)})


def _check_two_clamps(ClampSTE) -> None:
    """Bounds that are not whole numbers, in two instances made before either is called."""
    z = np.array([-0.75, -0.5, 0.1, 0.5, 2.0])
    bounds = [(-0.5, 0.25), (0.0, 1.0)]
    setup = (
        "ClampSTE(-0.5, 0.25) and ClampSTE(0, 1) both made, then each called on [-0.75, -0.5, 0.1, 0.5, 2]"
    )
    with running(setup):
        clamps = [ClampSTE(lo, hi) for lo, hi in bounds]
        results = [clamp(Variable(z.copy())) for clamp in clamps]
    for (lo, hi), other, (clamped, mask) in zip(bounds, bounds[::-1], results):
        case = f"{setup}: ClampSTE({lo:g}, {hi:g})"
        for what, got, made in (("clamped values", clamped, _clamped), ("mask", mask, _mask)):
            hint = _bounds_hint(np.asarray(getattr(got, "data", got)), made, z, (lo, hi), other)
            expect_close(f"{case}: {what}", got, made(z, lo, hi), hint)


def _check_values_on_decimal_bounds(ClampSTE) -> None:
    """Bounds 0.1 and 0.3, which binary floats do not hold exactly: a value equal to one is inside."""
    z = np.array([0.05, 0.1, 0.2, 0.3, 0.35])
    case = "ClampSTE(0.1, 0.3) on [0.05, 0.1, 0.2, 0.3, 0.35] (0.1 and 0.3 on the bounds): mask"
    with running(case):
        _, mask = ClampSTE(0.1, 0.3)(Variable(z.copy()))
    expect_close(
        case,
        mask,
        _mask(z, 0.1, 0.3),
        "a value on a bound came out outside: compare a with lo and hi themselves (a < lo, a > hi); "
        "arithmetic on the bounds, such as a midpoint and a half-width, rounds",
    )


def _clamped(z: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.clip(z, lo, hi)


def _mask(z: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return ((z < lo) | (z > hi)).astype(float)


def _bounds_hint(got: np.ndarray, made: Callable, z: np.ndarray, bounds: tuple, other: tuple) -> str:
    """Which bounds the result was made with (made(z, lo, hi) makes it): the other object's, or whole
    numbers."""
    (lo, hi), (other_lo, other_hi) = bounds, other

    def fits(pairs: list) -> bool:
        return any(got.shape == z.shape and np.allclose(got, made(z, *pair)) for pair in pairs)

    if fits([(other_lo, other_hi), (other_lo, hi), (lo, other_hi)]):  # the other's bounds, or one of them
        return (
            "it used a bound of the other ClampSTE: each object keeps its own lo and hi, on self (not on the "
            "class, where every ClampSTE shares them)"
        )
    if fits(_whole(lo, hi)):
        return "the bounds were made whole numbers: keep lo and hi as they are given"
    return "use this object's own lo and hi"


@exercise("ch07.mul_add", title="MulAdd: only the gradients that are needed", points=2, needs=("MulAdd",))
def check_mul_add(ns: dict) -> None:
    """gradcheck, then backward called directly with each pattern of needs_input_grad."""
    MulAdd = ns["MulAdd"]
    rng = np.random.default_rng(9)
    arrays = [rng.normal(size=(2, 3)) for _ in range(3)]
    with running("forward"):
        out = MulAdd()(*[Variable(v) for v in arrays])
    expect_close("forward", out, arrays[0] * arrays[1] + arrays[2], "forward returns a * b + c")
    gradcheck_case(
        "gradcheck, all inputs require grad",
        lambda a, b, c: MulAdd()(a, b, c),
        arrays,
        "each input's gradient is grad_output times the derivative of a * b + c with respect to that input",
    )
    g = rng.normal(size=(2, 3))
    expected = (g * arrays[1], g * arrays[0], g)
    for needs in itertools.product([True, False], repeat=3):
        if not any(needs):
            continue
        fn = MulAdd()
        case = f"backward with needs_input_grad={needs}"
        with running(case):
            inputs = [Variable(v, requires_grad=r) for v, r in zip(arrays, needs)]
            fn(*inputs)
            grads = backward_skipping_unneeded(case, fn, inputs, (1, 0, None), g)  # a's reads b; c's none
        if not isinstance(grads, tuple) or len(grads) != 3:
            raise CheckFailed(
                f"backward with needs_input_grad={needs}",
                "a tuple of 3",
                repr(type(grads)),
                "return one gradient per input, None for an input that needs none",
            )
        for index, (needed, grad) in enumerate(zip(needs, grads)):
            case = f"gradient {index} with needs_input_grad={needs}"
            if needed:
                expect_close(
                    case,
                    grad,
                    expected[index],
                    f"input {index} needs its gradient here: is the gradient in slot {index} of the tuple "
                    f"the one for input {index}, read with self.needs_input_grad[{index}]?",
                )
            elif grad is not None:
                raise CheckFailed(case, "None", type(grad).__name__, "return None where it is not needed")
    ones = np.ones((2, 3))
    expect_in_place_changes_caught(
        "MulAdd",
        lambda a, b, c: MulAdd()(a, b, c),
        arrays,
        [arrays[1], arrays[0], ones],
        inputs=("a", "b", "c"),
    )
    others = [v * 2 - 1 for v in arrays]
    expect_nodes_independent(
        "MulAdd", lambda a, b, c: MulAdd()(a, b, c), arrays, others, lambda a, b, c: [b, a, ones]
    )
