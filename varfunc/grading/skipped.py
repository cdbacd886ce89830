"""The checks' test that backward skips the gradients nobody asked for (chapters 05 and 07).

A backward that computes every product and then returns None for the unneeded ones gives the right
tuple, so its values cannot tell. The check swaps the saved array that only an unneeded product
reads for a stand-in that refuses any arithmetic, then calls backward directly.
"""

from __future__ import annotations

from typing import Any

from ..function import Function
from ..variable import Variable
from .core import CheckFailed


class _ProductNotNeeded(Exception):
    """Raised by a stand-in for a saved array that backward should not have computed with."""


class _NotNeeded:
    """A saved array that only an unneeded gradient reads: its shape, dtype and transpose can be
    read, but any arithmetic with it raises (so does turning it into an array)."""

    def __init__(self, array: Any) -> None:
        self._array = array
        self.shape, self.ndim, self.dtype, self.size = array.shape, array.ndim, array.dtype, array.size

    @property
    def T(self) -> _NotNeeded:  # noqa: N802 (the array attribute)
        return _NotNeeded(self._array.T)

    def _used(self, *args: Any, **kwargs: Any) -> Any:
        raise _ProductNotNeeded

    __array__ = __array_ufunc__ = __array_function__ = _used
    __matmul__ = __rmatmul__ = __mul__ = __rmul__ = __add__ = __radd__ = __sub__ = __rsub__ = _used
    __truediv__ = __rtruediv__ = __neg__ = __getitem__ = _used

    def __getattr__(self, name: str) -> Any:  # reshape, dot, sum, ...
        if name.startswith("__"):  # a probe (hasattr(a, "__cuda_array_interface__")): no such thing
            raise AttributeError(name)
        raise _ProductNotNeeded


def backward_skipping_unneeded(
    case: str, fn: Function, inputs: list[Variable], reads: tuple, grad: Any
) -> Any:
    """fn.backward(grad), fn already called on inputs, with each saved input that only unneeded
    gradients read swapped for a stand-in (reads[i]: the input whose array gradient i is computed
    from, or None); CheckFailed if backward computes with one."""
    needs = fn.needs_input_grad
    needed = {reads[i] for i, need in enumerate(needs) if need}
    unneeded = {reads[i] for i, need in enumerate(needs) if not need and reads[i] is not None} - needed
    swapped = {id(inputs[k]._data): k for k in unneeded}
    fn._saved = tuple(
        (_NotNeeded(record[0]), *record[1:]) if record is not None and id(record[0]) in swapped else record
        for record in fn._saved
    )
    try:
        return fn.backward(grad)
    except _ProductNotNeeded:
        used = " or ".join(f"input {k}" for k in sorted(swapped.values()))
        raise CheckFailed(
            case,
            "None for each input that needs no gradient, without computing it",
            f"a product computed with the saved {used}, which only an unneeded gradient reads",
            f"compute each gradient only if self.needs_input_grad[i] is True (here {tuple(needs)}): "
            "computing it and then returning None does the work anyway",
        ) from None
