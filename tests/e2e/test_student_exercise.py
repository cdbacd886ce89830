"""A student's view of an exercise, in the released copy of chapter 02, typed through the page.

The student runs the exercise cell unsolved (the stub's friendly message shows) and its check (not
passed yet), types the answer into the cell, runs both again, and sees the passed verdict. Expected
verdicts come from varfunc.grading run on the same code in this process.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from varfunc.grading import evaluate
from varfunc.grading.notebook import STUB, nbgrader_meta, solution_source
from varfunc.lab import KERNEL_DISPLAY_NAME

from .labpage import (
    NOTEBOOKS,
    STUDENT_CHAPTER,
    STUDENT_DIR,
    cell,
    first_cell,
    kernel_name,
    open_notebook,
    output_text,
    replace_source,
    run_cell,
    screenshot,
)

pytestmark = pytest.mark.e2e

EXERCISE = "ch02.predict_grad"  # two short lines to type; its unsolved cell raises the stub's message


def _cells(nb: Any) -> tuple[int, int, int]:
    """(imports cell, the exercise's solution cell, its check cell) indices."""
    grade_id = EXERCISE.replace(".", "_")
    solution = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == grade_id)
    check = next(i for i, c in enumerate(nb.cells) if i > solution and f'check("{EXERCISE}")' in c.source)
    return first_cell(nb, r"from varfunc\.grading import check"), solution, check


def _verdict(imports: str, answer: str) -> str:
    """What check(EXERCISE) prints after running the imports and an answer cell in this process."""
    namespace: dict = {}
    exec(imports, namespace)
    try:
        exec(answer, namespace)
    except NotImplementedError:
        pass
    return str(evaluate(EXERCISE, namespace))


def _normal(text: str) -> str:
    return " ".join(text.split())


def test_student_solves_an_exercise(page: Any, lab: Any, artifacts: Path) -> None:
    import nbformat

    student = nbformat.read(lab.root / STUDENT_DIR / STUDENT_CHAPTER, as_version=4)
    instructor = nbformat.read(NOTEBOOKS / STUDENT_CHAPTER, as_version=4)
    imports, solution, check = _cells(student)
    stub = student.cells[solution].source
    answer = solution_source(instructor.cells[solution].source).strip()
    assert "NotImplementedError" in stub and answer not in stub, "the released copy should hold the stub"
    friendly = re.search(r'"([^"]+)"', STUB).group(1)

    open_notebook(page, lab, f"{STUDENT_DIR}/{STUDENT_CHAPTER}")
    assert kernel_name(page) == KERNEL_DISPLAY_NAME
    run_cell(page, imports)
    run_cell(page, solution)
    assert friendly in output_text(page, solution), "the unsolved cell should show the stub's message"
    run_cell(page, check)
    unsolved = output_text(page, check)
    assert _normal(unsolved) == _normal(_verdict(student.cells[imports].source, stub))
    assert "not passed" in unsolved
    screenshot(page, cell(page, solution - 1), artifacts / "student_unsolved.png")

    replace_source(page, solution, answer)
    assert _normal(cell(page, solution).locator(".cm-content").inner_text()) == _normal(answer)
    run_cell(page, solution)
    assert "Error" not in output_text(page, solution), output_text(page, solution)
    run_cell(page, check)
    solved = output_text(page, check)
    expected = _verdict(student.cells[imports].source, answer)
    assert expected.startswith("✔") and "passed" in expected
    assert _normal(solved) == _normal(expected), f"the check shows {solved!r}"
    screenshot(page, cell(page, solution - 1), artifacts / "student_solved.png")
