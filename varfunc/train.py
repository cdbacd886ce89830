"""fit(): the training loop of the later chapters, with a progress bar and a History that plots.

The loop is the 2017 one, written out so that it can be read::

    for x, y in batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

tqdm and matplotlib are imported inside the functions that use them, so importing this module
(or varfunc.nn) stays light. ``tqdm.auto`` draws a widget in JupyterLab and text in a terminal.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backend import to_device
from .data import Minibatches
from .nn import Module
from .variable import Variable


@dataclass
class History:
    """What fit() saw: the loss of every step, and per-epoch averages and metrics.

    ``losses[i]`` is the loss of step i; ``epoch_losses[e]`` the mean over epoch e, each step
    weighted by its batch's rows (so a short last batch counts for what it holds);
    ``metrics['accuracy'][e]`` a metric on the training data after epoch e, and ``val_metrics`` the
    same on the validation data (with 'loss' among them). ``seconds`` is the training wall time.
    """

    losses: list = field(default_factory=list)
    epoch_losses: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    val_metrics: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def steps(self) -> int:
        """The number of optimizer steps taken."""
        return len(self.losses)

    def plot(self, ax: Any = None, smooth: int = 0, log: bool = None) -> Any:
        """Draw the loss curve (per step, optionally a running mean over smooth steps); returns the axes."""
        import matplotlib.pyplot as plt  # noqa: PLC0415 - lazy: only plotting needs matplotlib

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
        steps = np.arange(1, len(self.losses) + 1)
        ax.plot(steps, self.losses, lw=1, alpha=0.5 if smooth > 1 else 1.0, label="loss per step")
        if smooth > 1 and len(self.losses) >= smooth:
            running = np.convolve(self.losses, np.ones(smooth) / smooth, mode="valid")
            ax.plot(steps[smooth - 1 :], running, lw=2, label=f"mean of {smooth} steps")
        if "loss" in self.val_metrics and self.epoch_losses:
            per_epoch = len(self.losses) / len(self.epoch_losses)
            ends = per_epoch * np.arange(1, len(self.val_metrics["loss"]) + 1)
            ax.plot(ends, self.val_metrics["loss"], "o-", label="validation loss")
        positive = len(self.losses) and min(self.losses) > 0
        if log if log is not None else positive and max(self.losses) / min(self.losses) > 100:
            ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.legend()
        return ax

    def __repr__(self) -> str:
        last = f"{self.losses[-1]:.4g}" if self.losses else "-"
        extra = "".join(f", {k}={v[-1]:.4g}" for k, v in self.metrics.items() if v)
        extra += "".join(f", val_{k}={v[-1]:.4g}" for k, v in self.val_metrics.items() if v)
        return f"History(steps={self.steps}, epochs={len(self.epoch_losses)}, last loss={last}{extra})"


def _as_batches(train_data: Any, batch_size: int, seed: Any, device: str) -> Iterable:
    if isinstance(train_data, tuple) and all(hasattr(a, "shape") for a in train_data):
        return Minibatches(*train_data, batch_size=batch_size, shuffle=True, seed=seed, device=device)
    return train_data


def _model_device(model: Module) -> str:
    for param in model.parameters():
        return param.device
    return "cpu"


def _training_arrays(train_data: Any) -> tuple | None:
    """(X, y) when the training data is given as arrays or as Minibatches of two arrays."""
    if isinstance(train_data, Minibatches):
        train_data = train_data.arrays
    if isinstance(train_data, tuple) and len(train_data) == 2:
        return train_data
    return None


def evaluate(
    model: Module, X: Any, y: Any, loss_fn: Callable | None = None, metrics: dict | None = None
) -> dict:
    """Loss and metrics of the model on (X, y), in eval mode and without building a graph (volatile)."""
    was_training = model.training
    model.eval()
    try:
        device = _model_device(model)
        x = Variable(to_device(X.data if isinstance(X, Variable) else np.asarray(X), device), volatile=True)
        output = model(x)
        target = to_device(y.data if isinstance(y, Variable) else np.asarray(y), device)
        results = {}
        if loss_fn is not None:
            results["loss"] = float(loss_fn(output, Variable(target, volatile=True)).item())
        for name, metric in (metrics or {}).items():
            results[name] = float(metric(output, target))
    finally:
        model.train(was_training)
    return results


def fit(
    model: Module,
    loss_fn: Callable,
    optimizer: Any,
    train_data: Any,
    epochs: int = 1,
    *,
    batch_size: int = 32,
    val_data: tuple | None = None,
    metrics: dict | None = None,
    max_steps: int | None = None,
    stop_loss: float | None = None,
    progress: bool = True,
    seed: Any = 0,
    callback: Callable | None = None,
) -> History:
    """Train model for epochs over train_data and return the History.

    ``train_data`` is an iterable of (x, y) batches (e.g. ``Minibatches``), re-iterated each
    epoch, or a tuple of arrays (X, y) that is cut into shuffled batches of batch_size. ``metrics``
    maps names to functions ``metric(output, y)`` (e.g. ``{'accuracy': nn.accuracy}``), computed
    after each epoch on the whole training set (given as arrays or Minibatches of (X, y)) and on
    ``val_data``, an (X, y) pair.
    Training stops early after ``max_steps`` steps or when a step's loss is below ``stop_loss``
    (the 2017 regression example's rule). ``callback(step, loss)`` runs after every step.
    """
    batches = _as_batches(train_data, batch_size, seed, _model_device(model))
    if epochs > 1 and iter(batches) is batches:
        raise ValueError(
            f"fit: train_data is a one-shot iterator ({type(batches).__name__}), so epochs 2 to {epochs} "
            "would see no batches; pass Minibatches, a list of batches or the arrays (X, y)"
        )
    history = History()
    metrics = dict(metrics or {})
    try:
        per_epoch = len(batches)
    except TypeError:
        per_epoch = None
    total = per_epoch * epochs if per_epoch is not None else None
    if max_steps is not None and total is not None:
        total = min(total, max_steps)
    bar = _progress_bar(total, progress)
    start = time.perf_counter()
    stop = False
    model.train()
    try:
        for epoch in range(epochs):
            epoch_sum, epoch_count = 0.0, 0
            for x, y in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                value = float(loss.item())
                if not math.isfinite(value):  # before the step: the weights that gave it stay to inspect
                    raise FloatingPointError(
                        f"fit: the loss became {value} at step {history.steps + 1}; lower the learning "
                        "rate or check the inputs for inf/nan (the model keeps the weights that gave it)"
                    )
                loss.backward()
                optimizer.step()
                history.losses.append(value)
                rows = len(x) if getattr(x, "ndim", 1) else 1
                epoch_sum += value * rows
                epoch_count += rows
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(epoch=epoch + 1, loss=f"{value:.4g}", refresh=False)
                if callback is not None:
                    callback(history.steps, value)
                if (max_steps is not None and history.steps >= max_steps) or (
                    stop_loss is not None and value < stop_loss
                ):
                    stop = True
                    break
            if epoch_count:
                history.epoch_losses.append(epoch_sum / epoch_count)
            _record_metrics(history, model, loss_fn, train_data, val_data, metrics)
            if stop:
                break
    finally:
        history.seconds = time.perf_counter() - start
        if bar is not None:
            bar.close()
    return history


def _record_metrics(history, model, loss_fn, train_data, val_data, metrics) -> None:
    arrays = _training_arrays(train_data)
    if metrics and arrays is not None:
        for name, value in evaluate(model, *arrays, metrics=metrics).items():
            history.metrics.setdefault(name, []).append(value)
    if val_data is not None:
        for name, value in evaluate(model, *val_data, loss_fn=loss_fn, metrics=metrics).items():
            history.val_metrics.setdefault(name, []).append(value)


def _progress_bar(total: int | None, progress: bool) -> Any:
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415 - lazy: only a progress bar needs tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="step", desc="fit")


def predict_classes(model: Module, X: Any) -> np.ndarray:
    """The class with the largest score for each row of X (without building a graph)."""
    output = model(Variable(to_device(np.asarray(X), _model_device(model)), volatile=True))
    scores = to_device(output.data, "cpu")
    if scores.ndim == 2 and scores.shape[1] == 1:
        return (scores[:, 0] > 0).astype(np.int64)
    return scores.argmax(axis=-1)


def plot_decision_boundary(
    model: Module, X: Any, y: Any, ax: Any = None, resolution: int = 200, margin: float = 0.25
) -> Any:
    """Colour the plane by the class the model predicts and scatter the 2-D points (X, y) on top."""
    import matplotlib.pyplot as plt  # noqa: PLC0415 - lazy: only plotting needs matplotlib

    X = np.asarray(to_device(X.data if isinstance(X, Variable) else X, "cpu"))
    y = np.asarray(to_device(y.data if isinstance(y, Variable) else y, "cpu"))
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_decision_boundary: needs 2-D points of shape (N, 2), got {X.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5), layout="constrained")
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(X.dtype)
    was_training = model.training
    model.eval()
    try:
        classes = predict_classes(model, grid).reshape(gx.shape)
    finally:
        model.train(was_training)
    n_classes = int(max(classes.max(), y.max())) + 1
    ax.contourf(gx, gy, classes, levels=np.arange(n_classes + 1) - 0.5, cmap="coolwarm", alpha=0.3)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=12, edgecolors="k", linewidths=0.3)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    return ax
