"""Division that rounds: ``a // b``, ``a % b`` (Python's rounding, as torch.remainder) and fmod (C's).

Both remainders solve ``a = q * b + r``. Python's ``%`` rounds the quotient q down, so r takes the
divisor's sign (``-7 % 3 == 2``); C's fmod rounds q toward zero, so r takes the dividend's
(``fmod(-7, 3) == -1``). Away from the jumps, ``r = a - q * b`` with q constant: d/da = 1 and
d/db = -q. The quotient q itself is a step function, so ``//`` has gradient zero wherever it has one.
v0.1.3 had none of these; the beta that followed it added Fmod and Remainder (``798fc16``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import get_array_module
from ..errors import InplaceError
from ..function import Function
from .basic_ops import ConstantFunction
from .utils import broadcast_error, sum_to_shape


def _refuse_integer_zero(op: str, a: Any, b: Any) -> None:
    """Integer division by zero has no answer: raise, as Python and torch do (NumPy returns 0)."""
    kinds = [x.dtype.kind if hasattr(x, "dtype") else "i" if isinstance(x, int) else "f" for x in (a, b)]
    if kinds[0] in "iub" and kinds[1] in "iub" and bool((b == 0).any() if hasattr(b, "any") else b == 0):
        dtype = a.dtype if hasattr(a, "dtype") else b.dtype
        raise ZeroDivisionError(
            f"{op}: integer division by zero ({dtype} data): an integer result has no value for it; "
            "use float data (x.double()) to get inf or nan"
        )


def _divide(op: str, a: Any, b: Any, out: Any = None) -> Any:
    """a // b, a % b or fmod(a, b), as op names it, into out if given; a or b may be a Python number."""
    _refuse_integer_zero(op, a, b)
    xp = get_array_module(a if hasattr(a, "dtype") else b)
    ufunc = {"floor_divide": xp.floor_divide, "remainder": xp.remainder, "fmod": xp.fmod}[op]
    with np.errstate(divide="ignore", invalid="ignore"):  # x / 0.0: inf or nan, as in torch
        return ufunc(a, b, out=out)  # into out: refused before any write if the dtype cannot hold it


def _quotient(a: Any, b: Any, fmod: bool) -> Any:
    """q in a = q * b + r: a / b rounded toward zero for fmod, down for Python's %."""
    xp = get_array_module(a if hasattr(a, "dtype") else b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.trunc(a / b) if fmod else xp.floor_divide(a, b)


class Remainder(Function):
    """a % b with Python's rounding (the result takes b's sign); fmod=True: C's (it takes a's)."""

    def __init__(self, fmod: bool = False) -> None:
        self.fmod = fmod

    def forward(self, a, b):
        self.save_for_backward(a, b)
        op = "fmod" if self.fmod else "remainder"
        try:
            return _divide(op, a, b)
        except ValueError:
            raise broadcast_error(op, a, b) from None

    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a = sum_to_shape(grad_output, a.shape) if self.needs_input_grad[0] else None
        grad_b = None
        if self.needs_input_grad[1]:
            grad_b = sum_to_shape(-grad_output * _quotient(a, b, self.fmod), b.shape)
        return grad_a, grad_b

    def extra_repr(self) -> str:
        return "fmod=True" if self.fmod else ""


class RemainderConstant(ConstantFunction):
    """a % c for a number c, or c % a when tensor_divisor is True; fmod=True rounds as C's fmod."""

    def __init__(
        self, constant: Any, tensor_divisor: bool = False, fmod: bool = False, inplace: bool = False
    ) -> None:
        if tensor_divisor and inplace:
            raise InplaceError(
                "RemainderConstant: c % a cannot run in place (backward needs a); use inplace=False"
            )
        super().__init__(constant, inplace)
        self.tensor_divisor = tensor_divisor
        self.fmod = fmod

    def forward(self, a):
        op = "fmod" if self.fmod else "remainder"
        if self.tensor_divisor:
            self.save_for_backward(a)
            return _divide(op, self.constant, a)
        if self.inplace:
            self.mark_dirty(a)
            return _divide(op, a, self.constant, out=a)
        return _divide(op, a, self.constant)

    def backward(self, grad_output):
        if self.tensor_divisor:
            (a,) = self.saved_tensors
            return -grad_output * _quotient(self.constant, a, self.fmod)
        return grad_output

    def extra_repr(self) -> str:
        settings = [repr(self.constant)]
        settings += ["tensor_divisor=True"] * self.tensor_divisor + ["fmod=True"] * self.fmod
        return ", ".join(settings)


class FloorDivide(Function):
    """a // b, rounded down as Python's //; a step function: its gradient is zero wherever it exists."""

    def forward(self, a, b):
        try:
            return _divide("floor_divide", a, b)
        except ValueError:
            raise broadcast_error("floor_divide", a, b) from None

    def backward(self, grad_output):
        xp = get_array_module(grad_output)
        return tuple(
            xp.zeros(shape, grad_output.dtype) if needed else None
            for shape, needed in zip(self.input_shapes, self.needs_input_grad)
        )


class FloorDivideConstant(ConstantFunction):
    """a // c for a number c, or c // a when tensor_divisor is True; gradient zero, as FloorDivide."""

    def __init__(self, constant: Any, tensor_divisor: bool = False, inplace: bool = False) -> None:
        if tensor_divisor and inplace:
            raise InplaceError("FloorDivideConstant: c // a cannot run in place; use inplace=False")
        super().__init__(constant, inplace)
        self.tensor_divisor = tensor_divisor

    def forward(self, a):
        if self.tensor_divisor:
            return _divide("floor_divide", self.constant, a)
        if self.inplace:
            self.mark_dirty(a)
            return _divide("floor_divide", a, self.constant, out=a)
        return _divide("floor_divide", a, self.constant)

    def backward(self, grad_output):
        return get_array_module(grad_output).zeros_like(grad_output)

    def extra_repr(self) -> str:
        return f"{self.constant!r}, tensor_divisor=True" if self.tensor_divisor else repr(self.constant)
