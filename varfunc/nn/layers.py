"""Layers: Linear (with 2017's default initialisation), the activations and Dropout."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import check_flag, to_device
from ..errors import DTypeError, ShapeError
from ..variable import Variable
from . import functions
from .module import Module, Parameter

_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator of new layers' weights and of dropout masks (as torch.manual_seed did for nn)."""
    global _rng
    _rng = np.random.default_rng(seed)


def default_rng() -> np.random.Generator:
    """The generator new layers draw their initial weights from, and dropout its masks."""
    return _rng


def linear(input: Variable, weight: Variable, bias: Variable | None = None) -> Variable:
    """input @ weight.t() + bias as one Function (functions.Linear); weight is (out_features, in_features)."""
    if bias is None:
        return functions.Linear()(input, weight)
    return functions.Linear()(input, weight, bias)


def dropout(input: Variable, p: float = 0.5, training: bool = True) -> Variable:
    """Zero each element with probability p, scale the rest by 1 / (1 - p); input as is if not training."""
    _check_probability(p)
    check_flag("dropout", "training", training)
    if not training or p == 0:
        return input
    return functions.Dropout(float(p), _rng)(input)


def _check_probability(p: Any) -> None:
    if not (isinstance(p, (int, float, np.floating)) and not isinstance(p, bool) and 0 <= p <= 1):
        raise ValueError(f"dropout: p is a probability, between 0 and 1, got {p!r}")


class Linear(Module):
    """y = x @ W.t() + b for x of shape (..., in_features).

    Initialised as 2017's ``torch.nn.Linear.reset_parameters``: weight and bias uniform in
    (-1/sqrt(in_features), 1/sqrt(in_features)). Today's PyTorch writes the weight's draw as
    ``kaiming_uniform_(a=sqrt(5))``, which comes to the same bound. Parameters are float32
    (PyTorch's default) unless dtype says otherwise; ``rng`` (a NumPy Generator) overrides the
    generator set by manual_seed.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> None:
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"Linear: {name} must be a positive integer, got {value!r}")
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = Parameter(np.zeros((self.out_features, self.in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(np.zeros(self.out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(rng)

    def reset_parameters(self, rng: np.random.Generator | None = None) -> None:
        """Draw new weights: uniform(-stdv, stdv) with stdv = 1 / sqrt(in_features)."""
        rng = rng or _rng
        stdv = 1.0 / math.sqrt(self.in_features)
        for param in (self.weight, self.bias):
            if param is not None:  # drawn on the CPU (one generator for every device), then moved
                param.data = to_device(
                    rng.uniform(-stdv, stdv, param.shape).astype(param.dtype), param.device
                )

    def forward(self, input: Variable) -> Variable:
        _expect_a_variable(self, input)
        if input.ndim == 0 or input.shape[-1] != self.in_features:
            raise ShapeError(
                f"{self!r}: expected input of shape (N, {self.in_features}) (last dim = "
                f"in_features = {self.in_features}), got shape {input.shape}"
            )
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


def _expect_a_variable(module: Module, input: Any) -> None:
    if not isinstance(input, Variable):
        raise DTypeError(
            f"{module!r}: expected a Variable, got {type(input).__name__}; "
            "wrap the array with Variable(x, requires_grad=False)"
        )


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, input: Variable) -> Variable:
        _expect_a_variable(self, input)
        return input.relu()


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: Variable) -> Variable:
        _expect_a_variable(self, input)
        return input.tanh()


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Variable) -> Variable:
        _expect_a_variable(self, input)
        return input.sigmoid()


class Dropout(Module):
    """dropout while training (each element zeroed with probability p); the identity after eval()."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        _check_probability(p)  # now, not at the first forward
        self.p = p

    def forward(self, input: Variable) -> Variable:
        return dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
