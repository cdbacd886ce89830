"""Grade a class: many submissions, in parallel, with a progress bar, resuming where a run stopped.

Each submission is graded in a process of its own, so a submission that kills its kernel's parent
costs only its own grade (reported as a grader error, and tried again by the next run).

Each submission's reports are written as soon as it is graded; a later run skips every submission
whose JSON report holds the same file hash and grader settings (``--force`` grades all again), and
the class summary lists every report in the folder. A run stopped half-way (Ctrl-C, SIGTERM) leaves
no process, kernel or scratch folder behind (``stopping.py``).
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import closing
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from pathlib import Path

from .grade import digest, failed_report, grade_submission
from .lock import grading_into
from .names import report_name, shortened, student_of
from .options import GradeOptions, changed_files, kit_digests
from .report import remove_orphaned_views, report_file, saved_reports, write_reports, write_summary
from .roots import run_layout, settle_root
from .stopping import obey_the_parent, stop_on_sigterm, stop_processes

SUMMARY = "summary.csv"


def distinct(paths: list[Path]) -> list[Path]:
    """Each file once, as first given (``sub/a.ipynb`` and ``$PWD/sub/a.ipynb`` are one file)."""
    first = {}
    for path in map(Path, paths):
        first.setdefault(path.resolve(), path)
    return list(first.values())


def report_bases(
    paths: list[Path], report_dir: Path, root: Path | None = None, assignments: bool = False
) -> dict[Path, tuple[Path, str]]:
    """{submission: (report path without suffix, student)}, the folders below the root kept.

    root: the submissions' root (``roots.py``; default: this run's files' own), assignments: whether
    the first folders below it are assignments' (``canvas/hw3/``), not students'. The student comes
    from the folders below the root and the file's name (``names.py`` has the rules):
    ``section1/alice`` for ``section1/alice/03_x.ipynb``, ``Alice Smith`` for Moodle's
    ``Alice Smith_123456_assignsubmission_file_/03_x.ipynb``, ``smithalice`` for Canvas's
    ``smithalice_123456_7891011_03_x.ipynb``, ``alice`` for ``alice.ipynb`` or for ``alice/03_x.ipynb``
    graded alone (reported as ``alice/03_x``, as in a class run). The report path is the file's
    without its final ``.ipynb`` (``hw3.final.ipynb`` -> ``hw3.final``; ``report_file`` adds ``.json``).
    """
    if root is None:
        root, assignments = run_layout(paths)
    bases = {}
    for path in paths:
        relative = Path(path).resolve().relative_to(root)
        base = report_dir / relative.parent / report_name(relative.name)
        bases[Path(path)] = (base, student_of(relative, assignments))
    return bases


def up_to_date(path: Path, base: Path, options: GradeOptions) -> dict | None:
    """The existing report of a submission if neither the file nor the grader settings changed."""
    report = _report_of_this_file(path, base)
    if report is None or report.get("kit_changed"):  # graded while the kit's files changed: again
        return None
    return report if report.get("grader") == options.fingerprint() else None


def graded_as_its_own_chapter(path: Path, base: Path, options: GradeOptions) -> dict | None:
    """The existing report of this very file, graded as the notebook of another chapter than
    --chapter: a run for ch03 over a folder of every chapter's files must not turn its graded ch05
    reports into wrong_chapter ones (it would, even with --force)."""
    if options.chapter is None:
        return None
    report = _report_of_this_file(path, base)
    if report is None or report.get("status") != "graded" or report.get("chapter") == options.chapter:
        return None
    return report


def _report_of_this_file(path: Path, base: Path) -> dict | None:
    """The JSON report at base if it was written for the file as it is now (its SHA-256)."""
    try:
        report = json.loads(report_file(base, ".json").read_text(encoding="utf-8"))
        return report if report.get("sha256") == digest(Path(path).read_bytes()) else None
    except (OSError, ValueError, AttributeError):  # AttributeError: JSON that is not an object
        return None


def grade_and_write(
    path: Path,
    base: Path,
    student: str,
    options: GradeOptions,
    fingerprint: str | None = None,
    scratch: str | None = None,
) -> dict:
    """Grade one submission and write its reports; an internal failure becomes an entry, not a crash.

    scratch: a folder for this process's temporary files (the kernel's working folder), which the
    parent removes even if a submission kills this process before it could.
    """
    if scratch is not None:  # a grading process of grade_class
        obey_the_parent(scratch)  # Ctrl-C is the parent's; SIGTERM ends the kernel too
        tempfile.tempdir = scratch  # this process grades one submission only
    kit_before = kit_digests()
    try:
        report = grade_submission(path, options)
    except Exception as error:  # noqa: BLE001 - one submission never stops the class
        problem = f"the grader failed on this file: {type(error).__name__}: {error}"
        report = failed_report(path, options, "grader_error", problem)
    changed = changed_files(kit_before, kit_digests())
    if changed:  # the kit is installed editable, and the kernel runs the student's code as you
        report["kit_changed"] = changed
        report["problems"].append(
            f"the kit's files changed while this file was graded ({shortened(changed)}): its code, or "
            "that of a file graded at the same time, wrote to them; restore them (git checkout, or "
            "reinstall the kit), and the next run grades this file again"
        )
    report["student"] = student
    if fingerprint is not None:
        report["grader"] = fingerprint
    write_reports(report, base)
    return report


def _report_of(process: BaseProcess, path: Path, base: Path, student: str, options: GradeOptions) -> dict:
    """The report the child wrote, or a grader_error one if it died before writing it."""
    written = report_file(base, ".json")
    if process.exitcode == 0 and written.exists():
        return json.loads(written.read_text(encoding="utf-8"))
    problem = (
        f"the grading process died (exit code {process.exitcode}) while grading this file: "
        "a submission that kills its kernel's parent? The other submissions are graded as usual"
    )
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


def _context() -> multiprocessing.context.BaseContext:
    """Where the graders' processes come from: a fork server with the grader imported once (a
    spawned process per submission spent about a second importing it), or spawn where there is none.
    Neither inherits the parent's threads or sockets."""
    if "forkserver" not in multiprocessing.get_all_start_methods():  # Windows
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # _forkserver first: the server ignores Ctrl-C while it imports the rest (seconds), which the
    # parent handles; without it a Ctrl-C then printed the server's traceback after grade's own line
    context.set_forkserver_preload(
        ["varfunc.grading._forkserver", "varfunc.grading.grade", "varfunc.grading.kernels", "nbformat"]
    )
    return context


def _graded(todo: list, options: GradeOptions, jobs: int) -> Iterator[dict]:
    """Each submission graded in a process of its own, jobs at a time: a kernel that kills its
    parent (os.kill(os.getppid(), ...)) takes only its own submission's grading with it."""
    context = _context()
    fingerprint = options.fingerprint()
    pending, running = list(todo), {}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                path, (base, student) = pending.pop(0)
                report_file(base, ".json").unlink(missing_ok=True)  # an old report must not pass for the new
                # the run's fingerprint, which the next run compares with, goes into the report
                scratch = tempfile.mkdtemp(prefix="varfunc-grade-")
                process = context.Process(
                    target=grade_and_write, args=(path, base, student, options, fingerprint, scratch)
                )
                try:
                    process.start()  # the first one waits seconds, for the fork server's imports
                except BaseException:  # Ctrl-C then: the process is not in running, its folder is ours
                    shutil.rmtree(scratch, ignore_errors=True)
                    raise
                running[process.sentinel] = (process, path, base, student, scratch)
            for sentinel in wait(list(running)):
                process, path, base, student, scratch = running.pop(sentinel)
                process.join()
                shutil.rmtree(scratch, ignore_errors=True)  # left behind by a process killed mid-grading
                yield _report_of(process, path, base, student, options)
    finally:  # stopped half-way (Ctrl-C, SIGTERM, the caller's error): nothing may be left running
        stop_processes((process, scratch) for process, _, _, _, scratch in running.values())
        for _, _, base, _, _ in running.values():
            report_file(base, ".json.partial").unlink(missing_ok=True)


def grade_class(
    paths: list[Path],
    report_dir: Path,
    options: GradeOptions | None = None,
    *,
    jobs: int = 1,
    resume: bool = True,
    progress: bool = True,
) -> list[dict]:
    """Grade every submission (jobs at a time), write its reports and the class summary.csv.

    A file given twice (however typed) is graded once; a file outside the root that report_dir
    remembers (``roots.py``) is refused (ValueError) before anything is written, and so is a run into
    a report_dir another run grades into now (``lock.FolderBusy``, a ValueError) and an nbclient whose
    methods the output limit builds on have changed (``kernels.check_nbclient``). The summary lists
    every submission with a JSON report in report_dir, graded in this run or an earlier one (one row
    each). Ctrl-C or SIGTERM (raised as ``stopping.Stopped``) ends the grading processes and their
    kernels, removes their folders and raises; the next run resumes there.
    """
    from .kernels import check_nbclient  # (nbclient: imported when a class is graded)

    check_nbclient()  # else the output limit would go unenforced, without a word
    options = options or GradeOptions()
    report_dir = Path(report_dir)
    paths = distinct(paths)
    # SIGTERM stops the run as Ctrl-C does from here on, so the report folder's lock goes with it
    with stop_on_sigterm(), grading_into(report_dir):
        bases = report_bases(paths, report_dir, *settle_root(paths, report_dir))
        reports, todo = _resumed(bases, options, resume)
        bar = _progress(len(todo), progress)
        try:
            with closing(_graded(todo, options, jobs)) as graded:
                for report in graded:
                    reports.append(report)
                    _show(report, bar, progress)
        finally:  # also when stopped half-way: the summary holds the reports written so far
            if bar is not None:
                bar.close()
            _remove_orphaned_views(report_dir)
            write_summary(saved_reports(report_dir), report_dir / SUMMARY)
    return reports


def _resumed(bases: dict, options: GradeOptions, resume: bool) -> tuple[list[dict], list]:
    """(the reports kept from earlier runs, the (submission, (base, student)) pairs to grade)."""
    reports, todo = [], []
    for path, (base, student) in bases.items():
        done = up_to_date(path, base, options) if resume else None
        other = graded_as_its_own_chapter(path, base, options) if done is None else None
        if other is not None:
            reports.append({**other, "resumed": True, "other_chapter": True})
        elif done is not None:
            reports.append({**done, "resumed": True})
        else:
            todo.append((path, (base, student)))
    return reports, todo


def _remove_orphaned_views(report_dir: Path) -> None:
    """Remove the .md and .html reports left without their .json, saying so on stderr."""
    removed = remove_orphaned_views(report_dir)
    if removed:
        print(
            f"removed the .md and .html reports of {len(removed)} submission(s) whose .json is gone "
            f"(deleted, or a grading stopped half-way): {shortened([str(base) for base in removed])}; "
            "a run that grades those files writes all three again",
            file=sys.stderr,
        )


def _show(report: dict, bar: object, progress: bool) -> None:
    """One more submission graded: on the progress bar, or as a line on stderr."""
    if bar is not None:
        bar.update(1)
        bar.set_postfix_str(f"{report.get('student', '')}: {report['score']}/{report['max_score']}")
    elif progress:
        print(f"graded {report['submission']}: {report['score']}/{report['max_score']}", file=sys.stderr)
