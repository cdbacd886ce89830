"""gradcheck: compare the Jacobian that backward computes with central differences, in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import get_array_module, is_array, to_device
from .errors import GradcheckError
from .variable import Variable


def gradcheck(fn: Callable, inputs: Any, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """True if fn's backward agrees with numerical differences; else a GradcheckError showing where."""
    variables = _float64_leaves(inputs)
    outputs = _differentiable(fn(*variables))
    if not any(v.requires_grad for v in variables):
        raise ValueError("gradcheck: no input requires grad, so there is nothing to check")
    if not outputs:
        raise ValueError(
            "gradcheck: no output of fn requires grad; fn must compute its outputs from the inputs "
            "with Variable operations"
        )
    mismatches = []
    for i, variable in enumerate(variables):
        if not variable.requires_grad:
            continue
        analytical = _analytical_jacobian(outputs, variables, variable)
        numerical = _numerical_jacobian(fn, variables, variable, eps)
        bad = ~np.isclose(analytical, numerical, rtol=rtol, atol=atol)  # a nan on either side is bad too
        for row, col in zip(*np.nonzero(bad)):
            mismatches.append((i, row, col, analytical[row, col], numerical[row, col], variable.shape))
    if mismatches:
        raise GradcheckError(_report(mismatches, outputs))
    return True


def _float64_leaves(inputs: Any) -> list:
    """Fresh float64 leaf Variables holding copies of the inputs, on their devices (integers stay as is)."""
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    leaves = []
    for x in inputs:
        if isinstance(x, Variable):
            data = x.data
        else:
            data = x if is_array(x) else np.asarray(x)  # a CuPy array stays on its GPU
        wants_grad = x.requires_grad if isinstance(x, Variable) else data.dtype.kind == "f"
        if data.dtype.kind == "f":
            # C order: _numerical_jacobian nudges the elements through a flat view of the copy
            leaves.append(Variable(data.astype("float64", order="C", copy=True), requires_grad=wants_grad))
        else:
            leaves.append(Variable(data.copy(), requires_grad=False))
    return leaves


def _differentiable(result: Any) -> list:
    outputs = list(result) if isinstance(result, tuple) else [result]
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
    return np.stack(columns, axis=1)


def _numerical_jacobian(fn: Callable, variables: list, variable: Variable, eps: float) -> Any:
    """Column j: (f(x + eps) - f(x - eps)) / 2 eps for output element j, one input element at a time."""
    flat = variable.data.reshape(-1)  # a view: the leaves hold C-contiguous copies
    rows = []
    for k in range(flat.size):
        original = flat[k].item()
        flat[k] = original + eps
        plus = _output_values(fn(*variables))
        flat[k] = original - eps
        minus = _output_values(fn(*variables))
        flat[k] = original
        rows.append((plus - minus) / (2 * eps))
    return np.stack(rows, axis=0)


def _output_values(result: Any) -> Any:
    return np.concatenate([to_device(o.data, "cpu").reshape(-1) for o in _differentiable(result)])


def _report(mismatches: list, outputs: list) -> str:
    lines = [
        f"gradcheck: backward disagrees with numerical differences at {len(mismatches)} place(s):",
        "  input  element        output element   analytical      numerical",
    ]
    for i, row, col, a, n, shape in mismatches[:8]:
        element = np.unravel_index(row, shape) if shape else ()
        lines.append(f"  {i:<6} {str(tuple(int(e) for e in element)):<15} {col:<16} {a:<15.6g} {n:.6g}")
    if len(mismatches) > 8:
        lines.append(f"  ... and {len(mismatches) - 8} more")
    lines.append(
        "Look at the backward of the ops that touch that input; a factor that is off everywhere "
        "often means a swapped or missing term, a gradient off only on some elements a broadcast."
    )
    return "\n".join(lines)
