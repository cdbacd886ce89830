"""check in a kernel at its edges: a broken cell read by its tokens (a string's text is never code),
a cell magic's body run as a cell inside the student's cell (%%capture), and importlib.reload of a
library module (the check says to restart) or of the checks' own core (the checks keep working).

The reload tests run in a real kernel (nbclient): a reload in the test process would change the
classes that every later test uses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("IPython")

from exercises.ch02 import RIGHT_ANSWERS, WRONG_ANSWERS  # noqa: E402
from test_grading_session import cell, checked, started_shell  # noqa: E402

from varfunc.grading import guard  # noqa: E402
from varfunc.grading.bindings import names_bound_by  # noqa: E402

RIGHT = RIGHT_ANSWERS["ch02.make_param"][0][1]
WRONG = WRONG_ANSWERS["ch02.make_param"][0][1]
REPO = Path(__file__).resolve().parents[1]
IMPORTS = "import numpy as np\nfrom varfunc import Variable\nfrom varfunc.grading import check"
LOOKS_LIKE_AN_ANSWER = 'notes = """\nmake_param = my first try\ndef make_param(values):\n"""\nprint(notes\n'


@pytest.fixture
def shell(monkeypatch, tmp_path):
    """A fresh IPython shell that has imported varfunc.grading (test_grading_session's)."""
    yield from started_shell(monkeypatch, tmp_path)


@pytest.mark.parametrize(
    "source, names",
    [
        (LOOKS_LIKE_AN_ANSWER, {"notes"}),  # the lines in the string are text, not code
        ('tip = """\nx = 1\n', {"tip"}),  # a string left open runs to the end of the cell
        (
            "try:\n    def make_param(values):\n        return (\nexcept NameError:\n    pass\n",
            {"make_param"},
        ),
        ("for i in range(3):\n    total = i +\n", {"i", "total"}),
        ("x[0] = 1\nobj.a = (\nk += (\n", {"k"}),  # an item or an attribute is not a name
        ("class K(Base:\n    attr = 1\nafter = [\n", {"K", "after"}),  # an unclosed bracket above
    ],
    ids=["string", "open string", "in a try block", "for loop", "items and attributes", "unclosed bracket"],
)
def test_a_broken_cell_binds_what_its_statements_bind(source, names):
    assert names_bound_by(source) == names


def test_a_scratch_cell_with_a_typo_and_a_string_that_looks_like_an_answer_fails_no_check(shell, capsys):
    cell(shell, RIGHT)
    assert cell(shell, LOOKS_LIKE_AN_ANSWER).success is False
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")


def test_an_exercise_cell_with_a_typo_in_a_try_block_fails_its_check(shell, capsys):
    cell(shell, RIGHT)
    cell(shell, "try:\n" + "".join(f"    {line}\n" for line in WRONG.splitlines()) + ")\nexcept:\n  pass\n")
    out = checked(shell, capsys, "ch02.make_param")
    assert "your exercise cell raised SyntaxError the last time it ran" in out, out


def test_a_capture_cell_that_raised_fails_its_check_and_names_the_students_cell(shell, capsys):
    cell(shell, RIGHT)
    student_cell = shell.execution_count
    assert cell(shell, "%%capture\nundefined_name\n" + WRONG).execution_count == student_cell
    out = checked(shell, capsys, "ch02.make_param")
    assert f"your exercise cell raised NameError the last time it ran (In [{student_cell}])" in out, out
    cell(shell, "%%capture\n" + RIGHT)
    assert checked(shell, capsys, "ch02.make_param").startswith("✔")


def test_snapshot_names_a_module_run_again(monkeypatch):
    taken = guard.Snapshot.take()
    module = sys.modules["varfunc.modern"]
    monkeypatch.setattr(module, "__spec__", type(module.__spec__)(module.__name__, None))  # as reload does
    assert taken.reloaded() == ["varfunc.modern"]


# In a real kernel (nbclient) --------------------------------------------------------------------

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


def printed(cells: list[str], tmp_path: Path, monkeypatch) -> list[str]:
    """What each cell printed (its stream, or the error it raised), run in a fresh kernel."""
    from nbclient import NotebookClient

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    monkeypatch.delenv(guard.GUARD_ENV, raising=False)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    client = NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3")
    client.execute(cwd=str(REPO))
    return ["".join(out.get("text", "") or f"{out.get('ename')}\n" for out in c.outputs) for c in nb.cells]


@pytest.mark.slow
def test_capture_in_a_kernel_reports_the_students_cell(tmp_path, monkeypatch):
    out = printed(
        [IMPORTS, RIGHT, "%%capture\nundefined_name\n" + WRONG, "check('ch02.make_param')"]
        + ["%%capture\n" + WRONG + ")", "check('ch02.make_param')"],
        tmp_path,
        monkeypatch,
    )
    assert "your exercise cell raised NameError the last time it ran (In [3])" in out[3], out
    assert "your exercise cell raised SyntaxError the last time it ran (In [5])" in out[5], out


@pytest.mark.slow
def test_a_reloaded_library_module_says_reloaded_and_to_restart(tmp_path, monkeypatch):
    out = printed(
        [IMPORTS, RIGHT, "import importlib, varfunc.variable\n_ = importlib.reload(varfunc.variable)"]
        + ["check('ch02.make_param')"],
        tmp_path,
        monkeypatch,
    )
    assert "not checked: varfunc.variable was reloaded (importlib.reload) in this kernel" in out[3], out
    assert "restart the kernel (Kernel > Restart)" in out[3] and "assign" not in out[3], out


@pytest.mark.slow
def test_checks_keep_working_after_the_checks_core_is_reloaded(tmp_path, monkeypatch):
    reload_core = "import importlib, varfunc.grading.core as core\n_ = importlib.reload(core)"
    out = printed(
        [IMPORTS, RIGHT, "check('ch02.make_param')", reload_core, "check('ch02.make_param')"]
        + ["core.check('ch02.make_param')", WRONG, "check('ch02.make_param')", "core.check('ch03.mul')"]
        + [WRONG + ")", "core.check('ch02.make_param')"],
        tmp_path,
        monkeypatch,
    )
    assert out[2].startswith("✔") and out[4].startswith("✔") and out[5].startswith("✔"), out
    assert out[7].startswith("✘ ch02.make_param"), out
    assert out[8].startswith("✘ ch03.mul") and "Mul not defined" in out[8], out  # imported after the reload
    assert "your exercise cell raised SyntaxError the last time it ran (In [10])" in out[10], out
