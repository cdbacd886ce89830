"""gradcheck: compare the Jacobian that backward computes with central differences, in float64."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import get_array_module, is_array, to_device
from .errors import GradcheckError
from .function import Function
from .variable import Variable

WEIGHTED = "weighted"  # the label of the extra backward's rows in the report


def gradcheck(fn: Callable, inputs: Any, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """True if fn's backward agrees with numerical differences; else a GradcheckError showing where.

    Variables, arrays and Python floats in ``inputs`` become float64 leaves (integer arrays are
    leaves that need no grad); ints, None and strings reach fn as they are (a dim, an option).
    Backward also runs once more, given a gradient for every output element at once, with mixed
    signs: the one-hot gradients are all 1, which hides a backward that ignores grad_output or drops
    its sign (``abs(g)``, ``g ** 2``, ``maximum(g, 0)``).
    """
    if isinstance(fn, Function):  # it would run once: the numerical differences call fn again
        name = type(fn).__name__
        raise TypeError(
            f"gradcheck: fn is a {name} object, which runs once; pass a function that makes a new one "
            f"for each call: gradcheck(lambda *xs: {name}()(*xs), inputs)"
        )
    for name, value, lowest in (("eps", eps, "> 0"), ("atol", atol, ">= 0"), ("rtol", rtol, ">= 0")):
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not number or value < 0 or (value == 0 and name == "eps"):
            raise ValueError(f"gradcheck: {name} must be a finite number {lowest}, got {value!r}")
    arguments = _float64_leaves(inputs)
    variables = [a for a in arguments if isinstance(a, Variable)]
    outputs = _differentiable(fn(*arguments))
    if not any(v.requires_grad for v in variables):
        raise ValueError("gradcheck: no input requires grad, so there is nothing to check")
    if not outputs:
        raise ValueError(
            "gradcheck: no output of fn requires grad; fn must compute its outputs from the inputs "
            "with Variable operations"
        )
    checked = [(i, a) for i, a in enumerate(arguments) if isinstance(a, Variable) and a.requires_grad]
    numerical = {i: _numerical_jacobian(fn, arguments, v, eps) for i, v in checked}
    mismatches = []
    for i, variable in checked:
        analytical = _analytical_jacobian(outputs, variables, variable)
        labels = [_output_element(outputs, c) for c in range(analytical.shape[1])]
        mismatches += _compare(i, variable, analytical, numerical[i], labels, atol, rtol)
    weights = [_mixed_signs(o.shape, k) for k, o in enumerate(outputs)]
    together = np.concatenate([w.reshape(-1) for w in weights])[:, None]
    if len(outputs) == 1:  # the weights are the seed
        output = outputs[0]
        seed = to_device(weights[0], output.device).astype(output.dtype)
        run = lambda: output.backward(seed)  # noqa: E731
    else:  # one scalar whose backward gives every output its weights: no grad_output is None
        run = _weighted_sum(outputs, weights).backward
    mismatches += _one_more_backward(run, together, variables, checked, numerical, atol, rtol)
    if mismatches:
        raise GradcheckError(_report(mismatches, outputs))
    return True


def _mixed_signs(shape: tuple, k: int) -> Any:
    """Weights for output k's elements: sizes 0.5 to 1.5, signs alternating, the first one negative."""
    magnitudes = np.random.default_rng(k).uniform(0.5, 1.5, shape)
    signs = np.where(np.arange(magnitudes.size) % 2 == 0, -1.0, 1.0).reshape(shape)
    return magnitudes * signs


def _one_more_backward(
    run: Callable, weights: Any, variables: list, checked: list, numerical: dict, atol, rtol
) -> list:
    """Mismatches after one more backward (run), whose seed weighs the output elements by weights."""
    for v in variables:
        v.grad = None
    run()
    mismatches = []
    for i, variable in checked:
        analytical = to_device(variable.grad, "cpu").reshape(-1, 1)
        mismatches += _compare(i, variable, analytical, numerical[i] @ weights, [WEIGHTED], atol, rtol)
    return mismatches


def _float64_leaves(inputs: Any) -> list:
    """fn's arguments: fresh float64 leaf Variables holding copies of the inputs (integers stay as is)."""
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    arguments = []
    for x in inputs:
        if x is None or isinstance(x, (int, str)):  # an argument, not data: a dim, an option
            arguments.append(x)
            continue
        if isinstance(x, Variable):
            data = x.data
        else:
            data = x if is_array(x) else np.asarray(x)  # a CuPy array stays on its GPU
        wants_grad = x.requires_grad if isinstance(x, Variable) else data.dtype.kind == "f"
        if data.dtype.kind == "f":
            # C order: _numerical_jacobian nudges the elements through a flat view of the copy
            arguments.append(Variable(data.astype("float64", order="C", copy=True), requires_grad=wants_grad))
        else:
            arguments.append(Variable(data.copy(), requires_grad=False))
    return arguments


def _differentiable(result: Any) -> list:
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    for output in outputs:
        if not isinstance(output, Variable):
            raise TypeError(
                f"gradcheck: fn must return a Variable or a tuple of Variables, got a "
                f"{type(output).__name__}; compute the outputs with Variable operations"
            )
    return [o for o in outputs if o.requires_grad]


def _analytical_jacobian(outputs: list, variables: list, variable: Variable) -> Any:
    """Column j: the gradient of output element j w.r.t. variable, by one backward with a one-hot seed."""
    columns = []
    for output in outputs:
        xp = get_array_module(output.data)
        for j in range(output.numel()):
            for v in variables:
                v.grad = None
            seed = xp.zeros(output.shape, dtype=output.dtype)
            seed.reshape(-1)[j] = 1
            output.backward(seed)
            columns.append(to_device(variable.grad, "cpu").reshape(-1).copy())
    return np.stack(columns, axis=1) if columns else np.zeros((variable.numel(), 0))


def _numerical_jacobian(fn: Callable, arguments: list, variable: Variable, eps: float) -> Any:
    """Column j: (f(x + eps) - f(x - eps)) / 2 eps for output element j, one input element at a time."""
    flat = variable.data.reshape(-1)  # a view: the leaves hold C-contiguous copies
    rows = []
    for k in range(flat.size):
        original = flat[k].item()
        flat[k] = original + eps
        plus = _output_values(fn(*arguments))
        flat[k] = original - eps
        minus = _output_values(fn(*arguments))
        flat[k] = original
        rows.append((plus - minus) / (2 * eps))
    if not rows:  # an empty input: no rows, one column per output element
        return np.zeros((0, _output_values(fn(*arguments)).size))
    return np.stack(rows, axis=0)


def _output_values(result: Any) -> Any:
    values = [to_device(o.data, "cpu").reshape(-1) for o in _differentiable(result)]
    return np.concatenate(values) if values else np.zeros(0)


def _weighted_sum(outputs: list, weights: list) -> Variable:
    """sum_k (outputs[k] * weights[k]).sum(): one scalar whose backward seeds every output at once."""
    total = None
    for output, weight in zip(outputs, weights):
        term = (output * Variable(to_device(weight, output.device), requires_grad=False)).sum()
        total = term if total is None else total + term
    return total


def _compare(i: int, variable: Variable, analytical: Any, numerical: Any, labels: list, atol, rtol) -> list:
    """(input, element, output label, analytical, numerical) where the two Jacobians disagree."""
    bad = ~np.isclose(analytical, numerical, rtol=rtol, atol=atol)  # a nan on either side is bad too
    return [
        (i, _element(r, variable.shape), labels[c], analytical[r, c], numerical[r, c])
        for r, c in zip(*np.nonzero(bad))
    ]


def _element(flat_index: int, shape: tuple) -> str:
    """'(1,2)': the index of an element of an array of this shape, from its position in the flat array."""
    index = np.unravel_index(flat_index, shape) if shape else ()
    return str(tuple(int(e) for e in index)).replace(" ", "")


def _output_element(outputs: list, column: int) -> str:
    """'1:(0,2)': which output, and which element of it, a column of the Jacobian stands for."""
    for k, output in enumerate(outputs):
        if column < output.numel():
            return f"{k}:{_element(column, output.shape)}"
        column -= output.numel()
    raise IndexError(column)


def _report(mismatches: list, outputs: list) -> str:
    lines = [
        f"gradcheck: backward disagrees with numerical differences at {len(mismatches)} place(s):",
        "  input  element        output:element   analytical      numerical",
    ]
    for i, element, label, a, n in mismatches[:8]:
        lines.append(f"  {i:<6} {element:<15} {label:<16} {a:<15.6g} {n:.6g}")
    if len(mismatches) > 8:
        lines.append(f"  ... and {len(mismatches) - 8} more")
    if any(label == WEIGHTED for _, _, label, _, _ in mismatches):
        lines.append(
            f"Rows '{WEIGHTED}': one more backward, given a gradient for every output element at "
            "once (some negative), where each other row gives one element a 1. If only these rows "
            "appear, backward does not multiply by grad_output, drops its sign (abs, a square, a max "
            "with 0), or goes wrong when every output has a gradient."
        )
    lines.append(
        "Look at the backward of the ops that touch that input; a factor that is off everywhere "
        "often means a swapped or missing term, a gradient off only on some elements a broadcast."
    )
    return "\n".join(lines)
