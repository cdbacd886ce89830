"""Grade one submitted notebook: read it, match its cells, run it in a fresh kernel, collect verdicts.

A submission is never modified: it is copied into a temporary folder, which is the kernel's working
directory. Its cells run in order with a time limit per cell and per notebook. Every check cell
(matched by its nbgrader ``grade_id``) is replaced by the grader's own code (``hidden.runner_source``),
which imports the checks afresh and runs the visible and hidden checks of that exercise; its verdict
carries a nonce made at grading time, so a verdict the notebook displays itself does not count. An endless
loop is interrupted at the cell's time limit; a kernel that dies (``os._exit``, a crash) or stays
stuck is restarted and the cells that ran before are replayed, so the other exercises are still graded.
The result is a plain dict (the JSON report); ``grade_class`` in ``batch.py`` grades many at once.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core import NOT_SOLVED, REGISTRY, Exercise, is_stub_message
from .execute import CellRun, execute, grading_workdir, verdict_of
from .hidden import runner_source
from .notebook import cell_index, cell_name, nbgrader_meta, notebook_chapter, read_notebook, source_of
from .options import REPORT_VERSION, GradeOptions
from .release import hidden_tests

_CHAPTER_FILE = re.compile(r"^(\d\d)_")


# --- reading the submission -----------------------------------------------------------------------


def chapter_exercises(chapter: str) -> list[Exercise]:
    """The exercises of a chapter (``ch03``), in the order the chapter's check module defines them."""
    try:
        importlib.import_module(f"{__package__}.{chapter}")
    except ModuleNotFoundError:
        return []
    return [ex for ex_id, ex in REGISTRY.items() if ex_id.startswith(chapter + ".")]


def expected_chapter(path: Path, options: GradeOptions) -> str | None:
    """The chapter a submission should be: --chapter, else the file name's two leading digits."""
    if options.chapter:
        return options.chapter
    match = _CHAPTER_FILE.match(Path(path).name)
    return f"ch{match.group(1)}" if match else None


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


def digest(data: bytes) -> str:
    """The SHA-256 of a submission's bytes (reports keep it, so unchanged files are not graded twice)."""
    return hashlib.sha256(data).hexdigest()


# --- grading --------------------------------------------------------------------------------------


def new_report(path: Path, options: GradeOptions) -> dict:
    """An empty report for a submission: nothing graded yet."""
    return {
        "report_version": REPORT_VERSION,
        "submission": str(path),
        "sha256": None,
        "grader": options.fingerprint(),
        "chapter": None,
        "status": "graded",
        "problems": [],
        "score": 0,
        "max_score": 0,
        "exercises": [],
        "cell_errors": [],
        "seconds": 0.0,
    }


def _entry(ex: Exercise, status: str, reason: str, **details: Any) -> dict:
    points = ex.points if status == "passed" else 0
    entry = {"id": ex.id, "title": ex.title, "points": points, "max_points": ex.points, "status": status}
    return {**entry, "reason": reason, **{k: v for k, v in details.items() if v not in (None, "")}}


def _not_graded(report: dict, status: str, problem: str, exercises: list[Exercise]) -> dict:
    report["status"] = status
    report["problems"].append(problem)
    report["exercises"] = [_entry(ex, "not_graded", problem) for ex in exercises]
    report["max_score"] = sum(ex.points for ex in exercises)
    return report


def failed_report(path: Path, options: GradeOptions, status: str, problem: str) -> dict:
    """The report of a submission the grader could not grade: every expected exercise not graded."""
    expected = expected_chapter(Path(path), options)
    exercises = chapter_exercises(expected) if expected else []
    report = {**new_report(Path(path), options), "chapter": expected}
    return _not_graded(report, status, problem, exercises)


def grade_submission(path: Path, options: GradeOptions | None = None) -> dict:
    """Grade one submitted notebook and return its report (a JSON-ready dict); never raises for the file."""
    options = options or GradeOptions()
    path = Path(path)
    started = time.monotonic()
    report = new_report(path, options)
    expected = expected_chapter(path, options)
    report["chapter"] = expected  # the file name's, until the notebook says otherwise
    expected_exercises = chapter_exercises(expected) if expected else []
    try:
        data = path.read_bytes()
    except OSError as error:
        return _not_graded(report, "missing", f"the file cannot be read: {error}", expected_exercises)
    report["sha256"] = digest(data)
    nb, why = read_notebook(data)
    if nb is None:
        return _not_graded(report, "unreadable", why, expected_exercises)
    found, problems = cell_index(nb)
    report["problems"] += problems
    chapter = notebook_chapter(list(found))
    report["chapter"] = expected or chapter
    if expected and chapter and chapter != expected:
        problem = f"this is the notebook of {chapter}, not of {expected}: was the wrong file submitted?"
        return _not_graded(report, "wrong_chapter", problem, expected_exercises)
    exercises = chapter_exercises(expected or chapter or "")
    if not exercises:
        problem = "no exercise cells found (no nbgrader grade_id): is this a chapter notebook?"
        return _not_graded(report, "no_exercises", problem, [])
    plan = plan_grading(nb, found, exercises, options, report["problems"])
    with grading_workdir() as workdir:
        (Path(workdir) / path.name).write_bytes(data)  # the kernel's copy; the submission is not touched
        runs = execute(
            plan.nb,
            Path(workdir),
            cell_timeout=options.cell_timeout,
            notebook_timeout=options.notebook_timeout,
            kernel_name=options.kernel_name,
        )
    secret = _secret_texts(plan, options)
    report["exercises"] = [_scrubbed(_exercise_result(ex, plan, runs, options), secret) for ex in exercises]
    report["cell_errors"] = [_scrubbed(error, secret) for error in _cell_errors(plan, runs)]
    report["score"] = sum(e["points"] for e in report["exercises"])
    report["max_score"] = sum(ex.points for ex in exercises)
    report["seconds"] = round(time.monotonic() - started, 2)
    return report


def _secret_texts(plan: Plan, options: GradeOptions) -> list[str]:
    """What a report must never show, longest first: the runners' code (with the hidden tests, the
    --hidden paths and the nonces in it), the hidden tests whole, quoted and line by line, the
    --hidden paths, the nonces."""
    runners = [source_of(plan.nb.cells[position]) for position in plan.runner.values()]
    hidden = [text for text in plan.hidden.values() if text]
    lines = [line.strip() for text in hidden for line in text.splitlines()]
    texts = runners + hidden + [repr(text) for text in hidden] + lines
    texts += [str(path) for path in options.hidden_files] + list(plan.nonce.values())
    return sorted({text for text in texts if len(text) >= 8}, key=len, reverse=True)


def _scrubbed(entry: dict, secret: list[str]) -> dict:
    """entry with each secret text in its strings replaced by [hidden]."""
    clean = {}
    for key, value in entry.items():
        if isinstance(value, str):
            for text in secret:
                value = value.replace(text, "[hidden]")
        clean[key] = value
    return clean


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


def _exercise_result(ex: Exercise, plan: Plan, runs: list[CellRun], options: GradeOptions) -> dict:
    """One exercise's entry in the report; a failure also names an earlier cell that failed first."""
    entry = _checked(ex, plan, runs, options)
    earlier = _earlier_failure(ex, plan, runs)
    if earlier and entry["status"] in ("failed", "error"):
        why = f"an earlier cell failed first: {earlier}; fix it first, as the names it defines may be missing"
        entry["reason"] += f" ({why})"
    return entry


def _checked(ex: Exercise, plan: Plan, runs: list[CellRun], options: GradeOptions) -> dict:
    """One exercise's entry in the report: points, status and the reason, from its runner's verdict."""
    if ex.id in plan.missing:
        return _entry(ex, "missing", plan.missing[ex.id])
    run, solution = runs[plan.runner[ex.id]], runs[plan.solution[ex.id]]
    limit = f"{options.cell_timeout:g} s"
    if run.status == "timeout":
        return _entry(ex, "timeout", f"the checks ran past the time limit ({limit}): an endless loop?")
    if run.status == "died":
        return _entry(ex, "crashed", "the kernel died during the checks (os._exit, or a crash)")
    if run.status == "not_run":
        why = "the notebook ran past its time limit" if solution.status != "died" else "the kernel kept dying"
        return _entry(ex, "not_run", f"not checked: {why} before this exercise")
    verdict = verdict_of(run, ex.id, plan.nonce[ex.id])
    if verdict is None:
        return _entry(ex, "error", f"the checks could not run ({_error_text(run)})")
    if verdict.get("not_checked"):  # the guard found replaced library code (guard.py): never a pass
        return _entry(ex, "not_checked", verdict["case"], hint=verdict.get("hint"))
    if verdict["passed"]:
        return _entry(ex, "passed", "all checks passed")
    details = {k: verdict.get(k) for k in ("case", "expected", "got", "hint")}
    if verdict["case"] == NOT_SOLVED and (solution.status == "ok" or _is_the_stub(solution)):
        return _entry(ex, "not_solved", "not solved yet: the exercise still raises NotImplementedError")
    if solution.status == "timeout":
        return _entry(ex, "timeout", f"your exercise cell ran past the time limit ({limit})", **details)
    if solution.status == "died":
        return _entry(ex, "crashed", "the kernel died while running your exercise cell (os._exit? a crash?)")
    if solution.status == "error":
        return _entry(ex, "error", f"your exercise cell raised {_error_text(solution)}", **details)
    # A check in which the answer raised failed it (the reason says so): a wrong answer, not a zero to
    # look at; "error" is kept for a cell that could not run
    return _entry(ex, "failed", verdict["case"], **details)


def _is_the_stub(run: CellRun) -> bool:
    """True when the exercise cell stopped at the stub: its names were never defined, as a prediction
    check finds (a cell that raised anything else, or timed out, is reported as such)."""
    return run.status == "error" and run.ename == "NotImplementedError" and is_stub_message(run.evalue)


def _earlier_failure(ex: Exercise, plan: Plan, runs: list[CellRun]) -> str:
    """The first cell before the exercise's cell, not itself an exercise or a check, that failed."""
    graded = set(plan.solution.values()) | set(plan.runner.values())
    for position in range(plan.solution.get(ex.id, 0)):
        run = runs[position]
        if run.status in ("error", "timeout", "died") and position not in graded:
            first_line = source_of(plan.nb.cells[position]).strip().splitlines()[0][:40]
            where = cell_name(plan.original[position])
            return f"{where}, which starts `{first_line}`, {_what_went_wrong(run)}"
    return ""


def _what_went_wrong(run: CellRun) -> str:
    if run.status == "error":
        return f"raised {_error_text(run)}"
    return "ran past its time limit" if run.status == "timeout" else "killed the kernel"


def _cell_errors(plan: Plan, runs: list[CellRun]) -> list[dict]:
    """The cells of the submission that raised, timed out or killed the kernel (runners left out)."""
    runner_cells = set(plan.runner.values())
    errors = []
    for position, run in enumerate(runs):
        if run.status in ("error", "timeout", "died") and position not in runner_cells:
            grade_id = nbgrader_meta(plan.nb.cells[position]).get("grade_id")
            error = _error_text(run)
            errors.append(
                {"cell": plan.original[position], "grade_id": grade_id, "status": run.status, "error": error}
            )
    return errors


def _error_text(run: CellRun) -> str:
    return f"{run.ename}: {run.evalue}" if run.evalue else run.ename
