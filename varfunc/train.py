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
from .fit_checks import (
    array_pair,
    check_connected,
    check_optimizer,
    finite_before_training,
    no_batches,
    not_finite,
    positive_int,
)
from .inference import (  # noqa: F401 - evaluate, predict_classes and the plot are varfunc.train's too
    _evaluate,
    _in_model_dtype,
    _model_device,
    _modes_of,
    _one_value,
    _set_modes,
    evaluate,
    plot_decision_boundary,
    predict_classes,
)
from .nn import Module, default_rng


@dataclass
class History:
    """What fit() saw: the loss of every step, and per-epoch averages and metrics.

    ``losses[i]`` is the loss of step i; ``epoch_losses[e]`` the mean of epoch e's step losses, each
    weighted by its batch's rows (so a short last batch counts for what it holds): the loss over the
    epoch's rows for a loss that is a plain mean over rows, the default, but not for reduction='sum',
    class weights or ignore_index, whose batch losses are not per-row means;
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


def _rows(x: Any) -> int:
    """The samples in a batch's input: its rows (a tuple of inputs: the first one's)."""
    if isinstance(x, tuple):
        x = x[0]
    return len(x) if getattr(x, "ndim", 1) else 1


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
    stops fit before it changes the model, its mode or nn's generator. Before the first backward, fit
    checks that the loss reaches the parameters and is finite; a refused first step leaves nn's
    generator as it was too (the batch order and dropout's masks had drawn from it).
    Training stops early after ``max_steps`` steps or when a step's loss is below ``stop_loss``
    (the 2017 regression example's rule). ``callback(step, loss)`` runs after every step.
    ``history``: a History to add this run to (a new one by default). Pass one you hold to keep
    what a run saw when it is interrupted, or to continue one curve over several fit calls.
    The steps run in training mode and the metrics in eval mode; fit (even an interrupted one)
    leaves the model and each sub-Module in the mode it was in when fit was called.
    """
    positive_int("epochs", epochs)
    if batch_size is not None:
        positive_int("batch_size", batch_size)
    if max_steps is not None:
        positive_int("max_steps", max_steps)
    if history is not None and not isinstance(history, History):
        raise TypeError(f"fit: history must be a History (from an earlier fit), got {type(history).__name__}")
    if stop_loss is not None and (isinstance(stop_loss, bool) or not isinstance(stop_loss, (int, float))):
        raise TypeError(f"fit: stop_loss must be a number (e.g. 1e-3), got {stop_loss!r}")
    if callback is not None and not callable(callback):
        raise TypeError(f"fit: callback must be a function callback(step, loss), got {callback!r}")
    check_optimizer(model, optimizer)
    if isinstance(loss_fn, type):  # nn.CrossEntropyLoss, not nn.CrossEntropyLoss()
        raise TypeError(
            f"fit: loss_fn is the class {loss_fn.__name__}; pass an instance, {loss_fn.__name__}(), or a "
            "function such as nn.cross_entropy"
        )
    val_arrays = None
    if val_data is not None:
        val_arrays = None if isinstance(val_data, Minibatches) else array_pair(val_data, "val_data")
        if val_arrays is None:
            raise TypeError(
                f"fit: val_data must be an (X, y) pair of arrays, got {type(val_data).__name__}; "
                "pass val_data=(X_val, y_val)"
            )
    train_arrays = array_pair(train_data, "train_data")
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
    modes = _modes_of(model)  # put back when fit returns
    # tried on every row, in eval mode and without a graph, before anything changes: a mistake in
    # loss_fn, the metrics, val_data or the data (its shapes, a bad label, an inf) stops fit here
    _epoch_metrics(model, loss_fn, train_arrays, val_arrays, metrics, trial=True)  # (modes kept: _eval_mode)
    batches = train_data
    generator = default_rng()  # nn's: the batch order and dropout's masks draw from it
    drawn_from = generator.bit_generator.state  # put back if the first step is refused
    if makes_batches:
        if seed is None:  # from nn's generator: nn.manual_seed repeats a run, and each call shuffles anew
            seed = int(generator.integers(2**32))
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
        raise ValueError(f"fit: {no_batches(batches)}")
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
                loss = loss_fn(model(x), y)
                value = _one_value(loss, "fit")
                if history.steps == first_step:  # once: a loss cut from the model trains nothing
                    check_connected(loss, optimizer)
                if not math.isfinite(value):  # before the step: the weights that gave it stay to inspect
                    raise not_finite(value, history.steps + 1, model, x)
                optimizer.zero_grad()  # after the checks: a refused step leaves the gradients as they were
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
                raise ValueError(f"fit: epoch {epoch + 1}: {no_batches(batches)}")
            results = _epoch_metrics(model, loss_fn, train_arrays, val_arrays, metrics)
            _record_epoch(history, epoch_sum / epoch_count, *results)
            if stop:
                break
    except BaseException:
        if history.steps == first_step:  # refused before any step: nn's generator as it was, too
            generator.bit_generator.state = drawn_from
        raise
    finally:
        _set_modes(modes)
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
            finite_before_training(train.pop("loss"), "training data")  # the epochs': the steps' mean
    if val_arrays is not None:
        val = _evaluate(model, *val_arrays, loss_fn, metrics, where)
        if trial:
            finite_before_training(val["loss"], "val_data")
    return train, val


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
