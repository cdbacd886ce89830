"""A refused in-place forward: the version counts what is left changed, nothing else.

A Function written outside the kit gets its inputs put back when its forward fails or its outputs
are refused, so its dirty input's version stays (before: it went up, and a graph that had saved
the input raised an InplaceError for a change that had been undone). The kit's own in-place ops
are not undone, so their write is counted.
"""

from __future__ import annotations

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, InplaceFunction, Variable
from varfunc.dirty import DirtyInputs


class Triples(Function):
    """a *= 3 in place, then returns what `returns` says."""

    def __init__(self, returns: str) -> None:
        self.returns = returns

    def forward(self, a):
        a *= 3
        self.mark_dirty(a)
        if self.returns == "raise":
            raise ValueError("a mistake after the write")
        return {"itself": a, "a copy": a * 1, "and None": (a, None), "twice": (a, a)}[self.returns]

    def backward(self, g):
        return g * 3


@pytest.mark.parametrize("returns", ["a copy", "and None", "twice", "raise"])
def test_a_refused_in_place_function_of_ours_leaves_data_version_and_gradients_as_they_were(returns):
    x = Variable(np.array([1.0, 2.0]))
    h = x * 2.0
    y = (h * h).sum()  # Mul saves h, at version 0
    with pytest.raises((vf.VarfuncError, ValueError)):
        Triples(returns)(h)
    assert h.data.tolist() == [2.0, 4.0] and h._version == [0]
    y.backward()  # before: InplaceError, "modified by an in-place operation", though h was put back
    np.testing.assert_allclose(x.grad, 8 * x.data)  # d(sum 4 x^2)/dx


def test_an_accepted_in_place_function_counts_its_change_once():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 2.0
    y = (h * h).sum()
    assert Triples("itself")(h) is h and h._version == [1] and h.data.tolist() == [6.0, 12.0]
    with pytest.raises(vf.InplaceError, match="saved tensor"):  # the change stays: an error
        y.backward()
    z = (h * h).sum()  # a graph built after the change saves the new version
    z.backward()
    np.testing.assert_allclose(x.grad, 72 * x.data)  # h = 6 x: d(36 x^2)/dx = 72 x


class TriplesInPlace(InplaceFunction):
    def forward(self, a):
        self.mark_dirty(a)
        a *= 3
        raise FloatingPointError("stopped after writing")


def test_a_refused_in_place_op_of_the_kit_keeps_its_write_counted(monkeypatch):
    monkeypatch.setattr(TriplesInPlace, "outside_the_kit", False)  # as the kit's own ops: no copies
    x = Variable(np.array([1.0, 2.0]))
    h = x * 2.0
    y = (h * h).sum()
    with pytest.raises(FloatingPointError):
        TriplesInPlace(True)(h)
    assert h.data.tolist() == [6.0, 12.0] and h._version == [1]  # written, not undone: counted
    with pytest.raises(vf.InplaceError, match="saved tensor"):
        y.backward()


def test_a_put_back_that_is_interrupted_leaves_the_change_counted(monkeypatch):
    def interrupted(self, arrays, copies):
        raise KeyboardInterrupt

    monkeypatch.setattr(DirtyInputs, "_put_back", interrupted)
    h = Variable(np.array([1.0, 2.0])) * 2.0
    y = (h * h).sum()
    with pytest.raises(KeyboardInterrupt):
        Triples("a copy")(h)
    assert h.data.tolist() == [6.0, 12.0] and h._version == [1]  # not put back: counted
    with pytest.raises(vf.InplaceError, match="saved tensor"):
        y.backward()


class SavesWhatItMade(Function):
    """Saves an array forward made and does not return: refused, with no graph recorded."""

    def forward(self, a):
        self.save_for_backward(a * 3)
        return a * 2

    def backward(self, g):
        return g * 2


class ChangesItsInputUnmarked(Function):
    """Asks to save its input, then changes it in place without mark_dirty: refused and put back."""

    def forward(self, a):
        self.save_for_backward(a)
        self.mark_non_differentiable()
        a += 1
        return a * 2

    def backward(self, g):
        return g * 2


@pytest.mark.parametrize("make", [SavesWhatItMade, ChangesItsInputUnmarked])
def test_a_refused_forward_records_nothing_and_forgets_what_it_asked_for(make):
    """Refused before the graph is touched: no output_ids (a retry is not 'already called')."""
    x = Variable(np.array([1.0, 2.0]))
    f = make()
    with pytest.raises(vf.VarfuncError):
        f(x)
    assert f.output_ids is None and f.previous_functions is None
    assert f.to_save is None and f.non_differentiable is None and f.dirty_tensors is None
    assert x.data.tolist() == [1.0, 2.0] and x._version == [0]
    with pytest.raises(vf.VarfuncError, match="neither an input|without mark_dirty"):
        f(x)  # the same error again, not "was already called"
