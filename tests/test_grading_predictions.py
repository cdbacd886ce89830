"""Grading a prediction exercise (chapter 02's predict_grad, in a fresh kernel): a cell that stops at
the stub is "not solved yet", but one that raised something else or ran too long before defining its
answers is reported as what happened; and a scratch copy of the exercise cell after the check cell
only runs (the copy before the check cell is graded)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from varfunc.grading.grade import GradeOptions, grade_submission  # noqa: E402
from varfunc.grading.notebook import STUB, nbgrader_meta  # noqa: E402

pytestmark = pytest.mark.slow  # starts Jupyter kernels

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "02_variables_and_leaves.ipynb"
OPTIONS = GradeOptions(cell_timeout=4, notebook_timeout=120)


def _graded_prediction(tmp_path, source: str) -> dict:
    """The report entry of chapter 02's prediction exercise, its cell holding source, graded for real."""
    nb = nbformat.read(SOURCE, as_version=4)
    exercise = next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == "ch02_predict_grad")
    exercise.source = source
    path = tmp_path / SOURCE.name
    nbformat.write(nb, path)
    return next(e for e in grade_submission(path, OPTIONS)["exercises"] if e["id"] == "ch02.predict_grad")


@pytest.mark.parametrize(
    "cell, status, reason",
    [
        (STUB, "not_solved", "not solved yet: the exercise still raises NotImplementedError"),
        ("1 / 0\npredicted_a_grad = [3.5, 4.5]\n", "error", "your exercise cell raised ZeroDivisionError"),
        ("while True:\n    pass\n", "timeout", "your exercise cell ran past the time limit (4 s)"),
    ],
    ids=["stub", "raised", "endless"],
)
def test_a_prediction_cell_that_failed_is_reported_as_what_happened(tmp_path, cell, status, reason):
    entry = _graded_prediction(tmp_path, cell)
    assert (entry["status"], entry["points"]) == (status, 0)
    assert entry["reason"].startswith(reason), entry


def test_a_scratch_copy_after_the_check_cell_only_runs(tmp_path):
    # the copy just before the check cell is graded; once the last copy was, and the check "missing"
    nb = nbformat.read(SOURCE, as_version=4)
    check = next(
        i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == "ch02_predict_grad_check"
    )
    scratch = copy.deepcopy(
        next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == "ch02_predict_grad")
    )
    scratch.id, scratch.source = "scratch", "predicted_a_grad = [0.0, 0.0]\npredicted_b_grad = [0, 0]\n"
    nb.cells.insert(check + 1, scratch)
    path = tmp_path / SOURCE.name
    nbformat.write(nb, path)
    report = grade_submission(path, OPTIONS)
    entry = next(e for e in report["exercises"] if e["id"] == "ch02.predict_grad")
    assert entry["status"] == "passed", entry
    assert any("'ch02_predict_grad' appears 2 times" in p for p in report["problems"])
    assert not any("missing or moved" in p for p in report["problems"])


COMPUTED = """
a = Variable(np.array([1.0, 2.0]))
a.backward(np.array([3.0, 4.0]))
a.backward(np.array([0.5, 0.5]))
predicted_a_grad = a.grad.tolist()
predicted_b_grad = None
"""


def test_a_prediction_computed_in_its_cell_is_refused_in_the_grader(tmp_path):
    # the check reads the cell from the kernel's history (In): the values are right, but were run
    entry = _graded_prediction(tmp_path, COMPUTED)
    assert (entry["status"], entry["points"]) == ("failed", 0), entry
    assert "a prediction written by hand" in entry["reason"] and "uses `a`" in str(entry), entry
