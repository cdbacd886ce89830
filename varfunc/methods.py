"""The arithmetic, pointwise and matrix methods and operators of Variable: each is a line that calls
a Function. The methods that work along dims (reductions, shapes, indexing) are in shape_methods.py.

Variable (in variable.py) inherits these. A number as the other operand (a NumPy scalar or a Fraction
counts as the Python number it holds) uses the op's Constant form: ``x * 2`` is ``MulConstant(2)(x)``;
an array is wrapped as a Variable that needs no grad. Names ending in ``_`` work in place, return self.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any

from . import functions as F
from .backend import python_number
from .errors import DTypeError


def _number(x: Any) -> Any:
    """x if it is a number (the op's Constant form takes it), or None (a Variable, an array, a list)."""
    if type(x) is float or type(x) is int:  # first: an isinstance check against numbers.Real is slow
        return x
    return python_number(x) if isinstance(x, numbers.Real) else None  # a Fraction becomes a float


def _not_an_operand(op: str, other: Any) -> DTypeError:
    """The error for x + None, x * "a" or x.mm(1j): which op, what it got, what it takes."""
    shown = repr(other)
    if len(shown) > 40 or " at 0x" in shown:  # no memory addresses in what a student reads
        shown = f"an instance of {type(other).__name__}"
    forgot = " (did a function forget to return its result?)" if other is None else ""
    return DTypeError(
        f"{op}: got {shown} as the other operand{forgot}; it takes a Variable, a NumPy array, a "
        "(nested) list of numbers or a real number"
    )


class VariableMethods:
    """Operators and tensor methods, mixed into Variable."""

    __slots__ = ()

    def _as_variable(self, other: Any) -> Any:
        if isinstance(other, VariableMethods):
            return other
        try:
            return self._constant(other)
        except DTypeError:
            if isinstance(other, (list, tuple)) or hasattr(other, "dtype"):
                raise  # the error is about what the container or array holds: it says so
            caller = sys._getframe(1).f_code.co_name  # the method that was called: add, mm, __rsub__
            raise _not_an_operand(caller.strip("_"), other) from None

    # --- arithmetic ------------------------------------------------------------------------------

    def add(self, other: Any) -> Any:
        """self + other."""
        c = _number(other)
        return F.AddConstant(c)(self) if c is not None else F.Add()(self, self._as_variable(other))

    def add_(self, other: Any) -> Any:
        """self += other, in place."""
        c = _number(other)
        if c is not None:
            return F.AddConstant(c, inplace=True)(self)
        return F.Add(inplace=True)(self, self._as_variable(other))

    def sub(self, other: Any) -> Any:
        """self - other."""
        c = _number(other)
        return F.SubConstant(c)(self) if c is not None else F.Sub()(self, self._as_variable(other))

    def sub_(self, other: Any) -> Any:
        """self -= other, in place."""
        c = _number(other)
        if c is not None:
            return F.SubConstant(c, inplace=True)(self)
        return F.Sub(inplace=True)(self, self._as_variable(other))

    def mul(self, other: Any) -> Any:
        """self * other (elementwise)."""
        c = _number(other)
        return F.MulConstant(c)(self) if c is not None else F.Mul()(self, self._as_variable(other))

    def mul_(self, other: Any) -> Any:
        """self *= other for a number, in place (v0.1.3 allows numbers only)."""
        c = _number(other)
        if c is None:
            raise DTypeError("mul_ only supports multiplication by a number; use mul for Variables")
        return F.MulConstant(c, inplace=True)(self)

    def div(self, other: Any) -> Any:
        """self / other (elementwise)."""
        c = _number(other)
        return F.DivConstant(c)(self) if c is not None else F.Div()(self, self._as_variable(other))

    def div_(self, other: Any) -> Any:
        """self /= other for a number, in place (v0.1.3 allows numbers only)."""
        c = _number(other)
        if c is None:
            raise DTypeError("div_ only supports division by a number; use div for Variables")
        return F.DivConstant(c, inplace=True)(self)

    def pow(self, other: Any) -> Any:
        """self ** other (elementwise)."""
        c = _number(other)
        return F.PowConstant(c)(self) if c is not None else F.Pow()(self, self._as_variable(other))

    def neg(self) -> Any:
        """-self."""
        return F.Negate()(self)

    def neg_(self) -> Any:
        """self = -self, in place."""
        return F.Negate(inplace=True)(self)

    __add__ = __radd__ = add
    __sub__ = sub
    __mul__ = __rmul__ = mul
    __truediv__ = div
    __pow__ = pow
    __neg__ = neg

    def __rsub__(self, other: Any) -> Any:
        c = _number(other)
        if c is not None:
            return F.SubConstant(c, sub_tensor=True)(self)
        return F.Sub()(self._as_variable(other), self)

    def __rtruediv__(self, other: Any) -> Any:
        c = _number(other)
        if c is not None:
            return F.DivConstant(c, div_by_tensor=True)(self)
        return F.Div()(self._as_variable(other), self)

    def __rpow__(self, other: Any) -> Any:
        c = _number(other)
        if c is not None:
            return F.PowConstant(c, tensor_power=True)(self)
        return F.Pow()(self._as_variable(other), self)

    def __matmul__(self, other: Any) -> Any:
        return F.Matmul()(self, self._as_variable(other))

    def __rmatmul__(self, other: Any) -> Any:
        return F.Matmul()(self._as_variable(other), self)

    # --- pointwise -------------------------------------------------------------------------------

    def exp(self) -> Any:
        """e ** self."""
        return F.Exp()(self)

    def exp_(self) -> Any:
        """self = e ** self, in place."""
        return F.Exp(inplace=True)(self)

    def log(self) -> Any:
        """Natural logarithm."""
        return F.Log()(self)

    def log1p(self) -> Any:
        """log(1 + self), accurate for small values."""
        return F.Log1p()(self)

    def tanh(self) -> Any:
        """Hyperbolic tangent."""
        return F.Tanh()(self)

    def tanh_(self) -> Any:
        """Hyperbolic tangent, in place."""
        return F.Tanh(inplace=True)(self)

    def sigmoid(self) -> Any:
        """1 / (1 + e ** -self)."""
        return F.Sigmoid()(self)

    def sigmoid_(self) -> Any:
        """Sigmoid, in place."""
        return F.Sigmoid(inplace=True)(self)

    def sin(self) -> Any:
        """Sine."""
        return F.Sin()(self)

    def cos(self) -> Any:
        """Cosine."""
        return F.Cos()(self)

    def tan(self) -> Any:
        """Tangent."""
        return F.Tan()(self)

    def asin(self) -> Any:
        """Arcsine."""
        return F.Asin()(self)

    def acos(self) -> Any:
        """Arccosine."""
        return F.Acos()(self)

    def atan(self) -> Any:
        """Arctangent."""
        return F.Atan()(self)

    def sinh(self) -> Any:
        """Hyperbolic sine."""
        return F.Sinh()(self)

    def cosh(self) -> Any:
        """Hyperbolic cosine."""
        return F.Cosh()(self)

    def abs(self) -> Any:
        """Absolute value."""
        return F.Abs()(self)

    def sqrt(self) -> Any:
        """Square root."""
        return F.Sqrt()(self)

    def cinv(self) -> Any:
        """1 / self (v0.1's name; reciprocal today)."""
        return F.Cinv()(self)

    reciprocal = cinv

    def floor(self) -> Any:
        """Round down (zero gradient)."""
        return F.Floor()(self)

    def ceil(self) -> Any:
        """Round up (zero gradient)."""
        return F.Ceil()(self)

    def frac(self) -> Any:
        """self - trunc(self)."""
        return F.Frac()(self)

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - v0.1's argument names
        """self limited to [min, max]; either bound may be left out."""
        return F.Clamp(min, max)(self)

    def relu(self) -> Any:
        """max(self, 0): clamp(min=0), but with gradient 0 at 0, as v0.1's nn and PyTorch give."""
        return F.Threshold(0, 0)(self)

    def cmax(self, other: Any) -> Any:
        """Elementwise maximum with a Variable or a number."""
        c = _number(other)
        return F.CmaxConstant(c)(self) if c is not None else F.Cmax()(self, self._as_variable(other))

    def cmin(self, other: Any) -> Any:
        """Elementwise minimum with a Variable or a number."""
        c = _number(other)
        return F.CminConstant(c)(self) if c is not None else F.Cmin()(self, self._as_variable(other))

    # --- matrix products -------------------------------------------------------------------------

    def matmul(self, other: Any) -> Any:
        """self @ other with NumPy's rules."""
        return F.Matmul()(self, self._as_variable(other))

    def mm(self, matrix: Any) -> Any:
        """Matrix @ matrix."""
        return F.Mm()(self, self._as_variable(matrix))

    def mv(self, vector: Any) -> Any:
        """Matrix @ vector."""
        return F.Mv()(self, self._as_variable(vector))

    def bmm(self, batch: Any) -> Any:
        """Batch of matrices @ batch of matrices."""
        return F.Bmm()(self, self._as_variable(batch))

    def dot(self, other: Any) -> Any:
        """Inner product of two vectors."""
        return F.Dot()(self, self._as_variable(other))

    def addmm(self, mat1: Any, mat2: Any, alpha: Any = 1, beta: Any = 1) -> Any:
        """alpha * self + beta * (mat1 @ mat2) (v0.1 naming: modern PyTorch swaps alpha and beta)."""
        return F.Addmm(alpha, beta)(self, self._as_variable(mat1), self._as_variable(mat2))

    def addmv(self, mat: Any, vec: Any, alpha: Any = 1, beta: Any = 1) -> Any:
        """alpha * self + beta * (mat @ vec)."""
        return F.Addmv(alpha, beta)(self, self._as_variable(mat), self._as_variable(vec))

    def addr(self, vec1: Any, vec2: Any, alpha: Any = 1, beta: Any = 1) -> Any:
        """alpha * self + beta * outer(vec1, vec2)."""
        return F.Addr(alpha, beta)(self, self._as_variable(vec1), self._as_variable(vec2))

    def addbmm(self, batch1: Any, batch2: Any, alpha: Any = 1, beta: Any = 1) -> Any:
        """alpha * self + beta * sum_i(batch1[i] @ batch2[i])."""
        return F.Addbmm(alpha, beta)(self, self._as_variable(batch1), self._as_variable(batch2))

    def baddbmm(self, batch1: Any, batch2: Any, alpha: Any = 1, beta: Any = 1) -> Any:
        """alpha * self + beta * (batch1 @ batch2), batch by batch."""
        return F.Baddbmm(alpha, beta)(self, self._as_variable(batch1), self._as_variable(batch2))
