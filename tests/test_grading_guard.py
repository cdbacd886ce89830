"""The grader's guard: a notebook that replaces library code the checks rely on gets no points for it."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

pytest.importorskip("IPython")

import varfunc  # noqa: E402
from varfunc.grading import guard  # noqa: E402
from varfunc.grading.hidden import runner_source  # noqa: E402


@pytest.fixture
def snapshot(monkeypatch):
    """A snapshot taken now and kept where the grader's startup file keeps it."""
    taken = guard.Snapshot.take()
    monkeypatch.setitem(sys.modules, guard.SNAPSHOT_KEY, taken)
    return taken


def test_nothing_is_replaced_right_after_the_snapshot(snapshot):
    assert snapshot.replaced() == []
    assert ("numpy", "allclose") in snapshot.entries
    assert ("varfunc.variable.Variable", "backward") in snapshot.entries
    assert ("IPython.display", "display") in snapshot.entries


@pytest.mark.parametrize(
    ("owner", "name", "shown"),
    [
        (np, "allclose", "numpy.allclose"),
        (np.testing, "assert_allclose", "numpy.testing.assert_allclose"),
        (varfunc.Variable, "backward", "varfunc.variable.Variable.backward"),
        (varfunc.Function, "saved_tensors", "varfunc.function.Function.saved_tensors"),
        (sys.modules["builtins"], "divmod", "builtins.divmod"),
    ],
)
def test_a_replaced_function_method_or_property_is_named(snapshot, monkeypatch, owner, name, shown):
    monkeypatch.setattr(owner, name, lambda *args, **kwargs: True)
    assert snapshot.replaced() == [shown]


def test_a_bound_method_made_again_is_the_same_but_another_self_is_not(monkeypatch):
    class Shell:
        def get_ipython(self):
            return self

    shell, other = Shell(), Shell()
    module = types.ModuleType("numpy.fake_for_guard_test")
    module.get_ipython = shell.get_ipython
    monkeypatch.setitem(sys.modules, module.__name__, module)
    taken = guard.Snapshot.take()
    module.get_ipython = shell.get_ipython  # IPython binds get_ipython anew for every cell
    assert taken.replaced() == []
    module.get_ipython = other.get_ipython
    assert taken.replaced() == ["numpy.fake_for_guard_test.get_ipython"]


def test_the_runner_does_not_check_an_exercise_after_numpy_was_patched(snapshot, monkeypatch, capsys):
    namespace = {"predicted_a_grad": [3.5, 4.5], "predicted_b_grad": None, "__name__": "__main__"}
    exec(compile(runner_source("ch02.predict_grad"), "runner", "exec"), dict(namespace))
    assert "ch02.predict_grad passed" in capsys.readouterr().out
    monkeypatch.setattr(np, "allclose", lambda *args, **kwargs: True)
    exec(compile(runner_source("ch02.predict_grad"), "runner", "exec"), dict(namespace))
    out = capsys.readouterr().out
    assert "not checked" in out and "numpy.allclose" in out and "'passed': False" in out


def test_in_the_graders_kernel_a_removed_snapshot_is_not_checked_either(monkeypatch, capsys):
    monkeypatch.setenv(guard.GUARD_ENV, "1")
    monkeypatch.delitem(sys.modules, guard.SNAPSHOT_KEY, raising=False)
    namespace = {"predicted_a_grad": [3.5, 4.5], "predicted_b_grad": None, "__name__": "__main__"}
    exec(compile(runner_source("ch02.predict_grad"), "runner", "exec"), namespace)
    assert "snapshot of the libraries was removed" in capsys.readouterr().out
