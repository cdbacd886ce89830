"""The losses as Modules, as torch.nn has them: each keeps its settings (reduction, class weights,
the index to ignore, label smoothing, beta) and calls the function of the same name in losses.py."""

from __future__ import annotations

from typing import Any

from ..errors import DTypeError
from ..variable import Variable
from .functions import REDUCTIONS
from .losses import cross_entropy, l1_loss, mse_loss, nll_loss, smooth_l1_loss
from .module import Module


class _Loss(Module):
    function: Any = None

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in REDUCTIONS:  # now, not at the first call
            raise ValueError(
                f"{type(self).__name__}: reduction must be one of {REDUCTIONS}, got {reduction!r}"
            )
        self.reduction = reduction

    def forward(self, input: Variable, target: Any) -> Variable:
        return type(self).function(input, target, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class MSELoss(_Loss):
    """Module form of mse_loss."""

    function = staticmethod(mse_loss)


class L1Loss(_Loss):
    """Module form of l1_loss."""

    function = staticmethod(l1_loss)


class SmoothL1Loss(_Loss):
    """Module form of smooth_l1_loss."""

    function = staticmethod(smooth_l1_loss)

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Variable, target: Any) -> Variable:
        return smooth_l1_loss(input, target, self.reduction, beta=self.beta)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, beta={self.beta}"


class _ClassLoss(_Loss):
    """A loss over class indices: it also keeps the class weights and the index to ignore."""

    def __init__(self, weight: Any = None, *, ignore_index: int = -100, reduction: str = "mean") -> None:
        if isinstance(weight, str):  # CrossEntropyLoss('sum'): weight comes first, as in torch
            raise DTypeError(
                f"{type(self).__name__}: the first argument is weight (class weights), got {weight!r}; "
                f"for the reduction write reduction={weight!r}"
            )
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Variable, target: Any) -> Variable:
        return type(self).function(input, target, self.reduction, **self._options())

    def _options(self) -> dict:
        return {"weight": self.weight, "ignore_index": self.ignore_index}


class CrossEntropyLoss(_ClassLoss):
    """Module form of cross_entropy."""

    function = staticmethod(cross_entropy)

    def __init__(
        self,
        weight: Any = None,
        *,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, ignore_index=ignore_index, reduction=reduction)
        self.label_smoothing = label_smoothing

    def _options(self) -> dict:
        return {**super()._options(), "label_smoothing": self.label_smoothing}


class NLLLoss(_ClassLoss):
    """Module form of nll_loss."""

    function = staticmethod(nll_loss)
