"""Python's other operators on a Variable: augmented assignment, comparisons, truth, abs, % and //;
and what NumPy gets when it asks a Variable for an array. (+, -, *, /, ** and their reflected forms,
unary - and @ are in methods.py, beside the methods they call.)

v0.1.3 defined none of them, so Python fell back on its defaults, each wrong for an array:
``w -= lr * w.grad`` meant ``w = w - lr * w.grad`` (an AssertionError there, since ``.grad`` was a
tensor; with a Variable on the right, ``w`` became a new Variable, no longer a leaf, and training
stopped with no error), ``x == 0`` compared identities (False, and ``x[x == 0]`` selected
nothing), and ``bool(x)`` asked ``len(x)``. Here they do what today's PyTorch does
(docs/differences.md, row 46). ``%`` and ``//`` (and the ``fmod`` method) call the ops of
functions/modulo.py, which v0.1.3 did not have (row 48).
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import functions as F
from .backend import as_array, check_same_device, device_of, is_array, to_device
from .errors import DTypeError, ShapeError
from .methods import _number


class VariableOperators:
    """Augmented assignment in place, comparisons to boolean Variables, truth, % and //."""

    __slots__ = ()

    # --- augmented assignment: in place, so that a leaf that requires grad is refused ---------------

    def __iadd__(self, other: Any) -> Any:
        return self.add_(other)

    def __isub__(self, other: Any) -> Any:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Any:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Any:
        return self.div_(other)

    def __imod__(self, other: Any) -> Any:
        return self.remainder_(other)

    def __ifloordiv__(self, other: Any) -> Any:
        return self.floor_divide_(other)

    def __ipow__(self, other: Any) -> Any:
        raise _no_in_place("**=", "x = x ** c")

    def __imatmul__(self, other: Any) -> Any:
        raise _no_in_place("@=", "x = x @ w")

    # --- comparisons: a boolean Variable, outside the graph (no gradient flows through a comparison)

    def _operand(self, other: Any, numbers_taken: tuple, symbol: str) -> Any:
        """other's data, the number itself if it is one of numbers_taken, or NotImplemented: None, a
        string, 1j get Python's own answer. A host array or list goes to this Variable's device, as +
        puts it; data on another device (a Variable's, a GPU array) is a DeviceError, as for +."""
        if isinstance(other, VariableOperators):
            array = other._data
        elif is_array(other) or isinstance(other, (list, tuple)):
            array = self._array_here(other)
        else:
            return other if isinstance(other, numbers_taken) else NotImplemented
        check_same_device(symbol, (self._data, array))
        return array

    def _array_here(self, value: Any) -> Any:
        """value as an array: a host array (or list) on this Variable's device, as + puts it; a GPU
        array where it is, so that an op names both devices if they differ (not copied to the host)."""
        array = as_array(value)
        return to_device(array, self.device) if device_of(array) == "cpu" else array

    def _compare(self, other: Any, compare: Callable, symbol: str) -> Any:
        other = self._operand(other, (numbers.Real, np.bool_, np.integer, np.floating), symbol)
        if other is NotImplemented:  # x == None is False, x < None an error
            return NotImplemented
        return type(self)(compare(self._data, other))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare(other, operator.eq, "==")

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare(other, operator.ne, "!=")

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, operator.lt, "<")

    def __le__(self, other: Any) -> Any:
        return self._compare(other, operator.le, "<=")

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, operator.gt, ">")

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, operator.ge, ">=")

    __hash__ = object.__hash__  # defining __eq__ would otherwise make Variables unhashable

    def __contains__(self, value: Any) -> bool:
        """value in x: whether some element equals value, as in PyTorch."""
        equal = self == value  # Python's False for None or a string: nothing equals them
        return bool(equal._data.any()) if isinstance(equal, VariableOperators) else bool(equal)

    # --- logic on masks: &, |, ^ and ~ of boolean (or integer) Variables, outside the graph, too ---

    def _logic(self, other: Any, logic: Callable, symbol: str) -> Any:
        other = self._operand(other, (bool, np.bool_, numbers.Integral), symbol)
        if other is NotImplemented:
            return NotImplemented
        kinds = (self._data.dtype.kind, getattr(other, "dtype", np.dtype(type(other))).kind)
        if not set(kinds) <= set("biu"):
            raise DTypeError(
                f"{symbol}: takes boolean or integer data (masks such as x > 0), got "
                f"{self._data.dtype} and {getattr(other, 'dtype', type(other).__name__)}; compare first: "
                "(x > 0) & (x < 1)"
            )
        return type(self)(logic(self._data, other))

    def __and__(self, other: Any) -> Any:
        return self._logic(other, operator.and_, "&")

    def __or__(self, other: Any) -> Any:
        return self._logic(other, operator.or_, "|")

    def __xor__(self, other: Any) -> Any:
        return self._logic(other, operator.xor, "^")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__  # each is symmetric

    def __invert__(self) -> Any:
        if self._data.dtype.kind not in "biu":
            raise DTypeError(
                f"~: takes boolean or integer data (a mask such as x > 0), got {self._data.dtype}"
            )
        return type(self)(~self._data)

    # --- NumPy's array protocol: np.asarray(x), np.where(x > 0, x, 0), plt.plot(x) ------------------

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """The data, for a Variable that requires no grad; an error for one that does, as in PyTorch.

        Without this NumPy read a Variable as a sequence: an object array of 0-d Variables, one
        Index node each. For a Variable that requires grad, NumPy's result would leave the graph and
        no gradient would flow back through it, silently.
        """
        if self.requires_grad:
            raise DTypeError(
                f"NumPy asked for the array of a Variable that requires grad (shape {self.shape}), by "
                "np.asarray(x), np.array(x) or a NumPy function: its result would be outside the graph, "
                "and no gradient would flow back through it; use the Variable's own ops (x.clamp(min=0), "
                "x.mm(y)), or x.data for the plain array, outside the graph"
            )
        if not isinstance(self._data, np.ndarray):
            raise DTypeError(
                f"NumPy asked for the array of a Variable on {self.device}; copy it to the host: x.numpy()"
            )
        return np.array(self._data, dtype=dtype, copy=copy) if copy else np.asarray(self._data, dtype=dtype)

    # --- truth, abs ------------------------------------------------------------------------------

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ShapeError(
                f"bool() of a Variable of shape {self.shape} is ambiguous: say which you mean, "
                "(x > 0).data.all() or (x > 0).data.any()"
            )
        return bool(self._data)

    def __abs__(self) -> Any:
        return self.abs()

    def __pos__(self) -> Any:
        return self

    # --- division that rounds: //, % and fmod (functions/modulo.py) ---------------------------------

    def remainder(self, other: Any) -> Any:
        """self % other, rounded as Python's %: the result takes other's sign (torch.remainder)."""
        c = _number(other)
        return (
            F.RemainderConstant(c)(self) if c is not None else F.Remainder()(self, self._as_variable(other))
        )

    def fmod(self, other: Any) -> Any:
        """The remainder of self / other rounded toward zero, as C's fmod: it takes self's sign."""
        c = _number(other)
        if c is not None:
            return F.RemainderConstant(c, fmod=True)(self)
        return F.Remainder(fmod=True)(self, self._as_variable(other))

    def floor_divide(self, other: Any) -> Any:
        """self // other, rounded down; its gradient is zero (a step function)."""
        c = _number(other)
        return (
            F.FloorDivideConstant(c)(self)
            if c is not None
            else F.FloorDivide()(self, self._as_variable(other))
        )

    def remainder_(self, other: Any) -> Any:
        """self %= other for a number, in place."""
        return F.RemainderConstant(self._number_for("remainder_", other), inplace=True)(self)

    def floor_divide_(self, other: Any) -> Any:
        """self //= other for a number, in place."""
        return F.FloorDivideConstant(self._number_for("floor_divide_", other), inplace=True)(self)

    def _number_for(self, op: str, other: Any) -> Any:
        c = _number(other)
        if c is None:  # as mul_ and div_
            raise DTypeError(f"{op} only supports a number; use the out-of-place op (% or //) for Variables")
        return c

    __mod__ = remainder
    __floordiv__ = floor_divide

    def __rmod__(self, other: Any) -> Any:
        c = _number(other)
        if c is not None:
            return F.RemainderConstant(c, tensor_divisor=True)(self)
        return F.Remainder()(self._as_variable(other), self)

    def __rfloordiv__(self, other: Any) -> Any:
        c = _number(other)
        if c is not None:
            return F.FloorDivideConstant(c, tensor_divisor=True)(self)
        return F.FloorDivide()(self._as_variable(other), self)


def _no_in_place(symbol: str, instead: str) -> DTypeError:
    """x **= c and x @= w have no in-place op here (docs/differences.md, row 14); Python would
    silently make x a new Variable instead, and a parameter would leave the graph."""
    return DTypeError(
        f"{symbol}: this kit has no in-place op for it, and Python would make x a new Variable (a "
        f"parameter would no longer be the model's); write {instead} for a new Variable, or change a "
        f"parameter outside the graph through .data (w.data {symbol} ...)"
    )
