"""What ``mark_dirty`` sets going: an in-place op's version count, its refusals, the rebased input.

A mixin of Function, kept apart from function.py (as the hooks are) so that the graph-building code
reads on its own. The counter is the one that replaced v0.1.3's dirty flag (``a22af69``): a saved
tensor remembers the version it saw, and ``saved_tensors`` refuses one that has moved on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backend import is_array, set_shape
from .errors import InplaceError, VarfuncError
from .guards import make_attributes_read_only


def is_one_of(x: Any, items: tuple) -> bool:
    """x is (not equals) one of items: arrays compare elementwise, so ``in`` cannot be used."""
    for item in items:
        if x is item:
            return True
    return False


class DirtyInputs:
    """Counting and checking the inputs a Function's forward changed in place (a mixin of Function)."""

    __slots__ = ()

    def _copies_to_compare(self, arrays: tuple) -> list:
        """Copies of the input arrays (a GPU one's on its GPU), to show after forward that it changed
        none unmarked."""
        return [array.copy() if is_array(array) else None for array in arrays]

    def _check_forward(self, input: tuple, arrays: tuple, raw_outputs: tuple, copies: list) -> None:
        """What forward did, for a Function written outside the kit: an input changed without
        mark_dirty is put back and refused; an attribute set to an input's or output's array (or a
        view of one) becomes read-only, so that backward cannot change a Variable's data through it,
        and the input's version is kept, as a saved tensor's is (_check_held_inputs)."""
        dirty = self.dirty_tensors or ()
        if not all(is_one_of(tensor, arrays) for tensor in dirty):
            return  # mark_dirty got something else: _check_declared says so
        held = make_attributes_read_only(self, (*arrays, *raw_outputs))
        self._held_inputs = tuple(
            (i, input[i]._version, input[i]._version[0])
            for i in sorted(held)
            if i < len(arrays) and not is_one_of(arrays[i], dirty)
        )
        for index, (array, copy) in enumerate(zip(arrays, copies)):
            if copy is None or is_one_of(array, dirty) or _unchanged(array, copy):
                continue
            self._put_back(arrays, copies)
            self.dirty_tensors = None
            raise InplaceError(
                f"{self!r}: forward changed input {index} (shape {copy.shape}) in place without "
                "mark_dirty, so that Variable's data, and every gradient that uses it, would change "
                "silently (the inputs were put back); return a new array (a + 1, not a += 1), or, for "
                "an in-place op, call self.mark_dirty(a) (chapter 07)"
            )

    def _check_held_inputs(self) -> None:
        """Before a student's backward: an InplaceError if an input that forward kept as an attribute
        (self.a = a) has been changed in place since, as saved_tensors checks a saved one."""
        for index, counter, version in self._held_inputs:
            if counter[0] != version:
                raise InplaceError(
                    f"{self!r}: forward kept input {index} as an attribute, and that Variable was "
                    f"modified by an in-place operation since (version {version}, now {counter[0]}), "
                    "so backward would use the changed values; keep it with self.save_for_backward(a) "
                    "and read self.saved_tensors in backward, or keep a copy (self.a = a.copy())"
                )

    def _put_back(self, arrays: tuple, copies: list) -> None:
        """Write each input's copy back: every change forward made to its inputs, marked or not, undone."""
        for array, copy in zip(arrays, copies):
            if copy is not None and getattr(array.flags, "writeable", True):  # (CuPy's flags have none)
                if array.shape != copy.shape:  # forward set a.shape: the same memory, read another way
                    set_shape(array, copy.shape)
                array[...] = copy

    def _count_in_place_change(self, input: tuple, dirty: tuple, step: int = 1) -> None:
        """Bump the version of each input whose array forward changed in place (mark_dirty)."""
        for variable in input:
            if is_one_of(variable._data, dirty):
                variable._version[0] += step

    def _put_back_or_count(self, input: tuple, arrays: tuple, copies: list | None, dirty: Any) -> None:
        """After a failed or refused forward: a Function you wrote (copies taken) gets its inputs put
        back, so no version moves; the kit's own op keeps what it wrote, and the version counts it."""
        if dirty is not None:  # counted first: a put back that is interrupted leaves the change counted
            self._count_in_place_change(input, dirty)
        if copies is not None:
            self._put_back(arrays, copies)
            if dirty is not None:  # the data is as it was: a Function that saved it may still use it
                self._count_in_place_change(input, dirty, step=-1)

    def _check_declared(self, input, raw_outputs, dirty) -> None:
        """Refuse what forward declared wrongly (mark_dirty, mark_non_differentiable, save_for_backward)
        before the graph is touched.

        _do_forward counts the change once the outputs are accepted too; a refused call's change is
        counted by _forward_failed, or put back (a Function you wrote) and then not counted.
        """
        for position, tensor in enumerate(self.non_differentiable or ()):
            if not is_one_of(tensor, raw_outputs):
                raise self._not_an_output(position, tensor)
        if dirty is not None:
            self._check_dirty(input, raw_outputs, dirty)
        for position, tensor in enumerate(self.to_save or ()):  # _save would refuse these too late
            if tensor is not None and not is_one_of(tensor, raw_outputs):
                if not any(tensor is v._data for v in input):
                    raise self._not_input_or_output(position, tensor)

    def _check_dirty(self, input, raw_outputs, dirty) -> None:
        """mark_dirty's rules: inputs only, no leaf that requires grad, each returned once."""
        changed = []
        for array in dirty:
            owner = next((v for v in input if v._data is array), None)
            if owner is None:
                shape = getattr(array, "shape", type(array).__name__)
                raise VarfuncError(
                    f"{self!r}: mark_dirty() got an array that is not one of the inputs (shape {shape}); "
                    "mark the input array itself, the one forward received, even if only part changed"
                )
            changed.append(owner)
        name = type(self).__name__
        for variable in changed:
            # A leaf: its creator is a Leaf, the only node with no inputs. (requires_grad first: a
            # volatile Variable has no creator, and never requires grad.)
            if variable.requires_grad and not variable.creator.previous_functions:
                raise InplaceError(
                    f"{name}: forward changed a leaf Variable that requires grad in place "
                    "(mark_dirty), so its gradient would no longer match its data; work on a copy "
                    "(x.clone()) or on a Variable that does not require grad"
                )
        for array in dirty:
            returned = sum(raw is array for raw in raw_outputs)
            if returned != 1:
                raise VarfuncError(
                    f"{name}: forward marked an input dirty (mark_dirty) and returned it {returned} "
                    "times; an in-place op returns the array it changed once, as one of its outputs"
                )

    def _not_input_or_output(self, position: int, tensor: Any) -> VarfuncError:
        """save_for_backward got something forward neither received nor returned."""
        if isinstance(tensor, (tuple, list)):
            fix = "pass the arrays themselves, save_for_backward(a, b), not a tuple of them"
        else:
            fix = "keep other arrays as attributes (self.mask = ...)"
        return VarfuncError(
            f"{self!r}.save_for_backward: argument {position} is neither an input nor an output of "
            f"forward; {fix}"
        )

    def _not_an_output(self, position: int, tensor: Any) -> VarfuncError:
        """mark_non_differentiable got something forward did not return (a copy of it, say)."""
        shape = getattr(tensor, "shape", type(tensor).__name__)
        return VarfuncError(
            f"{self!r}.mark_non_differentiable: argument {position} (shape {shape}) is not one of the "
            "arrays forward returned; mark the array itself that forward returns (m.astype(...) "
            "makes a new array: convert first, then mark and return that)"
        )

    def _rebase_dirty_input(self, input, array, creator):
        """The input whose array forward changed in place becomes this Function's output."""
        variable = next(v for v in input if v._data is array)  # _check_declared checked it is one
        if creator is None:  # a volatile input: volatility spreads to the changed Variable too
            variable.volatile = True
            variable.creator = None
            variable._requires_grad = None
        elif self.requires_grad or variable.creator.previous_functions:
            # (Not a leaf, whose Leaf creator has no previous_functions, changed by an op that needs no
            # grad: it stays a leaf, as in torch.)
            variable.creator = creator
            variable._requires_grad = None if array.dtype.kind == "f" else False  # as _wrap_outputs
        return variable


def _unchanged(array: Any, copy: Any) -> bool:
    """array still equals its copy, NaN counting as equal to NaN (the slower check, only if needed)."""
    if array.shape != copy.shape:
        return False
    return np.array_equal(array, copy) or (
        array.dtype.kind in "fc" and np.array_equal(array, copy, equal_nan=True)
    )
