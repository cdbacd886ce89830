"""Elementwise functions of one Variable (exp, tanh, clamp, ...) and elementwise max/min of two."""

from __future__ import annotations

import numbers
from typing import Any

from ..backend import get_array_module, python_number
from ..errors import DTypeError
from ..function import Function, InplaceFunction
from .utils import broadcast_error, float_data, sum_to_shape


class _SavesInput(Function):
    """A pointwise op whose backward needs its input: forward saves it, backward gets it back.

    A subclass defines ``apply(xp, a)``, the function of the array a (xp: its array module, numpy or
    cupy), and ``derivative(xp, a, g)``, the gradient for a given the incoming gradient g.
    """

    def forward(self, a):
        self.save_for_backward(a)
        a = float_data(a)
        return self.apply(get_array_module(a), a)

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        return self.derivative(get_array_module(a), a, grad_output)


class _SavesOutput(InplaceFunction):
    """A pointwise op whose backward needs only its output y, so it can also run in place.

    A subclass defines ``apply(xp, a, out=None)``, the function of the array a (xp: its array module,
    numpy or cupy), written into out when one is given (a itself, in place), and ``derivative(y, g)``,
    the gradient for a given the output y and the incoming gradient g.
    """

    float_result = True  # the result is a float whatever a's dtype: in place, a must hold floats

    def forward(self, a):
        xp = get_array_module(a)
        if self.inplace:
            self.mark_dirty(a)
            result = self.apply(xp, a, out=a)
        else:
            result = self.apply(xp, float_data(a))
        self.save_for_backward(result)
        return result

    def backward(self, grad_output):
        (result,) = self.saved_tensors
        return self.derivative(result, grad_output)


class Exp(_SavesOutput):
    """e ** a; d/da = y."""

    def apply(self, xp, a, out=None):
        return xp.exp(a, out=out)

    def derivative(self, y, g):
        return g * y


class Tanh(_SavesOutput):
    """tanh a; d/da = 1 - y^2."""

    def apply(self, xp, a, out=None):
        return xp.tanh(a, out=out)

    def derivative(self, y, g):
        return g * (1 - y * y)


class Sigmoid(_SavesOutput):
    """1 / (1 + e^-a); d/da = y (1 - y)."""

    def apply(self, xp, a, out=None):
        # 1 / (1 + e^-a) for a >= 0 and e^a / (1 + e^a) for a < 0: with e = e^-|a| <= 1 nothing
        # overflows, and tiny results for very negative a keep their digits (0.5 (1 + tanh(a/2))
        # rounds them to 0: sigmoid(-20) was 0 in float32).
        e = xp.exp(-xp.abs(a))
        return xp.divide(xp.where(a >= 0, xp.ones_like(e), e), 1 + e, out=out)

    def derivative(self, y, g):
        return g * y * (1 - y)


class Sqrt(_SavesOutput):
    """sqrt a; d/da = 1 / (2 y)."""

    def apply(self, xp, a, out=None):
        return xp.sqrt(a, out=out)

    def derivative(self, y, g):
        return g / (2 * y)


class Cinv(_SavesOutput):
    """1 / a; d/da = -y^2."""

    def apply(self, xp, a, out=None):
        return xp.reciprocal(a, out=out)

    def derivative(self, y, g):
        return -g * y * y


class Log(_SavesInput):
    """ln a; d/da = 1 / a."""

    def apply(self, xp, a):
        return xp.log(a)

    def derivative(self, xp, a, g):
        return g / a


class Log1p(_SavesInput):
    """ln(1 + a); d/da = 1 / (1 + a)."""

    def apply(self, xp, a):
        return xp.log1p(a)

    def derivative(self, xp, a, g):
        return g / (1 + a)


class Sinh(_SavesInput):
    """sinh a; d/da = cosh a."""

    def apply(self, xp, a):
        return xp.sinh(a)

    def derivative(self, xp, a, g):
        return g * xp.cosh(a)


class Cosh(_SavesInput):
    """cosh a; d/da = sinh a."""

    def apply(self, xp, a):
        return xp.cosh(a)

    def derivative(self, xp, a, g):
        return g * xp.sinh(a)


class Sin(_SavesInput):
    """sin a; d/da = cos a."""

    def apply(self, xp, a):
        return xp.sin(a)

    def derivative(self, xp, a, g):
        return g * xp.cos(a)


class Cos(_SavesInput):
    """cos a; d/da = -sin a."""

    def apply(self, xp, a):
        return xp.cos(a)

    def derivative(self, xp, a, g):
        return -g * xp.sin(a)


class Tan(_SavesInput):
    """tan a; d/da = 1 / cos^2 a."""

    def apply(self, xp, a):
        return xp.tan(a)

    def derivative(self, xp, a, g):
        cos = xp.cos(a)
        return g / (cos * cos)


class Asin(_SavesInput):
    """arcsin a; d/da = 1 / sqrt(1 - a^2)."""

    def apply(self, xp, a):
        return xp.arcsin(a)

    def derivative(self, xp, a, g):
        return g / xp.sqrt(1 - a * a)


class Acos(_SavesInput):
    """arccos a; d/da = -1 / sqrt(1 - a^2)."""

    def apply(self, xp, a):
        return xp.arccos(a)

    def derivative(self, xp, a, g):
        return -g / xp.sqrt(1 - a * a)


class Atan(_SavesInput):
    """arctan a; d/da = 1 / (1 + a^2)."""

    def apply(self, xp, a):
        return xp.arctan(a)

    def derivative(self, xp, a, g):
        return g / (1 + a * a)


class Abs(Function):
    """|a|; d/da = sign a (0 at 0). Integer data stays integer."""

    def forward(self, a):
        self.save_for_backward(a)
        return get_array_module(a).abs(a)

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        return grad_output * get_array_module(a).sign(a)


class Clamp(Function):
    """a limited to [min_value, max_value] (either may be None); clamp(min=0) has relu's values, but
    relu is Threshold(0, 0), whose gradient at 0 is PyTorch's (docs/differences.md, row 25)."""

    def __init__(self, min_value: Any = None, max_value: Any = None) -> None:
        if min_value is None and max_value is None:
            raise ValueError("clamp: give min, max or both")
        for name, bound in (("min", min_value), ("max", max_value)):
            if bound is not None and not isinstance(bound, numbers.Real):
                raise DTypeError(
                    f"clamp: {name} must be a number, got a {type(bound).__name__}; for a bound per "
                    f"element use cmax (a lower bound) or cmin (an upper one): x.cmax(low).cmin(high)"
                )
        self.min_value = python_number(min_value)
        self.max_value = python_number(max_value)

    def forward(self, a):
        self.save_for_backward(a)
        xp = get_array_module(a)
        if self.max_value is None:  # one bound: maximum is about twice as fast as clip
            return xp.maximum(a, self.min_value)
        if self.min_value is None:
            return xp.minimum(a, self.max_value)
        return xp.clip(a, self.min_value, self.max_value)

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        inside = True
        if self.min_value is not None:
            inside = a >= self.min_value
        if self.max_value is not None:
            inside = inside & (a <= self.max_value)
        return grad_output * inside

    def extra_repr(self) -> str:
        return f"min={self.min_value!r}, max={self.max_value!r}"


class Floor(Function):
    """floor a; its gradient is zero everywhere it exists."""

    def forward(self, a):
        return get_array_module(a).floor(a)

    def backward(self, grad_output):
        return get_array_module(grad_output).zeros_like(grad_output)


class Ceil(Function):
    """ceil a; its gradient is zero everywhere it exists."""

    def forward(self, a):
        return get_array_module(a).ceil(a)

    def backward(self, grad_output):
        return get_array_module(grad_output).zeros_like(grad_output)


class Frac(Function):
    """The fractional part a - trunc(a) (keeps the sign); d/da = 1."""

    def forward(self, a):
        if a.dtype.kind == "b":  # a boolean has no fractional part (and NumPy refuses True - True)
            return get_array_module(a).zeros_like(a)
        return a - get_array_module(a).trunc(a)

    def backward(self, grad_output):
        return grad_output


class Cmax(Function):
    """Elementwise max(a, b); the gradient goes to a where a > b, else to b (ties go to b)."""

    def forward(self, a, b):
        try:
            self.a_wins = a > b
        except ValueError:
            raise broadcast_error("cmax", a, b) from None
        return get_array_module(a).maximum(a, b)

    def backward(self, grad_output):
        shape_a, shape_b = self.input_shapes
        grad_a = grad_output * self.a_wins
        grad_b = grad_output * ~self.a_wins
        return sum_to_shape(grad_a, shape_a), sum_to_shape(grad_b, shape_b)


class Cmin(Function):
    """Elementwise min(a, b); the gradient goes to a where a < b, else to b (ties go to b)."""

    def forward(self, a, b):
        try:
            self.a_wins = a < b
        except ValueError:
            raise broadcast_error("cmin", a, b) from None
        return get_array_module(a).minimum(a, b)

    def backward(self, grad_output):
        shape_a, shape_b = self.input_shapes
        grad_a = grad_output * self.a_wins
        grad_b = grad_output * ~self.a_wins
        return sum_to_shape(grad_a, shape_a), sum_to_shape(grad_b, shape_b)


class CmaxConstant(Function):
    """max(a, c) for a number c; the gradient passes where a > c."""

    def __init__(self, constant: Any) -> None:
        self.constant = python_number(constant)

    def forward(self, a):
        self.mask = a > self.constant
        return get_array_module(a).maximum(a, self.constant)

    def backward(self, grad_output):
        return grad_output * self.mask

    def extra_repr(self) -> str:
        return repr(self.constant)


class CminConstant(Function):
    """min(a, c) for a number c; the gradient passes where a < c."""

    def __init__(self, constant: Any) -> None:
        self.constant = python_number(constant)

    def forward(self, a):
        self.mask = a < self.constant
        return get_array_module(a).minimum(a, self.constant)

    def backward(self, grad_output):
        return grad_output * self.mask

    def extra_repr(self) -> str:
        return repr(self.constant)
