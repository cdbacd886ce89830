"""Grade one submitted notebook: read it, match its cells, run it in a fresh kernel, collect verdicts.

A submission is never modified: it is copied into a temporary folder, which is the kernel's working
directory. Its cells run in order with a time limit per cell and per notebook. Every check cell
(matched by its nbgrader ``grade_id``) is replaced by the grader's own code (``hidden.runner_source``),
which imports the checks afresh and runs the visible and hidden checks of that exercise; its verdict
carries a nonce made at grading time, so a verdict the notebook displays itself does not count. An endless
loop is interrupted at the cell's time limit; a kernel that dies (``os._exit``, ``exit()``, a crash) or
stays stuck is restarted and the cells that ran before are replayed, so the other exercises are still
graded. ``plan.py`` makes the notebook that runs, ``reasons.py`` the entry of each exercise.
The result is a plain dict (the JSON report); ``grade_class`` in ``batch.py`` grades many at once.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import time
from pathlib import Path

from .core import REGISTRY, Exercise
from .execute import CellRun, execute, grading_workdir
from .names import is_late, submitted_name
from .notebook import cell_index, cell_name, notebook_chapter, read_notebook, source_of
from .options import REPORT_VERSION, GradeOptions
from .plan import Plan, hidden_regions, plan_grading
from .reasons import cell_errors, entry, exercise_result

__all__ = [  # what other modules and the tests import from here (some of it lives next door)
    "GradeOptions",
    "Plan",
    "cell_index",
    "chapter_exercises",
    "digest",
    "expected_chapter",
    "failed_report",
    "grade_submission",
    "hidden_regions",
    "plan_grading",
    "read_notebook",
]

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
    match = _CHAPTER_FILE.match(submitted_name(Path(path).name))  # Canvas: smithalice_1_2_03_x.ipynb
    return f"ch{match.group(1)}" if match else None


def digest(data: bytes) -> str:
    """The SHA-256 of a submission's bytes (reports keep it, so unchanged files are not graded twice)."""
    return hashlib.sha256(data).hexdigest()


# --- grading --------------------------------------------------------------------------------------


def new_report(path: Path, options: GradeOptions) -> dict:
    """An empty report for a submission: nothing graded yet."""
    return {
        "report_version": REPORT_VERSION,
        "submission": str(path),
        "late": is_late(path.name),  # Canvas's _late_ in the file name
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


def _not_graded(report: dict, status: str, problem: str, exercises: list[Exercise]) -> dict:
    report["status"] = status
    report["problems"].append(problem)
    report["exercises"] = [entry(ex, "not_graded", problem) for ex in exercises]
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
            memory_gib=options.memory_gib,
            max_output_mib=options.max_output_mib,
        )
    report["problems"] += _outputs_cut(plan, runs, options)
    secret = _secret_texts(plan, options)
    report["exercises"] = [_scrubbed(exercise_result(ex, plan, runs, options), secret) for ex in exercises]
    report["cell_errors"] = [_scrubbed(error, secret) for error in cell_errors(plan, runs)]
    report["score"] = sum(e["points"] for e in report["exercises"])
    report["max_score"] = sum(ex.points for ex in exercises)
    report["seconds"] = round(time.monotonic() - started, 2)
    return report


def _outputs_cut(plan: Plan, runs: list[CellRun], options: GradeOptions) -> list[str]:
    """The problem to report when the notebook's outputs passed --max-output (none when they did not)."""
    cut = [position for position, run in enumerate(runs) if run.cut]
    if not cut:
        return []
    first = plan.original[cut[0]]
    where = cell_name(first) if first is not None else "a check cell the grader added"
    return [
        f"the notebook's outputs passed the grader's limit of {options.max_output_mib:g} MiB (--max-output): "
        f"what {where} and the cells after it printed or showed past it was dropped (the checks' "
        "verdicts were kept, so the points are as the checks gave them); print less, e.g. not every "
        "step of a loop"
    ]


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
