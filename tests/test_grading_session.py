"""check in a notebook's kernel: a verdict only for what the exercise cell now holds, and none when the
kernel's library code was replaced; Ctrl-C during a check; passes() for the cells that use an answer.

The kernel is IPython's InteractiveShell, cells run with run_cell as a notebook runs them.
"""

from __future__ import annotations

import sys
import traceback

import numpy as np
import pytest

pytest.importorskip("IPython")

from exercises.ch02 import RIGHT_ANSWERS, WRONG_ANSWERS  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from traitlets.config import Config  # noqa: E402

from varfunc import Variable  # noqa: E402
from varfunc.grading import check, evaluate  # noqa: E402
from varfunc.grading.bindings import names_bound_by  # noqa: E402
from varfunc.grading.core import passes  # noqa: E402
from varfunc.grading.guard import GUARD_ENV  # noqa: E402
from varfunc.grading.session import session  # noqa: E402

RIGHT = RIGHT_ANSWERS["ch02.make_param"][0][1]
WRONG = WRONG_ANSWERS["ch02.make_param"][0][1]
COUNTS = '{"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}'
ORDER = '["Sum#5", "Mul#4", "Add#3", "Mul#2", "y", "x"]'


@pytest.fixture
def shell(monkeypatch, tmp_path):
    """A fresh IPython shell that has imported varfunc.grading, as a notebook's first cells do."""
    yield from started_shell(monkeypatch, tmp_path)


def started_shell(monkeypatch, tmp_path):
    """The shell fixture's shell, made and, once the test is done, cleared (test_grading_kernel_edges too)."""
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    monkeypatch.delenv(GUARD_ENV, raising=False)
    InteractiveShell.clear_instance()
    # history in memory: a database in tmp_path is written to at exit, when tmp_path may be gone
    shell = InteractiveShell.instance(config=Config({"HistoryManager": {"hist_file": ":memory:"}}))
    cell(shell, "import numpy as np\nfrom varfunc import Variable\nfrom varfunc.grading import check")
    # what importing varfunc.grading in a cell does (here it was imported before the shell started)
    assert cell(shell, "from varfunc.grading.session import session\nsession()").success
    yield shell
    InteractiveShell.clear_instance()


def cell(shell: InteractiveShell, source: str):
    """Run one cell as the notebook does; its result says whether it raised."""
    return shell.run_cell(source, store_history=True)


def checked(shell: InteractiveShell, capsys, exercise_id: str) -> str:
    """What the check cell prints."""
    capsys.readouterr()
    cell(shell, f"check({exercise_id!r})")
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "broken, error",
    [
        (WRONG + ")\n", "SyntaxError"),  # a wrong answer and a typo: nothing in the cell ran
        ("raise KeyboardInterrupt\n" + WRONG, "KeyboardInterrupt"),  # interrupted before the def
        ("make_param = make_parm\n", "NameError"),
    ],
)
def test_an_exercise_cell_that_raised_after_a_right_answer_fails_its_check(shell, capsys, broken, error):
    cell(shell, RIGHT)
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")
    assert cell(shell, broken).success is False
    out = checked(shell, capsys, "ch02.make_param")
    assert out.startswith("✘"), out
    assert f"your exercise cell raised {error} the last time it ran" in out, out
    assert "this check would only see the make_param from an earlier run" in out, out
    cell(shell, RIGHT)
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")


def test_a_first_run_that_raised_says_so_rather_than_run_the_cell(shell, capsys):
    cell(shell, RIGHT + ")")
    out = checked(shell, capsys, "ch02.make_param")
    assert "raised SyntaxError the last time it ran" in out and "make_param not defined" in out, out


def test_a_prediction_cell_that_raised_half_way_fails_for_the_answer_it_did_not_set(shell, capsys):
    cell(shell, f"predicted_counts = {COUNTS}\npredicted_order = {ORDER}")
    assert checked(shell, capsys, "ch04.dependencies").startswith("✔")
    cell(shell, f"predicted_counts = {COUNTS}\npredicted_order = [Sum]")  # a NameError
    out = checked(shell, capsys, "ch04.dependencies")
    assert "your exercise cell raised NameError the last time it ran" in out, out
    assert "only see the predicted_order from an earlier run" in out and "predicted_counts" not in out, out


def test_an_error_after_the_cell_defined_the_answer_grades_the_new_answer(shell, capsys):
    cell(shell, RIGHT)
    cell(shell, WRONG + "make_param(undefined_name)\n")  # as the grader: the new make_param is checked
    out = checked(shell, capsys, "ch02.make_param")
    assert out.startswith("✘") and "the last time it ran" not in out, out


def test_a_scratch_cell_that_raised_fails_no_other_exercise(shell, capsys):
    cell(shell, RIGHT)
    cell(shell, "x = undefined_name")
    cell(shell, "def other(:\n    pass")
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")


@pytest.mark.parametrize(
    "source, names",
    [
        ("def f(x):\n    y = 1\n", {"f"}),
        ("a, b = 1, 2\nclass C:\n    z = 3\nimport numpy as np\n", {"a", "b", "C", "np"}),
        ("def f(x:\n    y = 1\nx: int = 3\nz == 4\n", {"f", "x"}),  # not Python: what lines look like
        ("v = [Mul for Mul in range(3)]\nok = any((n := i) for i in v)\nT: type\n", {"v", "ok", "n"}),
        ("%%time\nclass Mul:\n    pass\n", {"Mul"}),  # a cell magic runs its body in the notebook
    ],
    ids=["def", "assignments, class, import", "not Python", "comprehensions and annotations", "cell magic"],
)
def test_the_names_a_cell_binds(source, names):
    assert names_bound_by(source) == names


def test_the_session_is_started_once_per_kernel(shell):
    callbacks = shell.events.callbacks["post_run_cell"]
    assert session() is session()
    assert sum(getattr(f, "__self__", None) is session() for f in callbacks) == 1


def test_replaced_library_code_fails_the_check_and_says_to_restart(shell, capsys):
    cell(shell, RIGHT)
    try:
        cell(shell, "Variable.__mul__ = lambda self, other: Variable(np.zeros(1))")
        out = checked(shell, capsys, "ch02.make_param")
    finally:
        del Variable.__mul__
    assert out.startswith("✘"), out
    assert "not checked: varfunc.variable.Variable.__mul__ was replaced in this kernel" in out, out
    assert "restart the kernel (Kernel > Restart)" in out, out
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")


def test_outside_ipython_and_in_the_graders_kernel_there_is_no_session(monkeypatch):
    InteractiveShell.clear_instance()
    assert session() is None
    monkeypatch.setenv(GUARD_ENV, "1")
    InteractiveShell.instance()
    try:
        assert session() is None
    finally:
        InteractiveShell.clear_instance()


def _interrupted_make_param(values):
    raise KeyboardInterrupt


def test_ctrl_c_during_a_check_prints_one_line_and_stops_there(capsys):
    with pytest.raises(KeyboardInterrupt) as interrupt:
        check("ch02.make_param", {"make_param": _interrupted_make_param})
    out = capsys.readouterr().out
    assert out.startswith(
        "✘ ch02.make_param interrupted while running your make_param on case make_param("
    ), out
    assert out.count("\n") == 1, out
    frames = [f.name for f in traceback.extract_tb(interrupt.value.__traceback__) if "varfunc" in f.filename]
    assert frames == ["check"]  # not the checks' own frames


def test_after_ctrl_c_during_a_check_the_watch_on_the_kits_code_is_off(capsys):
    class MySigmoid:  # an answer interrupted in forward, while the check refuses the kit's sigmoid
        def __call__(self, *inputs):
            raise KeyboardInterrupt

    before = np.geterr()
    np.seterr(all="raise")
    try:
        with pytest.raises(KeyboardInterrupt):
            check("ch05.sigmoid", {"MySigmoid": MySigmoid})
        assert sys.getprofile() is None and np.geterr()["divide"] == "raise"
    finally:
        np.seterr(**before)
    assert "interrupted while running your MySigmoid" in capsys.readouterr().out


def test_ctrl_c_in_a_kernel_shows_no_traceback_through_the_checks(shell, capsys):
    shell.user_ns["make_param"] = _interrupted_make_param
    out = checked(shell, capsys, "ch02.make_param")
    assert "interrupted while running your make_param" in out, out
    assert "KeyboardInterrupt" in out and "ch02.py" not in out, out


def test_passes_says_whether_the_answer_passes_without_printing(capsys):
    namespace = {"np": np, "Variable": Variable}
    assert not passes("ch02.make_param", namespace)  # not defined yet
    exec(WRONG, namespace)
    assert not passes("ch02.make_param", namespace)
    exec(RIGHT.replace("    return", "    print('hello')\n    return"), namespace)
    assert passes("ch02.make_param", namespace)
    assert capsys.readouterr().out == ""


def test_passes_is_false_for_an_exercise_cell_that_raised(shell):
    cell(shell, RIGHT)
    assert cell(shell, "from varfunc.grading.core import passes\nok = passes('ch02.make_param')").success
    assert shell.user_ns["ok"] is True
    cell(shell, RIGHT + ")")
    cell(shell, "ok = passes('ch02.make_param')")
    assert shell.user_ns["ok"] is False


def test_evaluate_is_unchanged_in_a_kernel(shell):
    cell(shell, RIGHT + ")")  # the cell raised, but evaluate (the grader's) grades the namespace it gets
    cell(shell, RIGHT)
    cell(shell, RIGHT + ")")
    assert evaluate("ch02.make_param", shell.user_ns).passed


def test_a_cell_run_again_that_binds_the_same_value_and_then_raises_is_graded_as_run(shell, capsys):
    """None, True, a small int: the same object after binding it again, so unchanged said 'not bound'."""
    answers = "predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = None\nprint(undefined_name)\n"
    cell(shell, answers)
    first = checked(shell, capsys, "ch02.predict_grad")
    cell(shell, answers)  # the same cell again: it binds both answers, then raises again
    assert checked(shell, capsys, "ch02.predict_grad") == first, first


def test_a_comprehension_variable_of_the_answers_name_is_not_the_answer(shell, capsys):
    cell(shell, RIGHT)
    cell(shell, "vals = [make_param for make_param in range(3)]\n1 / 0")
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")


def test_a_cell_magics_exercise_cell_that_raised_fails_its_check(shell, capsys):
    cell(shell, RIGHT)
    cell(shell, "%%time\nundefined_name\n" + WRONG)  # NameError before the new make_param
    out = checked(shell, capsys, "ch02.make_param")
    assert "your exercise cell raised NameError the last time it ran" in out, out


@pytest.mark.parametrize("typo", ["none", "Flase"])
def test_a_typo_in_a_prediction_that_held_none_says_the_cell_raised(shell, capsys, typo):
    """None (and True, 3) is the same object when bound again, so the value alone could not tell that
    the new run never bound it: the check graded the earlier run's answer, blaming the cell's text."""
    cell(shell, "predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = None")
    cell(shell, f"predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = {typo}")  # a NameError on line 2
    out = checked(shell, capsys, "ch02.predict_grad")
    assert "your exercise cell raised NameError the last time it ran" in out, out
    assert "only see the predicted_b_grad from an earlier run" in out and "predicted_a_grad" not in out, out
    cell(shell, "predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = None\nprint(undefined_name)")
    assert "the last time it ran" not in checked(shell, capsys, "ch02.predict_grad")  # bound, then raised


def _stale_after(shell, source: str) -> bool:
    """Whether x (None before) is stale after source, a cell that raises, ran."""
    cell(shell, "x = None")
    assert cell(shell, source).success is False
    return "x" in session().stale(["x"], shell.user_ns)


@pytest.mark.parametrize(
    "source, stale",
    [
        ("x = (\n    1/0)", True),  # raised on the last line of the statement binding x: not bound
        ("x = 1 +", True),  # a typo: nothing in the cell ran
        ("x = None\neval('1/0')", False),  # raised on line 2 (line 1 of the evaluated text)
        ("x = None\n%time 1\nraise ValueError", False),  # not Python: not known, graded as it left it
    ],
)
def test_a_name_that_holds_none_again_is_stale_unless_the_cell_bound_it_before_it_raised(
    shell, source, stale
):
    assert _stale_after(shell, source) is stale


def test_a_module_the_cell_imports_that_raises_counts_the_cells_own_line(shell, tmp_path, monkeypatch):
    (tmp_path / "raises_on_import.py").write_text("raise RuntimeError('at its line 1')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _stale_after(shell, "y = 0\nx = None\nimport raises_on_import") is False
