"""Why an exercise got its points: its entry in the report, from how its cells ran, and the cells of
the submission that failed.

An exercise whose code used a name that an earlier failed cell would have defined (a NameError)
also names that cell, so the student fixes the cause first; an earlier failure that did not stop it
(a scratch cell that raised) is not blamed for a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any

from .bindings import may_define
from .core import NOT_SOLVED, Exercise, is_stub_message
from .execute import EXIT_CALL, CellRun, verdict_of
from .notebook import cell_name, nbgrader_meta, source_of
from .options import GradeOptions
from .plan import Plan

FAILED = ("error", "timeout", "died")  # how a cell that did not run to its end ended
_UNDEFINED = re.compile(r"name '(\w+)' is not defined")


def entry(ex: Exercise, status: str, reason: str, **details: Any) -> dict:
    """An exercise's entry in the report: points (all when it passed), status, reason and details."""
    points = ex.points if status == "passed" else 0
    result = {"id": ex.id, "title": ex.title, "points": points, "max_points": ex.points, "status": status}
    return {**result, "reason": reason, **{k: v for k, v in details.items() if v not in (None, "")}}


def exercise_result(ex: Exercise, plan: Plan, runs: list[CellRun], options: GradeOptions) -> dict:
    """One exercise's entry; a failure for a name that an earlier failed cell defines names that cell."""
    result = checked(ex, plan, runs, options)
    missing = _undefined_name(result) if result["status"] in ("failed", "error") else None
    earlier = _earlier_failure(ex, plan, runs, missing) if missing else ""
    if earlier:
        result["reason"] += f" (an earlier cell failed first: {earlier})"
    return result


def checked(ex: Exercise, plan: Plan, runs: list[CellRun], options: GradeOptions) -> dict:
    """One exercise's entry in the report: points, status and the reason, from its runner's verdict."""
    if ex.id in plan.missing:
        return entry(ex, "missing", plan.missing[ex.id])
    run, solution = runs[plan.runner[ex.id]], runs[plan.solution[ex.id]]
    limit = f"{options.cell_timeout:g} s"
    if run.status == "timeout":
        return entry(ex, "timeout", f"the checks ran past the time limit ({limit}): an endless loop?")
    if run.status == "died" and run.ename == EXIT_CALL:
        why = "your code called exit() or quit() while the checks ran it, which shuts the kernel down"
        return entry(ex, "crashed", f"{why}: remove the call")
    if run.status == "died":
        return entry(ex, "crashed", "the kernel died during the checks (os._exit, or a crash)")
    if run.status == "not_run":
        why = "the notebook ran past its time limit" if solution.status != "died" else "the kernel kept dying"
        return entry(ex, "not_run", f"not checked: {why} before this exercise")
    verdict = verdict_of(run, ex.id, plan.nonce[ex.id])
    if verdict is None:
        return entry(ex, "error", f"the checks could not run ({error_text(run)})")
    if verdict.get("not_checked"):  # the guard found replaced library code (guard.py): never a pass
        return entry(ex, "not_checked", verdict["case"], hint=verdict.get("hint"))
    if verdict["passed"]:
        return entry(ex, "passed", "all checks passed")
    details = {k: verdict.get(k) for k in ("case", "expected", "got", "hint")}
    if solution.status in FAILED and " not defined" in str(details["case"]):
        details["hint"] = None  # "run the exercise cell above first": it ran, and stopped before that
    if verdict["case"] == NOT_SOLVED and (solution.status == "ok" or _is_the_stub(solution)):
        return entry(ex, "not_solved", "not solved yet: the exercise still raises NotImplementedError")
    if solution.status == "timeout":
        return entry(ex, "timeout", f"your exercise cell ran past the time limit ({limit})", **details)
    if solution.status == "died" and solution.ename == EXIT_CALL:
        return entry(ex, "crashed", EXITED)
    if solution.status == "died":
        return entry(ex, "crashed", "the kernel died while running your exercise cell (os._exit? a crash?)")
    if solution.status == "error":
        return entry(ex, "error", f"your exercise cell raised {error_text(solution)}", **details)
    # A check in which the answer raised failed it (the reason says so): a wrong answer, not a zero to
    # look at; "error" is kept for a cell that could not run
    return entry(ex, "failed", verdict["case"], **details)


EXITED = (
    "your exercise cell called exit() or quit(), which shuts the kernel down (in Jupyter too), so "
    "nothing the cell defined was left to check: remove the call and run the notebook again"
)


def _is_the_stub(run: CellRun) -> bool:
    """True when the exercise cell stopped at the stub: its names were never defined, as a prediction
    check finds (a cell that raised anything else, or timed out, is reported as such)."""
    return run.status == "error" and run.ename == "NotImplementedError" and is_stub_message(run.evalue)


def _undefined_name(result: dict) -> str | None:
    """The name a NameError in the entry's reason or details says is not defined, if any."""
    texts = [str(result.get(key, "")) for key in ("reason", "case", "got")]
    found = next((match for text in texts if (match := _UNDEFINED.search(text))), None)
    return found.group(1) if found else None


def _earlier_failure(ex: Exercise, plan: Plan, runs: list[CellRun], name: str) -> str:
    """The first cell before the exercise's cell, not itself an exercise or a check, that failed
    and defines name (or may: it cannot be read as Python)."""
    graded = set(plan.solution.values()) | set(plan.runner.values())
    for position in range(plan.solution.get(ex.id, 0)):
        run, source = runs[position], source_of(plan.nb.cells[position])
        if run.status in FAILED and position not in graded and may_define(source, name):
            first_line = source.strip().splitlines()[0][:40]
            where = cell_name(plan.original[position])
            return (
                f"{where}, which starts `{first_line}`, {_what_went_wrong(run)}, so `{name}`, which it "
                "defines, is missing; fix that cell first"
            )
    return ""


def _what_went_wrong(run: CellRun) -> str:
    if run.status == "error":
        return f"raised {error_text(run)}"
    if run.ename == EXIT_CALL:
        return "called exit(), which shut the kernel down"
    return "ran past its time limit" if run.status == "timeout" else "killed the kernel"


def cell_errors(plan: Plan, runs: list[CellRun]) -> list[dict]:
    """The cells of the submission that raised, timed out or killed the kernel (runners left out)."""
    runner_cells = set(plan.runner.values())
    errors = []
    for position, run in enumerate(runs):
        if run.status in FAILED and position not in runner_cells:
            grade_id = nbgrader_meta(plan.nb.cells[position]).get("grade_id")
            error = error_text(run)
            errors.append(
                {"cell": plan.original[position], "grade_id": grade_id, "status": run.status, "error": error}
            )
    return errors


def error_text(run: CellRun) -> str:
    """``ename: evalue`` of a cell's run (the ename alone when there is no value)."""
    return f"{run.ename}: {run.evalue}" if run.evalue else run.ename
