"""Every exercise of every chapter: the solution passes, the stub fails, plausible wrong answers fail,
and other right answers (written another way than the stored solution) pass.

The notebooks are the source: this file runs a chapter's code cells in order (check cells skipped),
stopping at each exercise cell to try the stored solution, nbgrader's stub and the answers listed in
``tests/exercises/chNN.py`` (``WRONG_ANSWERS`` and ``RIGHT_ANSWERS``: {exercise id: [(label, source), ...]}).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")

from exercises.ch07 import STABLE, _softplus  # noqa: E402

from varfunc.grading import evaluate, lookup  # noqa: E402
from varfunc.grading.notebook import (  # noqa: E402
    check_cells,
    nbgrader_meta,
    solution_cells,
    solution_source,
    source_of,
    stub_source,
)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CHECK_CALL = re.compile(r"""check\(\s*["']([\w.]+)["']""")


def chapter_of(path: Path) -> str:
    return f"ch{path.name[:2]}"


def exercise_ids(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [m for cell in check_cells(nb).values() for m in CHECK_CALL.findall(source_of(cell))]


CASES = [(path, ex) for path in CHAPTERS for ex in exercise_ids(path)]


def answers(exercise_id: str, kind: str = "WRONG_ANSWERS") -> list:
    """The (label, source) pairs tests/exercises/chNN.py lists for an exercise under kind."""
    module = importlib.import_module(f"exercises.{exercise_id.split('.')[0]}")
    return getattr(module, kind, {}).get(exercise_id, [])


def wrong_answers(exercise_id: str) -> list:
    return answers(exercise_id, "WRONG_ANSWERS")


RIGHT_CASES = [
    (path, ex, label, source) for path, ex in CASES for label, source in answers(ex, "RIGHT_ANSWERS")
]


@cache
def states(path: Path) -> dict:
    """{grade_id: (namespace just before the exercise cell, its source)}, from one pass over the chapter."""
    nb = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": "__main__"}
    found = {}
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or nbgrader_meta(cell).get("grade"):
                continue  # check cells run in the tests themselves
            source = source_of(cell)
            meta = nbgrader_meta(cell)
            if meta.get("solution"):
                found[meta["grade_id"]] = (dict(namespace), source)
                source = solution_source(source)
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"{path.name}[{index}]", "exec"), namespace)
    finally:
        os.chdir(cwd)
    return found


def verdict_for(path: Path, exercise_id: str, source: str):
    before, _ = states(path)[lookup(exercise_id).grade_id]
    namespace = dict(before, In=["", source])  # IPython's history: prediction checks read their cell
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(source, exercise_id, "exec"), namespace)
            except NotImplementedError:
                pass  # a stub that raises at definition time: evaluate reports it as not solved
            return evaluate(exercise_id, namespace)
    finally:
        os.chdir(cwd)


def verdict(exercise_id: str, source: str):
    """verdict_for in the chapter that holds exercise_id."""
    path = next(p for p, ex in CASES if ex == exercise_id)
    return verdict_for(path, exercise_id, source)


@pytest.mark.parametrize("path, exercise_id", CASES, ids=[c[1] for c in CASES])
def test_the_solution_passes(path, exercise_id):
    _, source = states(path)[lookup(exercise_id).grade_id]
    verdict = verdict_for(path, exercise_id, solution_source(source))
    assert verdict.passed, str(verdict)


@pytest.mark.parametrize("path, exercise_id", CASES, ids=[c[1] for c in CASES])
def test_the_stub_fails(path, exercise_id):
    _, source = states(path)[lookup(exercise_id).grade_id]
    verdict = verdict_for(path, exercise_id, stub_source(source))
    assert not verdict.passed and verdict.case == "not solved yet", str(verdict)


@pytest.mark.parametrize("path, exercise_id", CASES, ids=[c[1] for c in CASES])
def test_plausible_wrong_answers_fail(path, exercise_id):
    answers = wrong_answers(exercise_id)
    assert len(answers) >= 2, f"{exercise_id} needs at least two wrong answers in tests/exercises"
    for label, source in answers:
        verdict = verdict_for(path, exercise_id, source)
        assert not verdict.passed, f"wrong answer {label!r} passed {exercise_id}"
        assert verdict.hint, f"wrong answer {label!r}: a verdict with no hint\n{verdict}"


@pytest.mark.parametrize(
    "path, exercise_id, label, source", RIGHT_CASES, ids=[f"{c[1]}: {c[2]}" for c in RIGHT_CASES]
)
def test_other_right_answers_pass(path, exercise_id, label, source):
    verdict = verdict_for(path, exercise_id, source)
    assert verdict.passed, f"right answer {label!r} failed:\n{verdict}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_exercise_cells_carry_nbgrader_metadata(path):
    nb = nbformat.read(path, as_version=4)
    solutions, checks = solution_cells(nb), check_cells(nb)
    assert len(solutions) == len(checks)
    if int(path.name[:2]) >= 2:
        assert 2 <= len(checks) <= 4, f"{path.name} has {len(checks)} exercises"
    for exercise_id in exercise_ids(path):
        ex = lookup(exercise_id)
        assert exercise_id.startswith(chapter_of(path) + ".")
        assert ex.grade_id in solutions, f"no solution cell with grade_id {ex.grade_id}"
        check_cell = checks[f"{ex.grade_id}_check"]
        meta = nbgrader_meta(check_cell)
        assert meta["points"] == ex.points and meta["locked"] and meta["schema_version"] == 3
        assert nbgrader_meta(solutions[ex.grade_id])["schema_version"] == 3
        cells = nb.cells
        position = cells.index(solutions[ex.grade_id])
        assert cells[position + 1] is check_cell, f"{exercise_id}: the check cell must follow the exercise"


@pytest.mark.parametrize(
    "sigmoid, shown",
    [
        ("np.exp(a) / (1 + np.exp(a))", "worst at a = 1000: expected 2, got nan"),
        ("np.where(a < -10, 0, 1 / (1 + np.exp(-a)))", "worst at a = -30: expected 1.87152459377e-13, got 0"),
    ],
)
def test_a_softplus_gradient_verdict_names_the_worst_point_with_its_digits(sigmoid, shown):
    path = next(p for p, ex in CASES if ex == "ch07.softplus")
    verdict = verdict_for(path, "ch07.softplus", _softplus(STABLE, f"grad_output * {sigmoid}"))
    assert not verdict.passed and shown in verdict.case, str(verdict)


def test_the_broadcast_check_gives_the_package_its_sum_to_shape_back():
    """ch05.broadcast switches the package's sum_to_shape off while it runs, and on again after."""
    from exercises.ch05 import SUM_WRAPS_THE_KITS

    from varfunc.functions import basic_ops, utils

    kit, code = utils.sum_to_shape, utils.sum_to_shape.__code__
    path = next(p for p, ex in CASES if ex == "ch05.broadcast")
    before, _ = states(path)["ch05_broadcast"]
    namespace = dict(before)
    exec(compile(SUM_WRAPS_THE_KITS, "wrapper", "exec"), namespace)
    verdict = evaluate("ch05.broadcast", namespace)
    assert not verdict.passed and "sum_to_shape" in verdict.case, str(verdict)
    assert verdict.got == "my_sum_to_shape calls the kit's varfunc.functions.utils.sum_to_shape", str(verdict)
    assert utils.sum_to_shape is kit and basic_ops.sum_to_shape is kit and namespace["sum_to_shape"] is kit
    assert kit.__code__ is code  # its own code back: the kit's ops work again
    np.testing.assert_array_equal(kit(np.ones((2, 3)), (3,)), [2.0, 2.0, 2.0])


def test_a_predicted_order_written_as_one_string_is_named_as_such():
    path = next(p for p, ex in CASES if ex == "ch04.dependencies")
    answer = """
predicted_counts = {"x": [2], "y": [1], "Mul#2": [2], "Add#3": [1], "Mul#4": [1], "Sum#5": [0]}
predicted_order = "Sum#5, Mul#4, Add#3, Mul#2, y, x"
"""
    verdict = verdict_for(path, "ch04.dependencies", answer)
    assert not verdict.passed, str(verdict)
    assert verdict.expected == "a list of names" and verdict.got == "a str", str(verdict)


@pytest.mark.parametrize(
    "label, neighbour",
    [
        ("decides dim i from grad.shape[i - 1]", True),  # the last dim left unsummed: what the hint says
        ("a shape of 1s only summed into a 0-d array (the kept dims dropped)", False),
    ],
)
def test_the_neighbour_dim_hint_is_shown_only_for_the_result_of_that_mistake(label, neighbour):
    from varfunc.grading.ch05 import _NEIGHBOUR_DIM

    path = next(p for p, ex in CASES if ex == "ch05.broadcast")
    source = dict(wrong_answers("ch05.broadcast"))[label]
    verdict = verdict_for(path, "ch05.broadcast", source)
    assert not verdict.passed and "(2, 1, 1, 4), (1, 1, 1)" in verdict.case, str(verdict)
    assert (verdict.hint == _NEIGHBOUR_DIM) is neighbour, str(verdict)
