"""A model at work: its loss and metrics on data (evaluate), the classes it picks (predict_classes)
and the regions it draws (plot_decision_boundary). Each runs in eval mode (Dropout off) and without
building a graph (volatile), and puts the model back in the mode it was in.

matplotlib is imported inside plot_decision_boundary, so importing this module stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .backend import to_device
from .data.loader import as_arrays
from .errors import ShapeError
from .nn import Module, classes_from_scores
from .variable import Variable


def _model_device(model: Module) -> str:
    for param in model.parameters():
        return param.device
    return "cpu"


def _in_model_dtype(model: Module, arrays: tuple) -> tuple:
    """The floating-point arrays cast to the model's (float64 data, float32 layers); others as they are.

    NumPy would compute a float32 layer on float64 data in float64, silently and more slowly;
    PyTorch refuses the mix. Integer arrays (labels, indices) are left alone.
    """
    dtype = next((p.dtype for p in model.parameters() if p.dtype.kind == "f"), None)
    if dtype is None:
        return arrays
    return tuple(a.astype(dtype) if a.dtype.kind == "f" and a.dtype != dtype else a for a in arrays)


def _for_model(model: Module, *values: Any) -> tuple:
    """The arrays of values (Variables, arrays, lists) on the model's device, floats in its dtype."""
    arrays = _in_model_dtype(model, as_arrays(values))  # a CuPy array refuses np.asarray
    return tuple(to_device(a, _model_device(model)) for a in arrays)


def evaluate(
    model: Module, X: Any, y: Any, loss_fn: Callable | None = None, metrics: dict | None = None
) -> dict:
    """Loss and metrics of the model on (X, y), in eval mode and without building a graph (volatile)."""
    return _evaluate(model, X, y, loss_fn, metrics, "evaluate")


def _evaluate(model: Module, X: Any, y: Any, loss_fn: Any, metrics: Any, where: str) -> dict:
    """evaluate, its errors named after where (evaluate, or fit's trial before the first step)."""
    x, target = _for_model(model, X, y)
    if len(x) == 0:
        raise ValueError(f"{where}: X has no rows; a loss or a metric of no samples is not a number")
    with _eval_mode(model):
        output = model(Variable(x, volatile=True))
        results = {}
        if loss_fn is not None:
            results["loss"] = _one_value(loss_fn(output, Variable(target, volatile=True)), where)
        for name, metric in (metrics or {}).items():
            results[name] = float(metric(output, target))
    return results


@contextmanager
def _eval_mode(model: Module) -> Iterator[None]:
    """model in eval mode (Dropout off) while the block runs, then each sub-Module in the mode it was in."""
    modes = _modes_of(model)
    model.eval()
    try:
        yield
    finally:
        _set_modes(modes)


def _modes_of(model: Module) -> list:
    """(module, training) for model and each sub-Module: model.train(mode) would set them all alike."""
    return [(module, module.training) for module in model.modules()]


def _set_modes(modes: list) -> None:
    """Put each module of _modes_of's list back in the mode it had."""
    for module, training in modes:
        module.training = training


def _one_value(loss: Any, where: str) -> float:
    """The loss as a float; a clear error unless loss_fn returned a one-element Variable."""
    if not isinstance(loss, Variable) or loss.numel() != 1:
        got = f"shape {loss.shape}" if isinstance(loss, Variable) else type(loss).__name__
        raise ValueError(
            f"{where}: loss_fn must return a one-element Variable, got {got}; reduce the losses to "
            "one, e.g. with reduction='mean'"
        )
    return float(loss.item())


def predict_classes(model: Module, X: Any, threshold: float | None = None) -> np.ndarray:
    """The class the model picks for each row of X (nn.classes_from_scores), without building a graph.

    threshold: for a model with one output per row, 0.5 for a probability, 0.0 for a logit.
    """
    (x,) = _for_model(model, X)
    if x.ndim < 2:
        raise ShapeError(
            f"predict_classes: X must hold one row per sample, got shape {x.shape}; for one sample of "
            "several features pass X.reshape(1, -1), for many samples of one feature X.reshape(-1, 1)"
        )
    with _eval_mode(model):  # Dropout off, as in evaluate: the same X gives the same classes
        output = model(Variable(x, volatile=True))
    return classes_from_scores(to_device(output.data, "cpu"), threshold, caller="predict_classes")


def plot_decision_boundary(
    model: Module,
    X: Any,
    y: Any,
    ax: Any = None,
    resolution: int = 200,
    margin: float = 0.25,
    threshold: float | None = None,
) -> Any:
    """Colour the plane by the class the model predicts and scatter the 2-D points (X, y) on top.

    threshold: for a model with one output per row, as in predict_classes.
    """
    import matplotlib.pyplot as plt  # lazy: only plotting needs matplotlib

    X = np.asarray(to_device(X.data if isinstance(X, Variable) else X, "cpu"))
    y = np.asarray(to_device(y.data if isinstance(y, Variable) else y, "cpu"))
    if X.ndim != 2 or X.shape[1] != 2 or len(X) == 0 or y.shape != (len(X),):
        raise ValueError(
            f"plot_decision_boundary: needs 2-D points of shape (N, 2) with N > 0 and one label each, "
            f"got X {X.shape} and y {y.shape}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5), layout="constrained")
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)  # floats, whatever X holds (cast to the model's)
    classes = predict_classes(model, grid, threshold).reshape(gx.shape)
    n_classes = int(max(classes.max(), y.max())) + 1
    ax.contourf(gx, gy, classes, levels=np.arange(n_classes + 1) - 0.5, cmap="coolwarm", alpha=0.3)
    # the points' colours on the regions' scale: class k is the same colour in both
    ax.scatter(
        X[:, 0],
        X[:, 1],
        c=y,
        cmap="coolwarm",
        vmin=-0.5,
        vmax=n_classes - 0.5,
        s=12,
        edgecolors="k",
        linewidths=0.3,
    )
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    return ax
