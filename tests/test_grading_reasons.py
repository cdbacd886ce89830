"""Reports say plainly what happened and what to do: IPython's exit() in an exercise cell or in the
code the checks run, an earlier failed cell named only when the exercise needed a name it defines
(not for a wrong answer), and copied exercise or check cells and an edited check cell named in the
problems, with the cells to look at.

Chapter 03 (Mul and Div) is the subject: one parallel batch grades the prepared submissions once.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.grade import GradeOptions  # noqa: E402
from varfunc.grading.notebook import nbgrader_meta, solution_source  # noqa: E402
from varfunc.grading.plan import is_edited_check  # noqa: E402

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "03_functions_and_the_forward_graph.ipynb"
OPTIONS = GradeOptions(cell_timeout=8, notebook_timeout=120)

WRONG_MUL = (
    "class Mul(Function):\n    def forward(self, a, b):\n        self.save_for_backward(a, b)\n"
    "        return a * b\n\n    def backward(self, g):\n        a, b = self.saved_tensors\n"
    "        return sum_to_shape(g * a, a.shape), sum_to_shape(g * b, b.shape)\n"  # swapped
)
NEEDS_SCALE = WRONG_MUL.replace("g * a, a.shape", "SCALE * g * b, a.shape")


def _position(nb, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == grade_id)


def _div(nb) -> str:
    return solution_source(nb.cells[_position(nb, "ch03_div")].source)


def _exit_in_the_cell(nb):
    nb.cells[_position(nb, "ch03_div")].source = _div(nb) + "\nexit()\n"


def _exit_in_the_checks(nb):
    forward = "    def forward(self, a, b):\n"
    nb.cells[_position(nb, "ch03_div")].source = _div(nb).replace(forward, forward + "        exit()\n")


def _scratch_cell(source: str, mul: str):
    def edit(nb):
        nb.cells.insert(2, nbformat.v4.new_code_cell(source))  # right after the imports
        nb.cells[_position(nb, "ch03_mul")].source = mul

    return edit


def _copies_and_an_edit(nb):
    mul, check = _position(nb, "ch03_mul"), _position(nb, "ch03_div_check")
    nb.cells.insert(check + 1, copy.deepcopy(nb.cells[check]))  # a copy of Div's check cell
    nb.cells.insert(mul, copy.deepcopy(nb.cells[mul]))  # a copy of Mul's exercise cell, above it
    nb.cells[_position(nb, "ch03_mul_check")].source = "print('passed')  # check('ch03.mul')\n"
    for position, cell in enumerate(nb.cells):
        cell.id = f"cell-{position}"  # nbformat wants ids unique


SUBMISSIONS = {
    "exit_in_the_cell": _exit_in_the_cell,
    "exit_in_the_checks": _exit_in_the_checks,
    "scratch_error": _scratch_cell("1 / 0\n", WRONG_MUL),
    "needs_scale": _scratch_cell("1 / 0\nSCALE = 1\n", NEEDS_SCALE),
    "copies_and_an_edit": _copies_and_an_edit,
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("reasons")
    paths = []
    for student, edit in SUBMISSIONS.items():
        nb = nbformat.read(SOURCE, as_version=4)
        edit(nb)
        path = root / student / SOURCE.name
        path.parent.mkdir()
        nbformat.write(nb, path)
        paths.append(path)
    reports = grade_class(paths, root / "grades", OPTIONS, jobs=2, progress=False)
    return {r["student"]: r for r in reports}


def _exercises(report):
    return {e["id"]: e for e in report["exercises"]}


@pytest.mark.slow
@pytest.mark.parametrize(
    "student, reason",
    [
        (
            "exit_in_the_cell",
            "your exercise cell called exit() or quit(), which shuts the kernel down (in Jupyter too), "
            "so nothing the cell defined was left to check: remove the call",
        ),
        (
            "exit_in_the_checks",
            "your code called exit() or quit() while the checks ran it, which shuts the kernel down: "
            "remove the call",
        ),
    ],
)
def test_exit_is_reported_as_what_it_is(graded, student, reason):
    """exit() raises nothing: the kernel shuts down a moment later, and was blamed on a later cell."""
    exercises = _exercises(graded[student])
    assert exercises["ch03.div"]["status"] == "crashed" and exercises["ch03.div"]["points"] == 0
    assert exercises["ch03.div"]["reason"].startswith(reason), exercises["ch03.div"]
    assert exercises["ch03.mul"]["status"] == "passed"


@pytest.mark.slow
def test_an_exit_in_an_exercise_cell_is_listed_with_the_cells_that_failed(graded):
    errors = graded["exit_in_the_cell"]["cell_errors"]
    assert [(e["grade_id"], e["status"]) for e in errors] == [("ch03_div", "died")]
    assert "exit()" in errors[0]["error"]


@pytest.mark.slow
def test_an_earlier_failure_is_not_blamed_for_a_wrong_answer(graded):
    report = graded["scratch_error"]
    mul = _exercises(report)["ch03.mul"]
    assert mul["status"] == "failed" and mul["reason"] == mul["case"], mul  # the wrong gradient alone
    assert [e["cell"] for e in report["cell_errors"]] == [2]  # the scratch cell is still listed


@pytest.mark.slow
def test_an_earlier_failure_is_named_when_the_exercise_needs_a_name_it_defines(graded):
    mul = _exercises(graded["needs_scale"])["ch03.mul"]
    assert mul["status"] == "failed" and "name 'SCALE' is not defined" in mul["got"]
    assert mul["reason"].endswith(
        "(an earlier cell failed first: cell 3 (counting from 1), which starts `1 / 0`, raised "
        "ZeroDivisionError: division by zero, so `SCALE`, which it defines, is missing; fix that cell first)"
    )


@pytest.mark.slow
def test_copied_cells_and_an_edited_check_cell_are_named_in_the_problems(graded):
    report = graded["copies_and_an_edit"]
    assert report["score"] == 6  # the grader's checks, not the edited cell, graded both exercises
    source = nbformat.read(SOURCE, as_version=4)
    mul = _position(source, "ch03_mul") + 1  # counting from 1, as the problems do
    div_check = _position(source, "ch03_div_check") + 2  # below the copy of Mul's cell
    assert report["problems"] == [
        f"cell 'ch03_mul' appears 2 times, as cells {mul} and {mul + 1} counting from 1 (a copied cell?): "
        f"cell {mul + 1}, the copy just before the check cell, is graded and the others only run; keep "
        "your answer in that cell and delete the other copies",
        f"the check cell of ch03.mul, cell {mul + 2} (counting from 1), was edited: the grader ran the "
        'exercise\'s checks in its place, so the edit changed nothing; put back check("ch03.mul") as in '
        "the released notebook",
        f"cell 'ch03_div_check' appears 2 times, as cells {div_check} and {div_check + 1} counting from 1 "
        f"(a copied cell?): the grader checks ch03.div once, in place of cell {div_check}, and the other "
        "copies only run; delete them",
    ]


@pytest.mark.parametrize(
    "source, edited",
    [
        ('check("ch03.mul")', False),
        ("check('ch03.mul')  # my note\n", False),
        ('check("ch03.mul")\n### BEGIN HIDDEN TESTS\nassert Mul\n### END HIDDEN TESTS\n', False),
        ("print('passed')", True),
        ('check("ch03.div")', True),
        ('check("ch03.mul")\nMul = None', True),
        ('check("ch03.mul"', True),  # not Python
    ],
)
def test_an_edited_check_cell_is_told_from_a_reformatted_one(source, edited):
    assert is_edited_check(source, "ch03.mul") == edited
