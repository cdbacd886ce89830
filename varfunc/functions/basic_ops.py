"""Arithmetic between two Variables, and between a Variable and a constant number."""

from __future__ import annotations

import math
from typing import Any

from ..backend import get_array_module
from ..errors import InplaceError
from ..function import Function, InplaceFunction
from .utils import broadcast_error, sum_to_shape


class Add(InplaceFunction):
    """a + b."""

    def forward(self, a, b):
        if self.inplace:
            self.mark_dirty(a)
            a += b
            return a
        try:
            return a + b
        except ValueError:
            raise broadcast_error("add", a, b) from None

    def backward(self, grad_output):
        shape_a, shape_b = self.input_shapes
        # The same array twice when nothing was broadcast: the engine copies before summing into it.
        return sum_to_shape(grad_output, shape_a), sum_to_shape(grad_output, shape_b)


class Sub(InplaceFunction):
    """a - b."""

    def forward(self, a, b):
        if self.inplace:
            self.mark_dirty(a)
            a -= b
            return a
        try:
            return a - b
        except ValueError:
            raise broadcast_error("sub", a, b) from None

    def backward(self, grad_output):
        shape_a, shape_b = self.input_shapes
        return sum_to_shape(grad_output, shape_a), sum_to_shape(-grad_output, shape_b)


class Mul(Function):
    """a * b (elementwise)."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        try:
            return a * b
        except ValueError:
            raise broadcast_error("mul", a, b) from None

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = sum_to_shape(grad_output * b, a.shape) if self.needs_input_grad[0] else None
        grad_b = sum_to_shape(grad_output * a, b.shape) if self.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    """a / b (elementwise)."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        try:
            return a / b
        except ValueError:
            raise broadcast_error("div", a, b) from None

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = sum_to_shape(grad_output / b, a.shape) if self.needs_input_grad[0] else None
        grad_b = sum_to_shape(-grad_output * a / (b * b), b.shape) if self.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """a ** b (elementwise)."""

    def forward(self, a, b):
        try:
            result = a**b
        except ValueError:
            raise broadcast_error("pow", a, b) from None
        self.save_for_backward(a, b, result)
        return result

    def backward(self, grad_output):
        a, b, result = self.saved_tensors
        xp = get_array_module(a)
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = sum_to_shape(grad_output * b * a ** (b - 1), a.shape)
        if self.needs_input_grad[1]:
            # d(a^b)/db = a^b ln a; where a == 0 the limit is 0 (as PyTorch), not 0 * -inf.
            log_a = xp.log(xp.where(a == 0, 1, a))
            grad_b = sum_to_shape(grad_output * result * log_a, b.shape)
        return grad_a, grad_b


class AddConstant(InplaceFunction):
    """a + c for a number c."""

    def __init__(self, constant: Any, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.constant = constant

    def forward(self, a):
        if self.inplace:
            self.mark_dirty(a)
            a += self.constant
            return a
        return a + self.constant

    def backward(self, grad_output):
        return grad_output

    def extra_repr(self) -> str:
        return repr(self.constant)


class SubConstant(InplaceFunction):
    """a - c, or c - a when sub_tensor is True."""

    def __init__(self, constant: Any, sub_tensor: bool = False, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.constant = constant
        self.sub_tensor = sub_tensor

    def forward(self, a):
        if self.inplace:
            self.mark_dirty(a)
            if self.sub_tensor:
                a *= -1
                a += self.constant
            else:
                a -= self.constant
            return a
        return self.constant - a if self.sub_tensor else a - self.constant

    def backward(self, grad_output):
        return -grad_output if self.sub_tensor else grad_output

    def extra_repr(self) -> str:
        return f"{self.constant!r}, sub_tensor=True" if self.sub_tensor else repr(self.constant)


class MulConstant(InplaceFunction):
    """a * c for a number c."""

    def __init__(self, constant: Any, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.constant = constant

    def forward(self, a):
        if self.inplace:
            self.mark_dirty(a)
            a *= self.constant
            return a
        return a * self.constant

    def backward(self, grad_output):
        return grad_output * self.constant

    def extra_repr(self) -> str:
        return repr(self.constant)


class DivConstant(InplaceFunction):
    """a / c, or c / a when div_by_tensor is True."""

    def __init__(self, constant: Any, div_by_tensor: bool = False, inplace: bool = False) -> None:
        if div_by_tensor and inplace:
            raise InplaceError("DivConstant: c / a cannot run in place (backward needs a); use inplace=False")
        super().__init__(inplace)
        self.constant = constant
        self.div_by_tensor = div_by_tensor

    def forward(self, a):
        if self.div_by_tensor:
            self.save_for_backward(a)
            return self.constant / a
        if self.inplace:
            self.mark_dirty(a)
            a /= self.constant
            return a
        return a / self.constant

    def backward(self, grad_output):
        if self.div_by_tensor:
            (a,) = self.saved_tensors
            return -self.constant * grad_output / (a * a)
        return grad_output / self.constant

    def extra_repr(self) -> str:
        return f"{self.constant!r}, div_by_tensor=True" if self.div_by_tensor else repr(self.constant)


class PowConstant(Function):
    """a ** c, or c ** a when tensor_power is True (that path was broken in v0.1.3)."""

    def __init__(self, constant: Any, tensor_power: bool = False) -> None:
        self.constant = constant
        self.tensor_power = tensor_power

    def forward(self, a):
        if self.tensor_power:
            result = self.constant**a
            self.save_for_backward(result)
            return result
        self.save_for_backward(a)
        return a**self.constant

    def backward(self, grad_output):
        if self.tensor_power:
            (result,) = self.saved_tensors
            if self.constant > 0:
                return grad_output * result * math.log(self.constant)
            # ln c does not exist: 0 ** a is flat (0 for a > 0), and a negative base has no real
            # derivative, so its gradient is nan (both as in PyTorch) rather than a crash in math.log.
            return grad_output * (0.0 if self.constant == 0 else math.nan)
        (a,) = self.saved_tensors
        return grad_output * self.constant * a ** (self.constant - 1)

    def extra_repr(self) -> str:
        return f"{self.constant!r}, tensor_power=True" if self.tensor_power else repr(self.constant)


class Negate(InplaceFunction):
    """-a."""

    def forward(self, a):
        if self.inplace:
            self.mark_dirty(a)
            a *= -1
            return a
        return -a

    def backward(self, grad_output):
        return -grad_output
