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


def test_an_inherited_method_hidden_by_one_of_the_class_own_is_named(snapshot, monkeypatch):
    # Variable gets * from VariableMethods: Variable.__mul__ = ... adds a name rather than rebinding one
    assert "__mul__" not in vars(varfunc.Variable)
    monkeypatch.setattr(varfunc.Variable, "__mul__", lambda self, other: 3)
    assert snapshot.replaced() == ["varfunc.variable.Variable.__mul__"]


def test_a_changed_constant_table_of_varfunc_is_named(snapshot, monkeypatch):
    # ch10's checks name the nodes with MODERN_NAMES: {"Add": "Add"} made v0.1 names pass as today's
    import varfunc.modern as modern

    assert ("varfunc.modern", "MODERN_NAMES") in snapshot.tables
    monkeypatch.setitem(modern.MODERN_NAMES, "Add", "Add")
    assert snapshot.replaced() == ["the contents of varfunc.modern.MODERN_NAMES"]


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


def _always_close(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.ones(np.broadcast(a, b).shape, bool)


@pytest.mark.parametrize(
    "rewrite",
    [
        lambda f: setattr(f, "__code__", _always_close.__code__),
        lambda f: setattr(f, "__defaults__", (1e9, 1e9, False)),
    ],
    ids=["code", "defaults"],
)
def test_rewriting_a_numpy_dispatchers_implementation_in_place_is_named(snapshot, monkeypatch, rewrite):
    implementation = np.isclose._implementation  # np.isclose itself is a dispatcher, not a function
    monkeypatch.setattr(implementation, "__code__", implementation.__code__)  # put back afterwards
    monkeypatch.setattr(implementation, "__defaults__", implementation.__defaults__)
    rewrite(implementation)
    assert "the code or defaults of numpy.isclose" in snapshot.replaced()
    assert np.isclose(1.0, 2.0)  # what the guard is there for


def test_rewriting_varfuncs_default_arguments_in_place_is_named(snapshot, monkeypatch):
    gradcheck = sys.modules["varfunc.gradcheck"].gradcheck
    monkeypatch.setattr(gradcheck, "__defaults__", (1e-6, 1e9, 1e9))
    assert snapshot.replaced() == [
        "the code or defaults of varfunc.gradcheck",
        "the code or defaults of varfunc.gradcheck.gradcheck",
    ]


def test_changing_keyword_only_defaults_in_place_is_named(monkeypatch):
    def takes_keywords(*, tolerance=1e-6):
        return tolerance

    module = types.ModuleType("varfunc.fake_for_guard_test")
    module.takes_keywords = takes_keywords
    monkeypatch.setitem(sys.modules, module.__name__, module)
    taken = guard.Snapshot.take()
    takes_keywords.__kwdefaults__["tolerance"] = 1e9  # the same dict, changed
    assert taken.replaced() == ["the code or defaults of varfunc.fake_for_guard_test.takes_keywords"]


def test_rewriting_a_methods_or_propertys_code_is_named(snapshot, monkeypatch):
    monkeypatch.setattr(varfunc.Variable.backward, "__code__", (lambda self, *a, **k: None).__code__)
    getter = varfunc.Function.saved_tensors.fget
    monkeypatch.setattr(getter, "__code__", (lambda self: ()).__code__)
    assert snapshot.replaced() == [
        "the code or defaults of varfunc.function.Function.saved_tensors",
        "the code or defaults of varfunc.variable.Variable.backward",
    ]


WRONG_MUL = """
from varfunc import Function
from varfunc.functions.utils import sum_to_shape

class Mul(Function):
    def forward(self, a, b):
        patch_numpy()  # while the checks run: the guard looked before them
        self.save_for_backward(a, b)
        return a * b

    def backward(self, g):
        a, b = self.saved_tensors
        return sum_to_shape(g * a, a.shape), sum_to_shape(g * b, b.shape)  # swapped: wrong
"""


def test_library_code_replaced_while_the_checks_run_is_not_checked(snapshot, monkeypatch, capsys):
    namespace = {"__name__": "__main__", "patch_numpy": lambda: None}
    exec(compile(WRONG_MUL, "notebook", "exec"), namespace)
    exec(compile(runner_source("ch03.mul"), "runner", "exec"), namespace)
    assert "ch03.mul not passed yet" in capsys.readouterr().out  # the wrong gradient, without a patch
    namespace["patch_numpy"] = lambda: monkeypatch.setattr(np, "isclose", _always_close)
    exec(compile(runner_source("ch03.mul"), "runner", "exec"), namespace)
    out = capsys.readouterr().out
    assert "'passed': False" in out and "'not_checked': True" in out
    assert "library code that the checks rely on while the checks ran (numpy.isclose)" in out


class _Publisher:
    def publish(self, data, metadata=None, **kwargs):
        self.shown = data


def test_a_replaced_display_publisher_is_named_and_never_sees_the_verdict(monkeypatch):
    shell = types.SimpleNamespace(display_pub=_Publisher())
    monkeypatch.setattr(guard, "_shell", lambda: shell)
    taken = guard.Snapshot.take()
    assert taken.replaced() == []
    seen = []
    shell.display_pub.publish = lambda data, metadata=None, **kwargs: seen.append(data)
    assert taken.replaced() == ["get_ipython().display_pub.publish"]
    taken.show({"text/plain": "verdict"})
    assert seen == [] and taken.publish.__self__.shown == {"text/plain": "verdict"}  # the kept one
    del shell.display_pub.publish
    shell.display_pub = _Publisher()  # another publisher object
    assert taken.replaced() == ["get_ipython().display_pub.publish"]


def test_a_replaced_import_module_is_named_and_the_runner_imports_with_the_kept_one(
    snapshot, monkeypatch, capsys
):
    import importlib

    calls = []
    real = importlib.import_module
    monkeypatch.setattr(
        importlib, "import_module", lambda name, package=None: calls.append(name) or real(name)
    )
    assert snapshot.replaced() == ["importlib.import_module"]
    namespace = {"predicted_a_grad": [3.5, 4.5], "predicted_b_grad": None, "__name__": "__main__"}
    exec(compile(runner_source("ch02.predict_grad"), "runner", "exec"), namespace)
    out = capsys.readouterr().out
    assert "varfunc.grading.hidden" not in calls
    assert "not checked" in out and "importlib.import_module" in out


def test_a_module_reloaded_by_the_notebook_is_named_with_the_reload_hint(snapshot, monkeypatch, capsys):
    """The grader said 'remove the lines that assign to ... names' for importlib.reload too."""
    module = sys.modules["varfunc.modern"]
    monkeypatch.setattr(module, "__spec__", type(module.__spec__)(module.__name__, None))  # as reload does
    monkeypatch.setattr(module, "modern_name", lambda function: "?")  # and its functions are new ones
    namespace = {"__name__": "__main__"}
    exec(compile(WRONG_MUL, "notebook", "exec"), namespace)
    exec(compile(runner_source("ch03.mul"), "runner", "exec"), namespace)
    out = capsys.readouterr().out
    assert "'not_checked': True" in out
    assert "the notebook reloaded library modules that the checks rely on (varfunc.modern)" in out
    assert "remove importlib.reload" in out and "assign to" not in out
