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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data import Minibatches
from .data.loader import as_arrays
from .engine import ExecutionEngine
from .errors import ShapeError
from .inference import (  # noqa: F401 - evaluate, predict_classes and the plot are varfunc.train's too
    _evaluate,
    _in_model_dtype,
    _model_device,
    _one_value,
    evaluate,
    plot_decision_boundary,
    predict_classes,
)
from .nn import Module, default_rng
from .variable import Variable


@dataclass
class History:
    """What fit() saw: the loss of every step, and per-epoch averages and metrics.

    ``losses[i]`` is the loss of step i; ``epoch_losses[e]`` the mean over epoch e, each step
    weighted by its batch's rows (so a short last batch counts for what it holds);
    ``metrics['accuracy'][e]`` a metric on the training data after epoch e, and ``val_metrics`` the
    same on the validation data (with 'loss' among them). ``epoch_ends[e]`` is the number of steps
    taken when epoch e ended, ``val_ends`` the same for each epoch that was validated (a fit call
    without val_data adds none). ``seconds`` is fit's wall time, the evaluation after each epoch included.
    Passed back to fit (``history=``), it goes on filling: steps keep counting, times add up.
    """

    losses: list = field(default_factory=list)
    epoch_losses: list = field(default_factory=list)
    epoch_ends: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    val_metrics: dict = field(default_factory=dict)
    val_ends: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def steps(self) -> int:
        """The number of optimizer steps taken."""
        return len(self.losses)

    def plot(self, ax: Any = None, smooth: int = 0, log: bool = None) -> Any:
        """Draw the loss curve (per step, optionally a running mean over smooth steps); returns the axes."""
        import matplotlib.pyplot as plt  # lazy: only plotting needs matplotlib

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
        steps = np.arange(1, len(self.losses) + 1)
        ax.plot(steps, self.losses, lw=1, alpha=0.5 if smooth > 1 else 1.0, label="loss per step")
        if smooth > 1 and len(self.losses) >= smooth:
            running = np.convolve(self.losses, np.ones(smooth) / smooth, mode="valid")
            ax.plot(steps[smooth - 1 :], running, lw=2, label=f"mean of {smooth} steps")
        if "loss" in self.val_metrics:  # at the step where each epoch ended (max_steps may cut one short)
            ax.plot(self.val_ends, self.val_metrics["loss"], "o-", label="validation loss")
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


def _is_array(a: Any) -> bool:
    """An array, a Variable or a list of numbers (X.tolist()); a batch (x, y) is a tuple or holds arrays."""
    if hasattr(a, "shape"):
        return True
    return isinstance(a, list) and not any(isinstance(v, tuple) or getattr(v, "ndim", 0) > 0 for v in a)


def _array_pair(data: Any, name: str) -> tuple | None:
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


def _check_optimizer(model: Module, optimizer: Any) -> None:
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


def _check_connected(loss: Variable, optimizer: Any) -> None:
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


def _rows(x: Any) -> int:
    """The samples in a batch's input: its rows (a tuple of inputs: the first one's)."""
    if isinstance(x, tuple):
        x = x[0]
    return len(x) if getattr(x, "ndim", 1) else 1


def _positive_int(name: str, value: Any) -> None:
    """Refuse what cannot count epochs, steps or rows (a bool, a float, 0) before fit changes anything."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"fit: {name} must be an int, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"fit: {name} must be at least 1, got {value}")


def _no_batches(batches: Any) -> str:
    """Why train_data gives no batches, in words, for the error fit raises."""
    if isinstance(batches, Minibatches):
        return (
            f"train_data gives no batches: {batches.n_samples} rows, batch_size={batches.batch_size}, "
            f"drop_last={batches.drop_last}; give more rows, a smaller batch_size or drop_last=False"
        )
    return f"train_data ({type(batches).__name__}) gives no batches; give at least one (x, y) batch"


def fit(
    model: Module,
    loss_fn: Callable,
    optimizer: Any,
    train_data: Any,
    epochs: int = 1,
    *,
    batch_size: int | None = None,
    val_data: tuple | None = None,
    metrics: dict | None = None,
    max_steps: int | None = None,
    stop_loss: float | None = None,
    progress: bool = True,
    seed: Any = None,
    callback: Callable | None = None,
    history: History | None = None,
) -> History:
    """Train model for epochs over train_data and return the History.

    ``train_data`` is an iterable of (x, y) batches (e.g. ``Minibatches``), re-iterated each
    epoch, or the arrays (X, y) (NumPy arrays, Variables or lists), as a tuple or a list, cut into
    batches of batch_size (32 when None) in a new shuffled order each epoch. The order comes from
    ``seed``; with seed=None it is drawn from nn's generator, so nn.manual_seed makes a run repeatable
    and each fit call sees new orders. Floating-point arrays are cast to the model's dtype (float64
    data for float32 layers); batches you make yourself are used as they are.
    ``loss_fn(output, y)`` gets y as a Variable (as the batches hold it); ``metrics`` maps names to
    functions ``metric(output, y)`` (e.g. ``{'accuracy': nn.accuracy}``) that get y as an array,
    computed after each epoch on the whole training set (given as arrays or Minibatches of (X, y))
    and on ``val_data``, an (X, y) pair. The settings, the optimizer, and loss_fn and the metrics on
    the training arrays and val_data (in eval mode, without a graph: one forward pass each) are tried
    before the first step, so that a mistake in them, a label out of range or an inf or nan in a row
    stops fit before it changes the model, its mode or nn's generator; after the first backward, fit
    checks that the loss reached the parameters.
    Training stops early after ``max_steps`` steps or when a step's loss is below ``stop_loss``
    (the 2017 regression example's rule). ``callback(step, loss)`` runs after every step.
    ``history``: a History to add this run to (a new one by default). Pass one you hold to keep
    what a run saw when it is interrupted, or to continue one curve over several fit calls.
    """
    _positive_int("epochs", epochs)
    if batch_size is not None:
        _positive_int("batch_size", batch_size)
    if max_steps is not None:
        _positive_int("max_steps", max_steps)
    if history is not None and not isinstance(history, History):
        raise TypeError(f"fit: history must be a History (from an earlier fit), got {type(history).__name__}")
    if stop_loss is not None and (isinstance(stop_loss, bool) or not isinstance(stop_loss, (int, float))):
        raise TypeError(f"fit: stop_loss must be a number (e.g. 1e-3), got {stop_loss!r}")
    if callback is not None and not callable(callback):
        raise TypeError(f"fit: callback must be a function callback(step, loss), got {callback!r}")
    _check_optimizer(model, optimizer)
    if isinstance(loss_fn, type):  # nn.CrossEntropyLoss, not nn.CrossEntropyLoss()
        raise TypeError(
            f"fit: loss_fn is the class {loss_fn.__name__}; pass an instance, {loss_fn.__name__}(), or a "
            "function such as nn.cross_entropy"
        )
    val_arrays = None
    if val_data is not None:
        val_arrays = None if isinstance(val_data, Minibatches) else _array_pair(val_data, "val_data")
        if val_arrays is None:
            raise TypeError(
                f"fit: val_data must be an (X, y) pair of arrays, got {type(val_data).__name__}; "
                "pass val_data=(X_val, y_val)"
            )
    train_arrays = _array_pair(train_data, "train_data")
    if hasattr(train_data, "shape"):  # an array or a Variable: its rows would be taken for (x, y) batches
        raise TypeError("fit: train_data is one array; pass the pair (X, y), or batches of (x, y)")
    if train_arrays is None and (isinstance(train_data, (dict, str)) or not hasattr(train_data, "__iter__")):
        raise TypeError(
            f"fit: train_data must be the arrays (X, y) or an iterable of (x, y) batches (Minibatches), "
            f"got {type(train_data).__name__}"
        )
    if train_arrays is not None:
        train_arrays = _in_model_dtype(model, train_arrays)
    makes_batches = train_arrays is not None and not isinstance(train_data, Minibatches)
    for setting, value in (("batch_size", batch_size), ("seed", seed)):
        if value is not None and not makes_batches:
            sized = setting == "batch_size" and isinstance(train_data, Minibatches)
            own = f" (batch_size={train_data.batch_size})" if sized else ""
            raise ValueError(
                f"fit: {setting}={value!r} is for cutting arrays (X, y) into batches, but train_data is "
                f"{type(train_data).__name__}{own}, which makes its own; set it there"
            )
    metrics = dict(metrics or {})
    # tried on every row, in eval mode and without a graph, before anything changes: a mistake in
    # loss_fn, the metrics, val_data or the data (its shapes, a bad label, an inf) stops fit here
    _epoch_metrics(model, loss_fn, train_arrays, val_arrays, metrics, trial=True)
    batches = train_data
    if makes_batches:
        if seed is None:  # from nn's generator: nn.manual_seed repeats a run, and each call shuffles anew
            seed = int(default_rng().integers(2**32))
        batches = Minibatches(
            *train_arrays, batch_size=batch_size or 32, shuffle=True, seed=seed, device=_model_device(model)
        )
    if epochs > 1 and iter(batches) is batches:
        raise ValueError(
            f"fit: train_data is a one-shot iterator ({type(batches).__name__}), so epochs 2 to {epochs} "
            "would see no batches; pass Minibatches, a list of batches or the arrays (X, y)"
        )
    try:
        per_epoch = len(batches)
    except TypeError:
        per_epoch = None
    if per_epoch == 0:
        raise ValueError(f"fit: {_no_batches(batches)}")
    history = History() if history is None else history
    first_step = history.steps
    total = per_epoch * epochs if per_epoch is not None else None
    if max_steps is not None and total is not None:
        total = min(total, max_steps)
    bar = _progress_bar(total, progress)
    start = time.perf_counter() - history.seconds
    stop = False
    model.train()
    try:
        for epoch in range(epochs):
            epoch_sum, epoch_count = 0.0, 0
            for x, y in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                value = _one_value(loss, "fit")
                if history.steps == first_step:  # once: a loss cut from the model trains nothing
                    _check_connected(loss, optimizer)
                if not math.isfinite(value):  # before the step: the weights that gave it stay to inspect
                    raise FloatingPointError(
                        f"fit: the loss became {value} at step {history.steps + 1}; lower the learning "
                        "rate or check the inputs for inf/nan (the model keeps the weights that gave it)"
                    )
                loss.backward()
                optimizer.step()
                history.losses.append(value)
                rows = _rows(x)
                epoch_sum += value * rows
                epoch_count += rows
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(epoch=epoch + 1, loss=f"{value:.4g}", refresh=False)
                if callback is not None:
                    callback(history.steps, value)
                if (max_steps is not None and history.steps - first_step >= max_steps) or (
                    stop_loss is not None and value < stop_loss
                ):
                    stop = True
                    break
            if not epoch_count:  # an iterable without len() that ran dry
                raise ValueError(f"fit: epoch {epoch + 1}: {_no_batches(batches)}")
            results = _epoch_metrics(model, loss_fn, train_arrays, val_arrays, metrics)
            _record_epoch(history, epoch_sum / epoch_count, *results)
            if stop:
                break
    finally:
        history.seconds = time.perf_counter() - start
        if bar is not None:
            bar.close()
    return history


def _epoch_metrics(model, loss_fn, train_arrays, val_arrays, metrics, trial=False) -> tuple:
    """({metric: value} on the training arrays, {name: value} on val_data); trial: fit's try before the
    first step, which computes the loss on the training arrays too and refuses one that is inf or nan."""
    train, val = {}, {}
    where = "fit (tried on the data before training)" if trial else "fit"
    if (metrics or trial) and train_arrays is not None:
        train = _evaluate(model, *train_arrays, loss_fn if trial else None, metrics, where)
        if trial:
            _finite_before_training(train.pop("loss"), "training data")  # the epochs': the steps' mean
    if val_arrays is not None:
        val = _evaluate(model, *val_arrays, loss_fn, metrics, where)
        if trial:
            _finite_before_training(val["loss"], "val_data")
    return train, val


def _finite_before_training(loss: float, data: str) -> None:
    if not math.isfinite(loss):
        raise FloatingPointError(
            f"fit: the loss on the {data} is {loss} before the first step; look for inf or nan in its "
            "rows (np.isfinite(X).all()) or for a model that gives them"
        )


def _record_epoch(history: History, epoch_loss: float, train: dict, val: dict) -> None:
    """Add one epoch's figures to history, all together: an interrupted evaluation adds none."""
    history.epoch_losses.append(epoch_loss)
    history.epoch_ends.append(history.steps)
    for name, value in train.items():
        history.metrics.setdefault(name, []).append(value)
    if val:
        history.val_ends.append(history.steps)
    for name, value in val.items():
        history.val_metrics.setdefault(name, []).append(value)


def _progress_bar(total: int | None, progress: bool) -> Any:
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm  # lazy: only a progress bar needs tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="step", desc="fit")
