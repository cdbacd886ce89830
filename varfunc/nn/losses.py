"""Loss functions: the regression losses written with the core's ops, so backward comes from the graph.

The negative log-likelihood is one Function, as in 2017 (functions.NLLLoss), and cross_entropy is
LogSoftmax followed by it.

Each takes ``input`` (a Variable) and ``target`` (a Variable or an array) and a ``reduction``:
'mean' (the 2017 default, ``size_average=True``), 'sum', or 'none' (one loss per element/sample).
nll_loss and cross_entropy also take torch's ``weight`` (one per class) and ``ignore_index``, and
cross_entropy its ``label_smoothing``, by name (torch's third positional argument is ``weight``;
here it is ``reduction``); cross_entropy's target may also be class probabilities (N, C), as in torch 2.

Where torch is looser, the kit refuses, with an error that says what to write: nll_loss and
cross_entropy take scores (N, C) only (torch also takes one sample's (C,) and images' (N, C, d1, ...));
the regression losses take input and target of one shape (torch broadcasts an (N, 1) output against
an (N,) target with a warning, into an (N, N) loss, which is rarely what was meant).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import device_of, get_array_module, is_array, to_device
from ..errors import DeviceError, DTypeError, ShapeError
from ..shape_methods import cat
from ..variable import Variable
from . import functions
from .functions import REDUCTIONS


def _as_target(name: str, input: Any, target: Any) -> Variable:
    if not isinstance(input, Variable):
        raise DTypeError(f"{name}: input must be a Variable, got {type(input).__name__}")
    _check_device(name, input, "target", target)
    if isinstance(target, Variable):
        return target
    return Variable(to_device(_target_array(target), input.device), requires_grad=False)


def _check_devices(name: str, input: Variable, target: Any, weight: Any) -> None:
    """_check_device for a classification loss's target and its class weights (None: none given)."""
    for what, value in (("target", target), ("weight", weight)):
        if value is not None:
            _check_device(name, input, what, value)


def _check_device(name: str, input: Variable, what: str, value: Any) -> None:
    """A DeviceError, as torch gives, for a Variable or a GPU array on another device than input (a
    copy on every call would hide where the data should live); a host array may go to the GPU, as
    x + array takes it there."""
    device = device_of(_target_array(value))
    if device != input.device and (isinstance(value, Variable) or device != "cpu"):
        raise DeviceError(
            f"{name}: input is on {input.device} but {what} is on {device}; move the {what} to "
            f"the input's device first, once (.cuda() or .cpu())"
        )


def _reduce(name: str, loss: Variable, reduction: str) -> Variable:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def _difference(name: str, input: Any, target: Any) -> Variable:
    target = _as_target(name, input, target)
    if input.shape != target.shape:
        hint = ""
        if input.shape[:1] == target.shape[:1] and 1 in (input.shape[-1:] + target.shape[-1:]):
            hint = " (an (N, 1) output against an (N,) target? reshape one with .view(-1) or .view(-1, 1))"
        raise ShapeError(
            f"{name}: input has shape {input.shape} but target has shape {target.shape}; they must "
            f"match{hint}"
        )
    return input - target


def mse_loss(input: Variable, target: Any, reduction: str = "mean") -> Variable:
    """Mean squared error: mean((input - target) ** 2)."""
    return _reduce("mse_loss", _difference("mse_loss", input, target) ** 2, reduction)


def l1_loss(input: Variable, target: Any, reduction: str = "mean") -> Variable:
    """Mean absolute error: mean(|input - target|)."""
    return _reduce("l1_loss", _difference("l1_loss", input, target).abs(), reduction)


def smooth_l1_loss(input: Variable, target: Any, reduction: str = "mean", beta: float = 1.0) -> Variable:
    """Huber-like loss: 0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target).

    Written as 0.5 q**2 / beta + relu(|d| - beta) with q = min(|d|, beta): the quadratic part stops
    growing at beta and the linear part takes over, with no branch. (``|d| - q`` has the same value,
    but its gradient there is ``g - g`` plus ``g d / beta``, and rounding eats a small residual's
    share.) 2017 had beta fixed at 1; beta=0 is the L1 loss, as in PyTorch.
    """
    if not beta >= 0:  # (also refuses NaN)
        raise ValueError(f"smooth_l1_loss: beta must be 0 or more, got {beta}")
    if beta == 0:
        return l1_loss(input, target, reduction)
    distance = _difference("smooth_l1_loss", input, target).abs()
    capped = distance.clamp(max=beta)
    # (capped / beta) * capped, not capped**2 * (0.5 / beta): 0.5 / beta overflows for a tiny beta
    loss = (capped / beta) * capped * 0.5 + (distance - beta).relu()
    return _reduce("smooth_l1_loss", loss, reduction)


def log_softmax(input: Variable, dim: int = -1) -> Variable:
    """log(softmax(input)) along dim, computed stably by the core's LogSoftmax."""
    return input.log_softmax(dim)


def nll_loss(
    input: Variable,
    target: Any,
    reduction: str = "mean",
    *,
    weight: Any = None,
    ignore_index: int = -100,
) -> Variable:
    """Negative log-likelihood: -input[i, target[i]], for input of log-probabilities (N, C).

    ``weight`` (C,) scales each class's loss ('mean' then divides by the weights summed over the
    rows); a row whose target is ``ignore_index`` adds nothing and is not counted, as in torch.
    """
    if not isinstance(input, Variable):
        raise DTypeError(
            f"nll_loss: input must be a Variable, got {type(input).__name__}; wrap an array of "
            "log-probabilities as Variable(array)"
        )
    if input.ndim != 2:
        raise ShapeError(
            f"nll_loss: input must have shape (N, C), one row of C log-probabilities per sample, got "
            f"{input.shape}; for one sample, use x.unsqueeze(0)"
        )
    _check_devices("nll_loss", input, target, weight)
    return _nll_function(input, target, reduction, weight, ignore_index)[0](input)


def _nll_function(input: Variable, target: Any, reduction: str, weight: Any, ignore_index: int) -> tuple:
    """(the NLLLoss Function for this input, not yet called; the class weights or None), with the
    arguments checked, each row's weight picked and the ignored rows marked, all on input's device."""
    _check_options(reduction, ignore_index)
    class_weights = None if weight is None else _class_weights(weight, input)
    labels, ignored = _ignored_rows(_labels(target, input), input.shape[1], ignore_index)
    row_weights = None if class_weights is None else class_weights[labels].astype(input.dtype)
    return functions.NLLLoss(labels, reduction, row_weights, ignored), class_weights


def _ignored_rows(labels: Any, classes: int, ignore_index: int) -> tuple:
    """(labels, each ignored row's set to class 0; the mask of ignored rows, or None), or a ValueError
    for a class out of range. Computed where the labels are: in the usual case (every class in
    range, ignore_index outside it) one reduction, whose answer is the only thing that reaches the host."""
    outside = (labels < 0) | (labels >= classes)
    if not (0 <= ignore_index < classes or outside.any()):
        return labels, None
    ignored = labels == ignore_index
    bad = outside & ~ignored
    if bad.any():
        valid = f"0 to {classes - 1}" if classes else "its second dimension is 0: no class is valid"
        raise ValueError(
            f"cross_entropy/nll_loss: target holds class {int(labels[bad][0])} but input has {classes} "
            f"classes ({valid})"
        )
    if not ignored.any():
        return labels, None
    return get_array_module(labels).where(ignored, 0, labels), ignored  # 0: any valid class will do


def _check_options(reduction: Any, ignore_index: Any) -> None:
    """Raise a TypeError unless reduction is a string and ignore_index an int."""
    if not isinstance(reduction, str):  # torch's third argument is weight
        raise TypeError(
            f"cross_entropy/nll_loss: reduction must be one of {REDUCTIONS}, got a "
            f"{type(reduction).__name__}; pass class weights by name: weight=..."
        )
    if not isinstance(ignore_index, (int, np.integer)) or isinstance(ignore_index, bool):
        raise TypeError(f"cross_entropy/nll_loss: ignore_index must be an int, got {ignore_index!r}")


def _labels(target: Any, input: Variable) -> Any:
    """target as integer class indices (N,) on input's device, checked on its dtype and shape (no
    copy to the host), or a clear error."""
    labels, shape = _target_array(target), input.shape
    if labels.size == 0 and isinstance(target, (list, tuple)):  # NumPy reads [] as float64
        labels = labels.astype(np.int64)
    if labels.dtype.kind not in "iu":
        if labels.shape == shape:  # one-hot rows, or class probabilities given to nll_loss
            fix = (
                "for one-hot rows pass labels.argmax(axis=1); class probabilities (floating point, "
                "like input) go to cross_entropy, which takes scores"
            )
        elif labels.dtype.kind == "f" and labels.ndim == 2:  # probabilities, but not one row per input row
            fix = (
                f"class probabilities must have the input's shape {shape}, got {labels.shape}; class "
                "indices are integers of shape (N,)"
            )
        else:
            fix = "use labels.astype(np.int64)"
        raise DTypeError(
            f"cross_entropy/nll_loss: target must hold integer class indices, got dtype {labels.dtype}; {fix}"
        )
    if labels.shape != shape[:1]:
        one_hot = " (one-hot rows? pass labels.argmax(axis=1))" if labels.shape == shape else ""
        raise ShapeError(
            f"cross_entropy/nll_loss: input has shape {shape}, so target must have shape ({shape[0]},) "
            f"(one class index per row), got {labels.shape}{one_hot}"
        )
    return to_device(labels, input.device)


def _class_weights(weight: Any, input: Variable) -> Any:
    """weight as a float array (C,) on input's device, or a clear error (a constant: no gradient
    reaches it)."""
    classes = input.shape[1]
    if isinstance(weight, Variable) and weight.requires_grad:
        raise DTypeError(
            "cross_entropy/nll_loss: weight is a constant and gets no gradient; pass an array "
            "(weight.data), or a Variable that does not require grad"
        )
    array = _target_array(weight)
    if array.dtype.kind not in "fiub":
        raise DTypeError(
            f"cross_entropy/nll_loss: weight must be numbers, one per class, got dtype {array.dtype}"
        )
    if array.shape != (classes,):
        raise ShapeError(
            f"cross_entropy/nll_loss: weight must have one entry per class, shape ({classes},), "
            f"got {array.shape}"
        )
    return to_device(array.astype(np.float64), input.device)


def cross_entropy(
    input: Variable,
    target: Any,
    reduction: str = "mean",
    *,
    weight: Any = None,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Variable:
    """Softmax cross-entropy from raw scores (N, C) and integer labels (N,): nll_loss(log_softmax(x)).

    ``label_smoothing`` e mixes in the loss against the uniform target, as torch does:
    (1 - e) * nll + e / C * (-sum over classes of weight * log-probability), reduced alike.
    ``target`` may also hold class probabilities, floating point and shaped like input (torch 2's
    second form): see _probability_target_loss.
    """
    if not isinstance(input, Variable):
        raise DTypeError(
            f"cross_entropy: input must be a Variable, got {type(input).__name__}; wrap an array of "
            "scores as Variable(array)"
        )
    if input.ndim != 2:
        raise ShapeError(
            f"cross_entropy: input must be scores of shape (N, C), got {input.shape}; for one sample, "
            "use x.unsqueeze(0)"
        )
    number = isinstance(label_smoothing, (int, float, np.floating)) and not isinstance(label_smoothing, bool)
    if not (number and 0 <= label_smoothing <= 1):
        raise ValueError(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing!r}"
        )
    _check_devices("cross_entropy", input, target, weight)  # before any op is recorded
    log_probs = log_softmax(input, dim=1)
    if _holds_probabilities(target, input.shape):
        return _probability_target_loss(log_probs, target, reduction, weight, ignore_index, label_smoothing)
    nll, class_weights = _nll_function(log_probs, target, reduction, weight, ignore_index)
    loss = nll(log_probs)
    if not label_smoothing:
        return loss
    smoothing = float(label_smoothing)
    uniform = _uniform_target_loss(log_probs, nll, class_weights)
    return loss * (1 - smoothing) + uniform * (smoothing / input.shape[1])


def _holds_probabilities(target: Any, shape: tuple) -> bool:
    """Whether target is class probabilities: floating-point numbers shaped like the scores (N, C)."""
    array = _target_array(target)
    return array.dtype.kind == "f" and array.shape == shape


def _target_array(target: Any) -> Any:
    """target's array where it lies: a Variable's data, an array, or a list or torch tensor converted."""
    array = target.data if isinstance(target, Variable) else target
    return array if is_array(array) else np.asarray(array)


def _probability_target_loss(
    log_probs: Variable, target: Any, reduction: str, weight: Any, ignore_index: int, smoothing: float
) -> Variable:
    """-sum_c weight_c * p_c * log q_c per row, for class probabilities p (N, C), reduced.

    As in torch: smoothing mixes the uniform target into p first, 'mean' divides by N whatever the
    weights, and no row can be ignored. A target that requires grad gets its gradient too.
    """
    _check_options(reduction, ignore_index)
    if ignore_index >= 0:
        raise ValueError(
            f"cross_entropy: ignore_index={ignore_index} needs class indices; this target holds class "
            f"probabilities (N, C): give an ignored row probabilities of 0 instead"
        )
    classes = log_probs.shape[1]
    class_weights = None if weight is None else _class_weights(weight, log_probs)
    target = _as_target("cross_entropy", log_probs, target)
    if smoothing:
        target = target * (1 - float(smoothing)) + float(smoothing) / classes
    products = log_probs * target
    if class_weights is not None:
        products = products * class_weights.astype(log_probs.dtype)
    return _reduce("cross_entropy", -products.sum(1), reduction)


def _uniform_target_loss(log_probs: Variable, nll: functions.NLLLoss, class_weights: Any) -> Variable:
    """-sum_c w_c * log p_c per row, the ignored rows 0, reduced as nll reduces (torch's rule: 'mean'
    divides by the same weights of the rows kept)."""
    if class_weights is not None:
        log_probs = log_probs * class_weights.astype(log_probs.dtype)
    per_row = -log_probs.sum(1)
    if nll.ignored is None:
        kept = per_row
    else:  # indexed, not multiplied by 0: a row of -inf scores would give nan (inf * 0), even ignored
        xp = get_array_module(nll.ignored)
        kept = per_row[xp.flatnonzero(~nll.ignored)]
    if nll.reduction == "none":
        if nll.ignored is None:
            return per_row
        # each kept row from its place in kept, each ignored one from a 0 put after them
        places = xp.where(nll.ignored, len(kept), xp.cumsum(~nll.ignored) - 1)
        return cat([kept, Variable(xp.zeros(1, dtype=kept.dtype), requires_grad=False)])[places]
    return kept.sum() if nll.reduction == "sum" else kept.sum() / nll.kept_weight()


def classes_from_scores(
    scores: np.ndarray, threshold: float | None = None, *, caller: str = "classes_from_scores"
) -> np.ndarray:
    """The class each row's scores pick: the largest; one score per row: 1 above threshold, else 0.

    One score per row (shape (N,) or (N, 1)) is a binary classifier's, and only its maker knows what
    it is: pass threshold=0.5 for a probability (a Sigmoid's output, or a model trained toward 0/1
    targets with mse_loss), threshold=0.0 for a logit. It is not guessed from the values (torchmetrics
    reads them as probabilities when all lie in [0, 1]): one row above 1 would change every other row.
    caller: the name its errors give (accuracy and predict_classes pass theirs).
    """
    if scores.ndim == 1 or (scores.ndim == 2 and scores.shape[1] == 1):
        if threshold is None:
            raise ValueError(
                f"{caller}: one score per row (shape {scores.shape}) is 1 or 0 only by a threshold: pass "
                "threshold=0.5 if it is a probability (a Sigmoid's output, or trained toward 0/1 with "
                "mse_loss), threshold=0.0 if it is a logit; in fit's metrics: "
                "{'accuracy': lambda out, y: nn.accuracy(out, y, threshold=0.5)}"
            )
        return (scores.reshape(-1) > threshold).astype(np.int64)
    if scores.ndim > 2:  # (N, T, C) or torch's (N, C, T)? Only its maker knows which dim holds the classes
        raise ShapeError(
            f"{caller}: scores of shape {scores.shape} have more than one dim besides the rows; pass (N, C) "
            "scores: scores.reshape(-1, C) for (N, T, C), np.moveaxis(scores, 1, -1).reshape(-1, C) for "
            "torch's (N, C, T) layout, and the labels flattened to match"
        )
    if threshold is not None:
        raise ValueError(
            f"{caller}: threshold is for one score per row; these scores have {scores.shape[-1]} per row "
            f"(shape {scores.shape}), and the largest picks the class"
        )
    return scores.argmax(axis=-1)


def accuracy(input: Any, target: Any, threshold: float | None = None) -> float:
    """The fraction of rows whose predicted class is the target (a metric, not differentiable).

    The predicted class is the largest score's; one score per row needs a threshold (see
    classes_from_scores).
    """
    scores, labels = _on_cpu(input), _on_cpu(target)
    if scores.dtype.kind not in "biuf" or labels.dtype.kind not in "biuf":
        raise DTypeError(
            f"accuracy: takes scores and class labels, arrays of numbers, got {scores.dtype} scores and "
            f"{labels.dtype} labels; pass the model's output and the targets"
        )
    if scores.ndim == 0:
        raise ShapeError(
            "accuracy: the scores are one number; pass one row of scores per sample, (N, C) or (N,)"
        )
    predicted = classes_from_scores(scores, threshold, caller="accuracy")
    if labels.size != predicted.size:
        raise ShapeError(
            f"accuracy: scores of shape {scores.shape} give {predicted.size} predictions but there are "
            f"{labels.size} labels (shape {labels.shape}); pass one label per row"
        )
    return float((predicted == labels.reshape(predicted.shape)).mean())


def _on_cpu(x: Any) -> np.ndarray:
    x = x.data if isinstance(x, Variable) else x
    return to_device(x, "cpu") if hasattr(x, "shape") else np.asarray(x)
