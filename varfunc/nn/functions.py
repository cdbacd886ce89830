"""nn's own Functions: a linear layer, dropout and the negative log-likelihood, each one node of the graph.

PyTorch's nn of 2016-2017 did the same: ``nn.Linear`` called a ``Linear`` Function (forward an
``addmm``, backward three matrix products) and ``NLLLoss`` was a THNN Function. Built from the
core's ops instead, a linear layer is three nodes (``Matmul``, ``Transpose``, ``Add``) and the loss
three more (``Index``, ``Negate``, ``Mean``); one node each keeps the same gradients with fewer arrays
made and copied per step (the weight's gradient no longer arrives through ``Transpose`` as a view,
so the Leaf can keep it). tests/test_nn_functions.py checks both against the composition.

Linear saves the weight's own array, as PyTorch does (the composition saved a transposed copy): a
weight changed in place between forward and backward (``optimizer.step()`` before ``backward()``)
is an InplaceError, where the composition silently used the old weight.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import device_of, get_array_module, to_device
from ..errors import DTypeError, ShapeError
from ..function import Function

REDUCTIONS = ("mean", "sum", "none")


class Linear(Function):
    """input @ weight.T + bias, for input (..., in_features) and weight (out_features, in_features)."""

    backward_makes_new_arrays = True  # every gradient is a product or a sum: a new array

    def forward(self, input, weight, bias=None):
        _check_linear_shapes(input, weight, bias)
        self.save_for_backward(input, weight)
        output = input @ weight.T
        if bias is None:
            return output
        if get_array_module(output).result_type(output, bias) == output.dtype:
            output += bias  # into the product's own array: no second (N, out) array
            return output
        return output + bias  # a wider bias dtype: the result widens, as x @ W.T + b would

    def backward(self, grad_output):
        input, weight = self.saved_tensors
        needs = self.needs_input_grad
        # Every leading dim of input is a batch dim: flatten them, so each sum is one product.
        # (The row count is given, not -1: a layer may have 0 in or out features.)
        rows = math.prod(input.shape[:-1])
        rows_out = grad_output.reshape(rows, weight.shape[0])
        grad_input = grad_output @ weight if needs[0] else None
        grad_weight = rows_out.T @ input.reshape(rows, weight.shape[1]) if needs[1] else None
        if len(needs) == 2:
            return grad_input, grad_weight
        grad_bias = rows_out.sum(axis=0) if needs[2] else None
        return grad_input, grad_weight, grad_bias

    def name(self) -> str:
        """The grad_fn name PyTorch 2 shows for F.linear on the same shapes: its last node's."""
        if self.input_shapes is None:  # not called yet: the common case's name
            return super().name()
        ndim, has_bias = len(self.input_shapes[0]), len(self.input_shapes) == 3
        if ndim == 2:
            return "AddmmBackward0" if has_bias else "MmBackward0"
        if ndim == 1:
            return "ViewBackward0" if has_bias else "SqueezeBackward4"
        return "ViewBackward0" if has_bias else "UnsafeViewBackward0"

    def merged_nodes(self) -> tuple:
        """The other nodes of F.linear's graph in PyTorch 2: the weight's transpose, and around the
        matrix product of a batch that is not 2-D the views that flatten it and put it back."""
        if self.input_shapes is None or len(self.input_shapes[0]) == 2:
            return ("TBackward0",)
        if len(self.input_shapes) == 3:
            return ("AddmmBackward0", "ViewBackward0", "TBackward0")
        flattened = "UnsqueezeBackward0" if len(self.input_shapes[0]) == 1 else "ViewBackward0"
        return ("MmBackward0", flattened, "TBackward0")


def _check_linear_shapes(input: Any, weight: Any, bias: Any) -> None:
    """Raise a ShapeError that names the layer's sizes unless input, weight and bias fit together."""
    if weight.ndim != 2:
        raise ShapeError(f"linear: weight must be (out_features, in_features), got shape {weight.shape}")
    out_features, in_features = weight.shape
    if input.ndim == 0 or input.shape[-1] != in_features:
        raise ShapeError(
            f"linear: input of shape {input.shape} does not fit weight {weight.shape}: the input's last "
            f"dim must be in_features = {in_features}"
        )
    if bias is not None and bias.shape != (out_features,):
        raise ShapeError(
            f"linear: bias must have shape ({out_features},) for weight {weight.shape}, got "
            f"{bias.shape}; for a bias of another shape write input.matmul(weight.t()) + bias"
        )


class Dropout(Function):
    """input * mask / (1 - p): each element kept with probability 1 - p, the mask drawn in forward.

    As v0.1's nn Dropout Function: backward multiplies by the same scaled mask. The mask is drawn on
    the CPU from ``rng`` (nn's generator, so nn.manual_seed repeats it) and moved to input's device.
    """

    def __init__(self, p: float, rng: np.random.Generator) -> None:
        self.p, self.rng = p, rng

    def forward(self, input):
        if input.dtype.kind not in "fc":
            raise DTypeError(f"dropout: input must hold floating-point numbers, got {input.dtype}")
        kept = self.rng.random(input.shape) >= self.p
        # p = 1 keeps nothing: zeros, as in torch (1 / (1 - p) would be a division by zero)
        scale = 0.0 if self.p == 1 else 1 / (1 - self.p)
        self.noise = to_device((kept * scale).astype(input.dtype), device_of(input))
        return input * self.noise

    def backward(self, grad_output):
        return grad_output * self.noise

    def extra_repr(self) -> str:
        return f"p={self.p}"


class NLLLoss(Function):
    """-input[i, target[i]] for log-probabilities (N, C): averaged, summed or one per row.

    As in torch, ``row_weights`` (N,) scales each row's loss by its target's class weight, rows
    marked ``ignored`` add 0, and 'mean' divides by the weights of the rows kept (nan if none are).
    """

    def __init__(
        self, target: Any, reduction: str = "mean", row_weights: Any = None, ignored: Any = None
    ) -> None:
        if reduction not in REDUCTIONS:
            raise ValueError(f"nll_loss: reduction must be one of {REDUCTIONS}, got {reduction!r}")
        self.target = target.copy()  # class indices (N,), checked by nll_loss; later changes to
        # the caller's array must not move the gradient
        self.reduction = reduction
        self.row_weights = row_weights  # None: each row weighs 1
        self.ignored = ignored  # None: no row is ignored

    def forward(self, input):
        self.rows = get_array_module(input).arange(input.shape[0])
        losses = -input[self.rows, self.target]
        if self.reduction == "none":
            return self._weighted(losses)
        if self.reduction == "sum":
            return self._weighted(losses).sum()
        if self.row_weights is None and self.ignored is None:
            return losses.mean()
        return self._weighted(losses).sum() / self.kept_weight()

    def backward(self, grad_output):
        xp = get_array_module(grad_output)
        grad = xp.zeros(self.input_shapes[0], dtype=grad_output.dtype)
        if self.reduction == "mean":
            grad_output = grad_output / self.kept_weight()
        if self.row_weights is not None or self.ignored is not None:
            grad_output = self._weighted(xp.broadcast_to(grad_output, self.rows.shape))
        grad[self.rows, self.target] = -grad_output  # one picked place per row: nothing adds up
        return grad

    def _weighted(self, per_row: Any) -> Any:
        """per_row (N,) times each row's weight, 0 for an ignored row (even where it is inf or nan)."""
        if self.row_weights is not None:
            with np.errstate(invalid="ignore"):  # 0 * inf is nan, as in torch
                per_row = per_row * self.row_weights
        if self.ignored is not None:
            per_row = get_array_module(per_row).where(self.ignored, 0, per_row)
        return per_row

    def kept_weight(self) -> Any:
        """What 'mean' divides by: the rows kept, each counted with its weight; nan if that is 0."""
        if self.row_weights is None:
            kept = len(self.rows) - (0 if self.ignored is None else int(self.ignored.sum()))
        elif self.ignored is None:
            kept = self.row_weights.sum()
        else:
            kept = get_array_module(self.ignored).where(self.ignored, 0, self.row_weights).sum()
        return kept if kept else math.nan  # torch's 0 / 0: the loss is nan, the kept rows' gradients too

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"
