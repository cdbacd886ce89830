"""Chapter 03 checks: the student's ``Mul`` and ``Div`` Functions, forward and backward, with broadcasting."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..function import Function
from ..variable import Variable
from .core import (
    MISSING_GRAD_OUTPUT,
    ROUNDED_TO_FLOAT32,
    CheckFailed,
    exercise,
    expect_close,
    expect_equal,
    running,
)
from .in_place import expect_in_place_changes_caught, expect_nodes_independent

# (shape of a, shape of b): same shapes, a broadcast vector, both broadcast, a 0-d operand, b both
# extended with a leading dim and stretched along its size-1 dim (its gradient sums over both), and a
# stretched along two size-1 dims (its gradient sums over both, not only the first).
SHAPES = [
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((4, 1, 3), (2, 3)),
    ((), (2, 2)),
    ((2, 1, 4), (3, 1)),
    ((1, 3, 1), (2, 3, 4)),
]


def numerical_grads(f: Callable, a: np.ndarray, b: np.ndarray, g: np.ndarray, eps: float = 1e-6) -> tuple:
    """Central differences of sum(g * f(a, b)) with respect to every element of a and of b."""
    grads = []
    for which in (0, 1):
        args = [a.copy(), b.copy()]
        grad = np.zeros_like(args[which])
        for index in np.ndindex(args[which].shape):
            saved = args[which][index]
            args[which][index] = saved + eps
            plus = np.sum(g * f(*args))
            args[which][index] = saved - eps
            minus = np.sum(g * f(*args))
            args[which][index] = saved
            grad[index] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return tuple(grads)


def _operands(shape_a: tuple, shape_b: tuple, seed: int, away_from_zero: bool) -> tuple:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2.0, 2.0, shape_a)
    b = rng.uniform(-2.0, 2.0, shape_b)
    if away_from_zero:  # a divisor between 0.5 and 2 in size, either sign
        b = np.sign(b + (b == 0)) * (0.5 + np.abs(b) * 0.75)
    return np.asarray(a), np.asarray(b)


def _the_class(namespace: dict, name: str) -> type:
    cls = namespace[name]
    if not (isinstance(cls, type) and issubclass(cls, Function)):
        made = "a class" if isinstance(cls, type) else f"a {type(cls).__name__}, not a class"
        raise CheckFailed(
            f"{name} is not a Function subclass",
            f"class {name}(Function)",
            f"{name} is {made}",
            f"{name} must inherit Function: class {name}(Function):",
        )
    return cls


def _check_binary_op(namespace: dict, name: str, reference: Callable, formulas: str) -> None:
    cls = _the_class(namespace, name)
    for seed, (shape_a, shape_b) in enumerate(SHAPES):
        case = f"{name} with a of shape {shape_a} and b of shape {shape_b}"
        with running(case, _snippet(name, shape_a, shape_b)):
            _check_shapes(cls, case, seed, (shape_a, shape_b), reference, formulas, name == "Div")
    _check_float32_dtype(cls, name)
    _check_one_input_needs_grad(cls, name, reference, formulas)
    _check_float64_digits(cls, name)
    _check_zero_operands(cls, name)
    _check_input_changed_in_place(cls, name, reference)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -2.0, 2.0])
    expect_nodes_independent(
        name, lambda u, v: cls()(u, v), [a, b], [b - 1.5, a + 1.0], lambda u, v: _EXACT_GRADS[name](u, v, 1.0)
    )


def _snippet(name: str, shape_a: tuple, shape_b: tuple) -> str:
    """Code that runs one shape case in a notebook cell (operands of those shapes, values made up)."""
    out = np.broadcast_shapes(shape_a, shape_b)
    return (
        f"a = Variable(np.full({shape_a}, 1.5)); b = Variable(np.full({shape_b}, -0.5)); "
        f"{name}()(a, b).backward(np.ones({out}))"
    )


def _check_float32_dtype(cls: type, name: str) -> None:
    """float32 inputs give a float32 result, as the kit's ops give (a float64 cast doubles the memory)."""
    a, b = Variable(np.array([1.5, -2.0], dtype=np.float32)), Variable(np.array([0.5, 4.0], dtype=np.float32))
    case = f"{name} of float32 inputs [1.5, -2] and [0.5, 4]"
    with running(case):
        out = cls()(a, b)
    expect_equal(
        f"{case}: dtype of forward's result",
        str(out.dtype),
        "float32",
        "keep the inputs' dtype: float32 inputs give a float32 result, as the kit's own ops do (no "
        "dtype=np.float64 or float64 casts in forward)",
    )


_EXACT_GRADS = {
    "Mul": lambda a, b, g: (g * b, g * a),
    "Div": lambda a, b, g: (g / b, -g * a / (b * b)),
}


def _check_float64_digits(cls: type, name: str) -> None:
    """Gradients to float64's last digits (a float32 cast or constant in backward rounds to 7)."""
    a, b = np.array([1 / 3, 2 / 3, 5 / 7]), np.array([3 / 7, -1.1, 1.3])
    case = f"{name} of float64 inputs [1/3, 2/3, 5/7] and [3/7, -1.1, 1.3]"
    g, what = np.array([0.1, 0.7, -0.3]), "to float64's last digits"
    _expect_exact_grads(cls, name, case, a, b, g, what, ROUNDED_TO_FLOAT32, rtol=1e-12, atol=1e-15)


def _check_zero_operands(cls: type, name: str) -> None:
    """An exact 0 where no case above has one (the operands are random): a gradient rebuilt from the
    output by dividing by an input (y / a) is 0 / 0 = nan there."""
    a = np.array([0.0, 1.5, -2.0])
    b = np.array([0.5, -1.25, 2.0]) if name == "Div" else np.array([2.5, 0.0, -0.5])
    zeros = "a" if name == "Div" else "a and in b"
    hint = (
        "compute each gradient from the inputs, without dividing by "
        f"{'a' if name == 'Div' else 'an input'}: where it is 0, y / a is 0 / 0 = nan"
    )
    case = f"{name} of [0, 1.5, -2] and {b.tolist()} (a 0 in {zeros})"
    _expect_exact_grads(cls, name, case, a, b, np.array([1.0, -0.5, 2.0]), "", hint)


def _expect_exact_grads(
    cls: type,
    name: str,
    case: str,
    a_data: Any,
    b_data: Any,
    g: Any,
    what: str,
    hint: str,
    **tolerance: float,
) -> None:
    """Both gradients of cls()(a, b).backward(g) against _EXACT_GRADS (what: said after each case)."""
    a, b = Variable(a_data.copy()), Variable(b_data.copy())
    with running(case):
        cls()(a, b).backward(g.copy())
    for label, leaf, exact in zip("ab", (a, b), _EXACT_GRADS[name](a_data, b_data, g)):
        expect_close(f"{case}: gradient for {label} {what}".rstrip(), leaf.grad, exact, hint, **tolerance)


def _check_shapes(
    cls: type, case: str, seed: int, shapes: tuple, reference: Callable, formulas: str, divides: bool
) -> None:
    """Forward and both gradients of one pair of shapes (the same-shape pairs come first)."""
    a_data, b_data = _operands(*shapes, seed, away_from_zero=divides)
    a, b = Variable(a_data.copy()), Variable(b_data.copy())
    out = cls()(a, b)
    if not isinstance(out, Variable):
        raise CheckFailed(f"{case}: forward", "a Variable", type(out).__name__, "forward returns one array")
    expected = reference(a_data, b_data)
    expect_close(f"{case}: forward value", out.data, expected, f"forward computes {formulas.split(';')[0]}")
    expect_equal(
        f"{case}: dtype of forward's result for float64 inputs",
        str(out.dtype),
        "float64",
        "keep the inputs' dtype (float32 loses digits the gradients need): no float32 constants or casts "
        "in forward",
    )
    g = np.random.default_rng(100 + seed).uniform(-1.0, 1.0, expected.shape)
    seed_gradient = g.copy()  # backward gets a copy: one that writes into grad_output must not move g
    try:
        out.backward(seed_gradient)
    except ShapeError as error:
        raise CheckFailed(
            f"{case}: backward",
            "one gradient per input, of that input's shape",
            str(error),
            _shape_error_hint(str(error), shapes, expected.shape),
        ) from None
    if not np.array_equal(seed_gradient, g):
        raise CheckFailed(
            f"{case}: grad_output after backward",
            "unchanged",
            "changed in place",
            "compute new arrays (grad_output * b); never write into grad_output: the engine may hand "
            "the same array to other Functions",
        )
    for label, leaf, numerical in zip("ab", (a, b), numerical_grads(reference, a_data, b_data, g)):
        if leaf.shape == out.shape:
            hint = _mistake_hint(divides, label, leaf.grad, a_data, b_data, g) or _gradients_rule(formulas)
        else:
            hint = _broadcast_hint(label, leaf.shape, out.shape)
        expect_close(f"{case}: gradient for {label}", leaf.grad, numerical, hint, rtol=1e-4, atol=1e-6)


# Common wrong gradients at the output's shape, (wrong(a, b, g), what it says), per op and input.
_SWAPPED = "this is {other}'s gradient: {label}'s is grad_output times the derivative with respect to {label}"
_NO_G = MISSING_GRAD_OUTPUT
_ADDS = "this is grad_output unchanged (Add's gradient): multiply it by the local derivative"
_MISTAKES = {
    (False, "a"): [(lambda a, b, g: g * a, _SWAPPED), (lambda a, b, g: b, _NO_G), (lambda a, b, g: g, _ADDS)],
    (False, "b"): [(lambda a, b, g: g * b, _SWAPPED), (lambda a, b, g: a, _NO_G), (lambda a, b, g: g, _ADDS)],
    (True, "a"): [
        (lambda a, b, g: -g * a / b**2, _SWAPPED),
        (lambda a, b, g: 1 / b, _NO_G),
        (lambda a, b, g: g, _ADDS),
        (lambda a, b, g: g * b, "this multiplies by b where a / b divides by it"),
    ],
    (True, "b"): [
        (lambda a, b, g: g / b, _SWAPPED),
        (lambda a, b, g: -a / b**2, _NO_G),
        (lambda a, b, g: g * a / b**2, "the sign is wrong: the derivative of 1/b is -1/b**2"),
        (lambda a, b, g: -g * a / b, "one power of b is missing: the derivative of 1/b is -1/b**2"),
        (lambda a, b, g: -g / b**2, "a is missing: the derivative of a / b with respect to b depends on a"),
    ],
}


def _mistake_hint(divides: bool, label: str, got: Any, a: np.ndarray, b: np.ndarray, g: np.ndarray) -> str:
    """What a wrong gradient for input label says about the mistake; '' if it is no common one."""
    if not isinstance(got, np.ndarray) or got.shape != g.shape:
        return ""
    for wrong, says in _MISTAKES[divides, label]:
        if np.allclose(got, wrong(a, b, g), rtol=1e-4, atol=1e-6):
            return says.format(label=label, other="b" if label == "a" else "a")
    return ""


def _shape_error_hint(error: str, shapes: tuple, out_shape: tuple) -> str:
    """What the ShapeError that backward's result raised says is wrong (the kit's message names it)."""
    if "a Variable, not an array" in error:
        return (
            "backward returned a Variable where a gradient is an array: compute the gradients from the "
            "arrays in self.saved_tensors (an a or b that backward does not set itself is the notebook's "
            "Variable)"
        )
    if "not an array" in error:
        return "backward returns arrays, one gradient per input"
    if "None for input" in error:
        return "backward returned None for an input that requires grad: return a gradient for each input"
    returned = re.search(r"gradient of shape (\(.*?\)) for input ([01])\b", error)
    index = int(returned[2]) if returned else None
    if index is not None and returned[1] == str(shapes[1 - index]) != str(shapes[index]):
        mine, other = "ab"[index], "ab"[1 - index]
        return (
            f"{mine}'s gradient was summed to {other}'s shape: sum each input's gradient to that input's "
            f"own shape (sum_to_shape(..., {mine}.shape))"
        )
    if all(shape == out_shape for shape in shapes):
        return (
            "nothing was broadcast here (a, b and the output have one shape): a gradient of another "
            "shape comes from the formula, not from a missing sum"
        )
    if any(_stretched_dims(shape, out_shape) > 1 for shape in shapes):
        return (
            "sum the gradient over every dim that broadcasting added or stretched: here an operand was "
            "stretched along two of its size-1 dims, and both are summed, not only the first (sum_to_shape)"
        )
    return "sum the gradient over the dimensions that broadcasting added or stretched (sum_to_shape)"


def _stretched_dims(shape: tuple, out_shape: tuple) -> int:
    """How many size-1 dims of shape broadcasting stretched to out_shape."""
    return sum(1 for n, m in zip(shape[::-1], out_shape[::-1]) if n == 1 and m != 1)


def _gradients_rule(formulas: str) -> str:
    """The gradients' part of an op's formulas ('a * b; the gradient for a is g * b, ...')."""
    return formulas.split("; ", 1)[1]


def _broadcast_hint(label: str, shape: tuple, out_shape: tuple) -> str:
    """The hint for the gradient of an input that broadcasting stretched (the same-shape pairs passed)."""
    return (
        f"the same-shape cases passed; here {label} of shape {shape} was broadcast to {out_shape}: its "
        "gradient, computed at the output's shape, must be summed over the dims broadcasting added or "
        f"stretched, back to {shape} (sum_to_shape)"
    )


def _check_one_input_needs_grad(cls: type, name: str, reference: Callable, formulas: str) -> None:
    """One input without grad, then the other: backward must still give the other one's gradient."""
    a_data, b_data = _operands((2, 3), (3,), 7, away_from_zero=True)
    g = np.ones((2, 3))
    expected = numerical_grads(reference, a_data, b_data, g)
    for frozen, needed in ((1, 0), (0, 1)):
        inputs = [Variable(a_data.copy()), Variable(b_data.copy())]
        inputs[frozen].requires_grad = False
        case = f"{name} where {'ab'[frozen]} does not require grad: gradient for {'ab'[needed]}"
        try:
            with running(case):
                cls()(*inputs).backward(g)
        except ShapeError as error:
            raise CheckFailed(
                case,
                "the gradient of the input that requires grad",
                str(error),
                "self.needs_input_grad[i] says whether input i needs its gradient: check the index",
            ) from None
        expect_close(case, inputs[needed].grad, expected[needed], _gradients_rule(formulas), rtol=1e-4)


def _check_input_changed_in_place(cls: type, name: str, reference: Callable) -> None:
    """Change a, b or the output in place after forward: InplaceError, or still the right gradients."""
    a_data, b_data = np.array([1.0, 2.0, 3.0]), np.array([0.5, -2.0, 2.0])
    grads = numerical_grads(reference, a_data, b_data, np.ones(3))
    expect_in_place_changes_caught(
        name, lambda a, b: cls()(a, b), [a_data, b_data], grads, inputs=("a", "b"), output_too=True
    )


def _multiply(a: Any, b: Any) -> Any:
    return a * b


def _divide(a: Any, b: Any) -> Any:
    return a / b


@exercise("ch03.mul", title="Mul: a * b with broadcasting, forward and backward", points=3, needs=("Mul",))
def check_mul(namespace: dict) -> None:
    """Forward values and dtype and both gradients on eight shape pairs, a float32 result for float32
    inputs, each input without grad, inputs changed in place (saved tensors), and two nodes in one graph."""
    _check_binary_op(namespace, "Mul", _multiply, "a * b; the gradient for a is g * b, for b it is g * a")


@exercise("ch03.div", title="Div: a / b with broadcasting, forward and backward", points=3, needs=("Div",))
def check_div(namespace: dict) -> None:
    """Forward values and dtype and both gradients on eight shape pairs, a float32 result for float32
    inputs, each input without grad, inputs changed in place (saved tensors), and two nodes in one graph."""
    _check_binary_op(
        namespace, "Div", _divide, "a / b; the gradient for a is g / b, for b it is -g * a / b**2"
    )
