"""Grade a class: many submissions, in parallel, with a progress bar, resuming where a run stopped.

Each submission's reports are written as soon as it is graded; a later run skips every submission
whose JSON report holds the same file hash and grader settings (``--force`` grades all again).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from .grade import GradeOptions, digest, failed_report, grade_submission
from .report import write_reports, write_summary

SUMMARY = "summary.csv"


def report_bases(paths: list[Path], report_dir: Path) -> dict[Path, tuple[Path, str]]:
    """{submission: (report path without suffix, student)}, the folders below a common root kept."""
    resolved = [Path(p).resolve() for p in paths]
    root = Path(os.path.commonpath([p.parent for p in resolved])) if resolved else Path()
    bases = {}
    for path, full in zip(paths, resolved):
        relative = full.relative_to(root)
        student = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        bases[Path(path)] = (report_dir / relative.with_suffix(""), student)
    return bases


def up_to_date(path: Path, base: Path, options: GradeOptions) -> dict | None:
    """The existing report of a submission if neither the file nor the grader settings changed."""
    try:
        report = json.loads(base.with_suffix(".json").read_text(encoding="utf-8"))
        if report.get("sha256") == digest(Path(path).read_bytes()) and report.get("grader") == (
            options.fingerprint()
        ):
            return report
    except (OSError, ValueError):
        pass
    return None


def grade_and_write(path: Path, base: Path, student: str, options: GradeOptions) -> dict:
    """Grade one submission and write its reports; an internal failure becomes an entry, not a crash."""
    try:
        report = grade_submission(path, options)
    except Exception as error:  # noqa: BLE001 - one submission never stops the class
        problem = f"the grader failed on this file: {type(error).__name__}: {error}"
        report = failed_report(path, options, "grader_error", problem)
    report["student"] = student
    write_reports(report, base)
    return report


def _progress(total: int, enabled: bool) -> object:
    """A tqdm bar if tqdm is installed (the lab extra), else one line per submission on stderr."""
    if not enabled or total == 0:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="grading", unit="notebook", file=sys.stderr)


def _graded(todo: list, options: GradeOptions, jobs: int) -> Iterator[dict]:
    if jobs <= 1:
        for path, (base, student) in todo:
            yield grade_and_write(path, base, student, options)
        return
    context = multiprocessing.get_context("spawn")  # no inherited sockets or threads in the workers
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(grade_and_write, p, b, s, options): (p, b, s) for p, (b, s) in todo}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as error:  # noqa: BLE001 - a worker that died
                path, base, student = futures[future]
                problem = f"the grading process failed: {type(error).__name__}: {error}"
                report = failed_report(path, options, "grader_error", problem)
                report["student"] = student
                write_reports(report, base)
                yield report


def grade_class(
    paths: list[Path],
    report_dir: Path,
    options: GradeOptions | None = None,
    *,
    jobs: int = 1,
    resume: bool = True,
    progress: bool = True,
) -> list[dict]:
    """Grade every submission (jobs at a time), write its reports and the class summary.csv."""
    options = options or GradeOptions()
    report_dir = Path(report_dir)
    bases = report_bases(list(paths), report_dir)
    reports, todo = [], []
    for path, (base, student) in bases.items():
        done = up_to_date(path, base, options) if resume else None
        if done is not None:
            reports.append({**done, "resumed": True})
        else:
            todo.append((path, (base, student)))
    bar = _progress(len(todo), progress)
    for report in _graded(todo, options, jobs):
        reports.append(report)
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"{report.get('student', '')}: {report['score']}/{report['max_score']}")
        elif progress:
            print(f"graded {report['submission']}: {report['score']}/{report['max_score']}", file=sys.stderr)
    if bar is not None:
        bar.close()
    write_summary(reports, report_dir / SUMMARY)
    return reports
