"""What fit() refuses, before it trains and while it does, and the reasons it gives.

Each check runs before anything changes (the weights, the History), so a refused call leaves the
model as it was, and an inf or nan loss leaves the weights that gave it to inspect.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .backend import get_array_module
from .data import Minibatches
from .data.loader import as_arrays
from .engine import ExecutionEngine
from .errors import ShapeError
from .nn import Module
from .variable import Variable


def _is_array(a: Any) -> bool:
    """An array, a Variable or a list of numbers (X.tolist()); a batch (x, y) is a tuple or holds arrays."""
    if hasattr(a, "shape"):
        return True
    return isinstance(a, list) and not any(isinstance(v, tuple) or getattr(v, "ndim", 0) > 0 for v in a)


def array_pair(data: Any, name: str) -> tuple | None:
    """(X, y) as arrays when data holds arrays (a tuple, a list, Minibatches); None for batches."""
    parts = data.arrays if isinstance(data, Minibatches) else data
    if not isinstance(parts, (tuple, list)) or not parts or not all(_is_array(a) for a in parts):
        return None
    if len(parts) != 2:
        raise ValueError(
            f"fit: {name} is a {type(data).__name__} of {len(parts)} arrays; give the pair (X, y) "
            "(or, for train_data, an iterable of (x, y) batches)"
        )
    X, y = as_arrays(parts)
    if X.ndim == 0 or y.ndim == 0 or len(X) != len(y):
        raise ShapeError(
            f"fit: the arrays of {name} have shapes {X.shape} and {y.shape}; "
            "X and y need the same number of rows, one per sample"
        )
    if len(X) == 0:
        raise ValueError(f"fit: {name} has no rows (shapes {X.shape} and {y.shape}); give at least one")
    return X, y


def check_optimizer(model: Module, optimizer: Any) -> None:
    """Refuse what is no optimizer, or one that holds none of the model's parameters (it would train
    nothing)."""
    if not (callable(getattr(optimizer, "zero_grad", None)) and callable(getattr(optimizer, "step", None))):
        raise TypeError(
            f"fit: optimizer must have zero_grad() and step(), got {type(optimizer).__name__}; "
            "make one for the model: optim.SGD(model.parameters(), lr=...)"
        )
    params = list(model.parameters())
    held = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group["params"]}
    if params and held and not any(id(p) in held for p in params):
        raise ValueError(
            f"fit: the optimizer holds {len(held)} parameter(s), none of them the model's, so training "
            "would change nothing; make it for this model: optim.SGD(model.parameters(), lr=...)"
        )


def check_connected(loss: Variable, optimizer: Any) -> None:
    """Refuse a loss whose graph reaches none of the optimizer's parameters (loss_fn cut it from the
    model, e.g. with Variable(output.data)): backward would leave them as they are, and so would fit."""
    params = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group["params"]}
    reached = ExecutionEngine()._compute_dependencies(loss.creator)  # what backward will call
    if any(id(getattr(fn, "variable", None)) in params for fn in reached):  # a Leaf's Variable
        return
    if params:
        raise ValueError(
            "fit: the loss does not depend on any parameter the optimizer holds, so no step would "
            "change them; compute the loss from model(x) itself (not from a new Variable of its .data)"
        )


def not_finite(value: float, step: int, model: Module, x: Any) -> FloatingPointError:
    """fit's error for an inf or nan loss, with the cause where the weights and the batch tell it."""
    if not all(_finite(p) for p in model.parameters()):
        why = "the weights are no longer finite: lower the learning rate"
    elif not all(_finite(v) for v in (x if isinstance(x, tuple) else (x,))):
        why = "this batch's inputs hold inf or nan: look for them in X (np.isfinite(X).all())"
    else:  # finite weights and inputs: the weights overflowed the loss, or the loss divided by zero
        why = (
            "lower the learning rate if the losses grew before it (large weights overflow exp), or, "
            "with a loss that ignores rows (ignore_index), see whether every target of this batch is "
            "ignored: a mean over no rows is nan"
        )
    return FloatingPointError(
        f"fit: the loss became {value} at step {step}; {why} (the model keeps the weights that gave it)"
    )


def _finite(v: Any) -> bool:
    """Whether every element of an array or a Variable's data is finite (on its own device)."""
    data = v.data if isinstance(v, Variable) else v
    return bool(get_array_module(data).isfinite(data).all())


def positive_int(name: str, value: Any) -> None:
    """Refuse what cannot count epochs, steps or rows (a bool, a float, 0) before fit changes anything."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"fit: {name} must be an int, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"fit: {name} must be at least 1, got {value}")


def no_batches(batches: Any) -> str:
    """Why train_data gives no batches, in words, for the error fit raises."""
    if isinstance(batches, Minibatches):
        return (
            f"train_data gives no batches: {batches.n_samples} rows, batch_size={batches.batch_size}, "
            f"drop_last={batches.drop_last}; give more rows, a smaller batch_size or drop_last=False"
        )
    return f"train_data ({type(batches).__name__}) gives no batches; give at least one (x, y) batch"


def finite_before_training(loss: float, data: str) -> None:
    if not math.isfinite(loss):
        raise FloatingPointError(
            f"fit: the loss on the {data} is {loss} before the first step; look for inf or nan in its "
            "rows (np.isfinite(X).all()) or for a model that gives them"
        )
