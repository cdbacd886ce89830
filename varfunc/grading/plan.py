"""The notebook the grader runs for a submission: each check cell replaced by the grader's runner
(added back after its exercise cell if it was deleted), and the problems with the notebook's exercise
cells that the report lists: unknown, missing, copied, and check cells the student edited.
"""

from __future__ import annotations

import ast
import copy
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core import Exercise
from .hidden import runner_source
from .notebook import cell_name, nbgrader_meta, source_of
from .options import GradeOptions
from .release import hidden_tests, remove_hidden_tests


def hidden_regions(source_dir: Path | None, chapter: str) -> dict[str, str]:
    """{check cell grade_id: hidden test code} from the instructor's notebook of the chapter."""
    if source_dir is None:
        return {}
    import nbformat

    regions = {}
    for path in sorted(Path(source_dir).glob(f"{chapter[2:]}_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = nbgrader_meta(cell).get("grade_id")
            if grade_id and hidden_tests(source_of(cell)).strip():
                regions[grade_id] = hidden_tests(source_of(cell))
    return regions


@dataclass
class Plan:
    """The notebook the grader runs, and where each exercise's cells and runner sit in it."""

    nb: Any
    original: list[int | None] = field(default_factory=list)  # position in the submission, per cell
    solution: dict[str, int] = field(default_factory=dict)
    runner: dict[str, int] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    nonce: dict[str, str] = field(default_factory=dict)  # per exercise: its verdict must carry it
    hidden: dict[str, str] = field(default_factory=dict)  # check cell grade_id -> its hidden tests


def plan_grading(
    nb: Any, found: dict, exercises: list[Exercise], options: GradeOptions, problems: list
) -> Plan:
    """Replace each check cell by the grader's runner (adding it back if it was deleted)."""
    import nbformat

    plan = Plan(nbformat.v4.new_notebook(metadata=copy.deepcopy(nb.get("metadata", {}))))
    plan.hidden = hidden = hidden_regions(options.source, exercises[0].id.split(".")[0])
    plan.nonce = {ex.id: secrets.token_hex(16) for ex in exercises}  # made now: not in the notebook

    def runner(exercise_id: str, check_id: str) -> str:
        source = hidden.get(check_id, "")
        return runner_source(exercise_id, source, options.hidden_files, plan.nonce[exercise_id])

    expected_ids = {ex.grade_id for ex in exercises} | {f"{ex.grade_id}_check" for ex in exercises}
    for grade_id in sorted(set(found) - expected_ids):
        problems.append(f"cell with an unknown grade_id {grade_id!r} (renamed?) was run but not graded")
    runners: dict[int, str] = {}  # submission position of a check cell -> exercise id
    silenced: set[int] = set()  # check cells of missing exercises
    after: dict[int, list[str]] = {}  # submission position of a solution cell -> runners to insert
    graded: dict[str, int] = {}  # exercise id -> submission position of the exercise cell graded
    for ex in exercises:
        solutions = [p for p in found.get(ex.grade_id, []) if nb["cells"][p]["cell_type"] == "code"]
        if not solutions:
            plan.missing[ex.id] = (
                f"the exercise cell (grade_id {ex.grade_id!r}) is missing: it was deleted, or its "
                "metadata was changed; copy it back from the released notebook"
            )
            problems.append(plan.missing[ex.id])
            silenced.update(found.get(f"{ex.grade_id}_check", []))
            continue
        # the first check cell after an exercise cell, with the copy of the exercise just before it
        # (a scratch copy placed after the check cell only runs)
        check = next((c for c in found.get(f"{ex.grade_id}_check", []) if c > solutions[0]), None)
        if check is not None:
            runners[check] = ex.id
            graded[ex.id] = max(p for p in solutions if p < check)
        else:
            after.setdefault(solutions[-1], []).append(ex.id)
            graded[ex.id] = solutions[-1]
            problems.append(f"the check cell of {ex.id} is missing or moved: graded right after its cell")
        problems += copies_and_edits(nb, found, ex, graded[ex.id], check)
    by_id = {ex.id: ex for ex in exercises}
    by_grade_id = {ex.grade_id: ex for ex in exercises}
    for position, cell in enumerate(nb["cells"]):
        cell = copy.deepcopy(cell)
        if position in silenced:
            cell["source"] = "# varfunc grader: not run, the exercise cell above is missing"
        if position in runners:
            ex = by_id[runners[position]]
            cell["cell_type"], cell["outputs"], cell["execution_count"] = "code", [], None
            cell["source"] = runner(ex.id, f"{ex.grade_id}_check")
            plan.runner[ex.id] = len(plan.nb.cells)
        solved = by_grade_id.get(nbgrader_meta(cell).get("grade_id", ""))
        if solved is not None and graded.get(solved.id) == position:
            plan.solution[solved.id] = len(plan.nb.cells)
        plan.nb.cells.append(cell)
        plan.original.append(position)
        for exercise_id in after.get(position, []):
            plan.runner[exercise_id] = len(plan.nb.cells)
            source = runner(exercise_id, f"{by_id[exercise_id].grade_id}_check")
            plan.nb.cells.append(nbformat.v4.new_code_cell(source))
            plan.original.append(None)
    return plan


def copies_and_edits(nb: Any, found: dict, ex: Exercise, graded: int, check: int | None) -> list[str]:
    """The problems with an exercise's cells: copies of its exercise or check cell, an edited check cell.

    graded: the position of the exercise cell graded; check: of the check cell the runner replaces.
    """
    problems = []
    copies = found.get(ex.grade_id, [])
    if len(copies) > 1:
        problems.append(
            f"cell {ex.grade_id!r} appears {len(copies)} times, as {_cells(copies)} (a copied cell?): "
            f"cell {graded + 1}, the copy just before the check cell, is graded and the others only run; "
            "keep your answer in that cell and delete the other copies"
        )
    checks = found.get(f"{ex.grade_id}_check", [])
    if len(checks) > 1:
        where = f"in place of cell {check + 1}" if check is not None else "right after the exercise cell"
        problems.append(
            f"cell {ex.grade_id + '_check'!r} appears {len(checks)} times, as {_cells(checks)} (a copied "
            f"cell?): the grader checks {ex.id} once, {where}, and the other copies only run; delete them"
        )
    if check is not None and is_edited_check(source_of(nb["cells"][check]), ex.id):
        problems.append(
            f"the check cell of {ex.id}, {cell_name(check)}, was edited: the grader ran the exercise's "
            f'checks in its place, so the edit changed nothing; put back check("{ex.id}") as in the '
            "released notebook"
        )
    return problems


def is_edited_check(source: str, exercise_id: str) -> bool:
    """True unless the check cell's code (comments, layout and hidden tests aside) is check(exercise_id)."""
    try:
        code = ast.dump(ast.parse(remove_hidden_tests(source)))
    except SyntaxError:
        return True
    return code != ast.dump(ast.parse(f"check({exercise_id!r})"))


def _cells(positions: list[int]) -> str:
    """``cells 35, 36 and 40 counting from 1``."""
    numbers = [str(position + 1) for position in positions]
    return f"cells {', '.join(numbers[:-1])} and {numbers[-1]} counting from 1"
