"""Arithmetic between two Variables, and between a Variable and a constant number.

The Constant ops (``x + 2`` is ``AddConstant(2)(x)``) keep a NumPy scalar constant as the Python
number it holds: ``np.float64(2)`` would otherwise make float32 data float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import get_array_module, python_number
from ..errors import DTypeError, InplaceError
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
        try:
            if self.inplace:
                self.mark_dirty(a)
                a -= b
                return a
            return a - b
        except ValueError:
            raise broadcast_error("sub", a, b) from None
        except TypeError:
            _refuse_bool_minus_bool(a, b)
            raise  # a result that cannot be cast into a: InplaceFunction says so

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
        # -g a / b^2, written (a / b) / b: b * b underflows to 0 for tiny b where the result does not
        grad_b = sum_to_shape(-grad_output * (a / b) / b, b.shape) if self.needs_input_grad[1] else None
        return grad_a, grad_b


class Pow(Function):
    """a ** b (elementwise)."""

    def forward(self, a, b):
        if _has_integer_dtype(a) and _has_integer_dtype(b) and (b < 0).any():
            raise _negative_integer_power(a.dtype)
        try:
            with np.errstate(divide="ignore"):  # 0 ** -1 is inf, without a warning (as PyTorch)
                result = (_int64_if_boolean(a) if b.dtype.kind == "b" else a) ** b
        except ValueError:
            raise broadcast_error("pow", a, b) from None
        self.save_for_backward(a, b, result)
        return result

    def backward(self, grad_output):
        a, b, result = self.saved_tensors
        xp = get_array_module(a)
        grad_a = grad_b = None
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1 and ln 0 are inf, as they should be
            if self.needs_input_grad[0]:
                # d(a^b)/da = b a^(b-1); where b == 0 the power is flat, 0 (not 0 * inf at a == 0)
                grad_a = sum_to_shape(grad_output * xp.where(b == 0, 0, b * a ** (b - 1)), a.shape)
            if self.needs_input_grad[1]:
                # d(a^b)/db = a^b ln a; at a == 0 with b >= 0 the limit is 0, not 0 * -inf (as PyTorch)
                d_b = xp.where((a == 0) & (b >= 0), 0, result * xp.log(a))
                grad_b = sum_to_shape(grad_output * d_b, b.shape)
        return grad_a, grad_b


def _int64_if_boolean(base: Any) -> Any:
    """A boolean base as int64 for an integer or boolean power: NumPy computes a mask ** 2 in int8,
    which wraps past 127 (mask ** 2 * 200), where PyTorch gives int64."""
    return base.astype(np.int64) if base.dtype.kind == "b" else base


def _has_integer_dtype(array: Any) -> bool:
    """True for integer or boolean data, whose powers NumPy computes as integers."""
    return array.dtype.kind in "iub"


def _negative_integer_power(dtype: Any) -> DTypeError:
    return DTypeError(
        f"pow: an integer ({dtype}) base to a negative integer power is a fraction, which integer "
        "data cannot hold; convert the base first (.double()) or use a float exponent"
    )


class ConstantFunction(InplaceFunction):
    """An op of a Variable and a number c (AddConstant, MulConstant, ...): it keeps c and shows it.

    A NumPy scalar c is kept as the Python number it holds: ``np.float64(2)`` would make float32 data
    float64 (NumPy widens to a NumPy scalar's dtype, never to a Python number's).
    """

    def __init__(self, constant: Any, inplace: bool = False) -> None:
        # InplaceFunction.__init__ and backend.python_number's NumPy-scalar case, written inline: two
        # calls less per x * 2. Its other case, a Fraction, is not needed here: methods._number has
        # already made it a float (x * Fraction(1, 2) is MulConstant(0.5)).
        self.inplace = inplace
        self.constant = constant.item() if isinstance(constant, np.generic) else constant

    def extra_repr(self) -> str:
        return repr(self.constant)


class AddConstant(ConstantFunction):
    """a + c for a number c."""

    def forward(self, a):
        if self.inplace:
            self.mark_dirty(a)
            a += self.constant
            return a
        return a + self.constant

    def backward(self, grad_output):
        return grad_output


class SubConstant(ConstantFunction):
    """a - c, or c - a when sub_tensor is True."""

    def __init__(self, constant: Any, sub_tensor: bool = False, inplace: bool = False) -> None:
        super().__init__(constant, inplace)
        self.sub_tensor = sub_tensor

    def forward(self, a):
        try:
            if self.inplace:
                self.mark_dirty(a)
                if self.sub_tensor:  # c - a in one ufunc: a constant that does not fit fails before any write
                    get_array_module(a).subtract(self.constant, a, out=a)
                else:
                    a -= self.constant
                return a
            return self.constant - a if self.sub_tensor else a - self.constant
        except TypeError:
            _refuse_bool_minus_bool(a, self.constant)
            raise  # a result that cannot be cast into a: InplaceFunction says so

    def backward(self, grad_output):
        return -grad_output if self.sub_tensor else grad_output

    def extra_repr(self) -> str:
        return f"{self.constant!r}, sub_tensor=True" if self.sub_tensor else repr(self.constant)


def _refuse_bool_minus_bool(a: Any, b: Any) -> None:
    """Raise the kit's error if a and b are both boolean: NumPy and PyTorch refuse that subtraction too."""
    # b: an array, or a constant (ConstantFunction keeps a NumPy scalar as the Python number it holds)
    if a.dtype.kind == "b" and (isinstance(b, bool) or getattr(b, "dtype", None) == np.bool_):
        raise DTypeError(
            "sub: boolean data minus boolean data is refused (NumPy and PyTorch have no boolean "
            "subtraction); for 'a and not b' write a & ~b, for 'a differs from b' a ^ b, or convert "
            "first (x.double())"
        ) from None


class MulConstant(ConstantFunction):
    """a * c for a number c."""

    def forward(self, a):
        if self.inplace:
            self.mark_dirty(a)
            a *= self.constant
            return a
        return a * self.constant

    def backward(self, grad_output):
        return grad_output * self.constant


class DivConstant(ConstantFunction):
    """a / c, or c / a when div_by_tensor is True."""

    def __init__(self, constant: Any, div_by_tensor: bool = False, inplace: bool = False) -> None:
        if div_by_tensor and inplace:
            raise InplaceError("DivConstant: c / a cannot run in place (backward needs a); use inplace=False")
        super().__init__(constant, inplace)
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
            return -grad_output * (self.constant / a) / a  # not c / (a * a): a * a over- or underflows first
        return grad_output / self.constant

    def extra_repr(self) -> str:
        return f"{self.constant!r}, div_by_tensor=True" if self.div_by_tensor else repr(self.constant)


class PowConstant(Function):
    """a ** c, or c ** a when tensor_power is True (that path was broken in v0.1.3)."""

    def __init__(self, constant: Any, tensor_power: bool = False) -> None:
        self.constant = python_number(constant)
        self.tensor_power = tensor_power

    def forward(self, a):
        if self.tensor_power:
            if isinstance(self.constant, (int, np.integer)) and _has_integer_dtype(a) and (a < 0).any():
                raise DTypeError(
                    f"pow: {self.constant} to a negative integer ({a.dtype}) power is a fraction, which "
                    f"integer data cannot hold; use a float base ({float(self.constant)} ** x) or "
                    "convert the exponent first (.double())"
                )
            with np.errstate(divide="ignore"):  # 0 ** -1 is inf, without a warning (as PyTorch)
                result = self.constant**a
            self.save_for_backward(a, result)
            return result
        if _has_integer_dtype(a) and isinstance(self.constant, (int, np.integer)) and self.constant < 0:
            raise _negative_integer_power(a.dtype)
        self.save_for_backward(a)
        with np.errstate(divide="ignore"):  # 0 ** -1 is inf, without a warning (as PyTorch)
            return _power(a, self.constant)

    def backward(self, grad_output):
        if self.tensor_power:
            a, result = self.saved_tensors
            if self.constant > 0:
                return grad_output * result * math.log(self.constant)
            if self.constant == 0:
                # ln 0 = -inf: 0 ** a is flat for a >= 0 (gradient 0) and is +-inf for a < 0 (-0.0 to
                # an odd power is -inf), where the gradient result * ln 0 is infinite of the opposite
                # sign; at a = nan it is nan (all as in PyTorch)
                xp = get_array_module(a)
                infinite = -xp.copysign(math.inf, result)
                return grad_output * xp.where(a >= 0, 0.0, xp.where(a < 0, infinite, math.nan))
            # a negative base has no real derivative: nan (as PyTorch), not a crash in math.log
            return grad_output * math.nan
        (a,) = self.saved_tensors
        if self.constant == 0:  # a ** 0 is 1 everywhere: gradient 0, also at a == 0 (not 0 * inf)
            return get_array_module(a).zeros_like(grad_output)
        with np.errstate(divide="ignore"):  # 0 ** -1 is inf: the gradient there is inf, as it should be
            return grad_output * self.constant * _power(a, self.constant - 1)

    def extra_repr(self) -> str:
        return f"{self.constant!r}, tensor_power=True" if self.tensor_power else repr(self.constant)


def _power(a: Any, c: Any) -> Any:
    """a ** c for a number c. For c = -0.5 compute 1 / sqrt(a), as PyTorch does, so that at a = -0.0
    the result is -inf (as 1 / a.sqrt(); NumPy's power gives +inf), which also gives a ** 0.5 sqrt's
    gradient there (-inf: PowConstant.backward computes 0.5 * a ** -0.5)."""
    if c == -0.5 and a.dtype.kind == "f":
        return 1 / get_array_module(a).sqrt(a)
    return (a if isinstance(c, float) else _int64_if_boolean(a)) ** c


class Negate(InplaceFunction):
    """-a."""

    def forward(self, a):
        if a.dtype.kind == "b":  # (NumPy and PyTorch refuse -True too)
            raise DTypeError(
                "neg: boolean data has no negative; invert a mask with ~mask, or convert it "
                "first (x.double())"
            )
        if self.inplace:
            self.mark_dirty(a)
            get_array_module(a).negative(a, out=a)  # unsigned data wraps, as -a does (a *= -1 refuses)
            return a
        return -a

    def backward(self, grad_output):
        return -grad_output
