"""Activations: threshold (relu), and softmax and log-softmax along one dim, computed stably."""

from __future__ import annotations

from typing import Any

from ..backend import get_array_module, python_number
from ..errors import ShapeError
from ..function import Function
from .utils import INTEGERS, float_data, normalize_dims


class Threshold(Function):
    """a where a > threshold, else value; relu is Threshold(0, 0), as in v0.1's nn.

    Its gradient passes only where a > threshold: 0 at the threshold itself, as PyTorch's relu
    gives (``clamp(min=0)`` passes it there, since a >= min counts as inside). Relu saves its
    output, as PyTorch's does; any other threshold saves its input.
    """

    def __init__(self, threshold: float = 0.0, value: float = 0.0) -> None:
        self.threshold = python_number(threshold)
        self.value = python_number(value)

    def forward(self, a):
        xp = get_array_module(a)
        if self.value == self.threshold:  # relu: one ufunc, several times faster than where
            output = xp.maximum(a, self.threshold)
            self.save_for_backward(output)
            return output
        self.save_for_backward(a)
        return xp.where(a <= self.threshold, self.value, a)  # written so that NaN passes, as in torch

    def backward(self, grad_output):
        (saved,) = self.saved_tensors
        # Products, since NumPy's where with a scattered mask runs about ten times slower. Both
        # masks are ~(a <= t), so that a NaN passes its gradient, as in torch: relu's output is
        # exactly t where a <= t, and NaN where a is NaN (maximum keeps NaN).
        if self.value == self.threshold:
            return grad_output * (saved != self.threshold)
        return grad_output * ~(saved <= self.threshold)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold!r}, value={self.value!r}"


def _one_dim(op: str, dim: Any) -> Any:
    """dim, if it is one int: softmax normalises along one dim (None or a tuple is refused, as in torch)."""
    if not isinstance(dim, INTEGERS) or isinstance(dim, bool):
        raise ShapeError(
            f"{op}: dim must be one int, the dim to normalise along (dim=-1: the last), got {dim!r}"
        )
    return dim


class Softmax(Function):
    """exp(a) / sum(exp(a)) along dim; backward: y * (g - sum(g * y))."""

    def __init__(self, dim: int = -1) -> None:
        self.dim = dim

    def forward(self, a):
        a = float_data(a)  # integers and booleans give float64, as the other float ops do
        # () for a 0-d a: its softmax is 1
        self.axis = axis = normalize_dims("softmax", _one_dim("softmax", self.dim), a.ndim)
        if a.size == 0:  # nothing to normalise (and NumPy's max refuses an empty reduction)
            result = a.copy()
        else:
            shifted = get_array_module(a).exp(a - a.max(axis=axis, keepdims=True))
            result = shifted / shifted.sum(axis=axis, keepdims=True)
        self.save_for_backward(result)
        return result

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        return y * (grad_output - (grad_output * y).sum(axis=self.axis, keepdims=True))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Function):
    """a - log(sum(exp(a))) along dim; backward: g - softmax(a) * sum(g)."""

    def __init__(self, dim: int = -1) -> None:
        self.dim = dim

    def forward(self, a):
        xp = get_array_module(a)
        a = float_data(a)  # integers and booleans give float64, as the other float ops do
        # () for a 0-d a: log 1 = 0
        self.axis = axis = normalize_dims("log_softmax", _one_dim("log_softmax", self.dim), a.ndim)
        if a.size == 0:  # nothing to normalise (and NumPy's max refuses an empty reduction)
            result = a.copy()
        else:
            shifted = a - a.max(axis=axis, keepdims=True)
            result = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
        self.save_for_backward(result)
        return result

    def backward(self, grad_output):
        (y,) = self.saved_tensors
        xp = get_array_module(y)
        return grad_output - xp.exp(y) * grad_output.sum(axis=self.axis, keepdims=True)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
