"""The instructor's commands: ``python -m varfunc.grading release|grade ...`` (``--help`` for each)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path


def _release(args: argparse.Namespace) -> int:
    from .release import folder_files, release

    source, out = Path(args.source), Path(args.out)
    linked: list[Path] = []
    summaries = release(source, out, force=args.force, linked=linked)
    for summary in summaries:
        print(summary)
    print(f"released {len(summaries)} notebook(s) into {out}")
    others = [
        f"{target.relative_to(out)}{' (instructor-only regions removed)' if path.suffix == '.md' else ''}"
        for path, target in (folder_files(source, out) if source.is_dir() else [])
        if path.suffix != ".ipynb"
    ]
    others += [f"{copy.as_posix()} (linked from the chapters)" for copy in linked]
    if others:
        print(f"copied {len(others)} other file(s): {', '.join(others)}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from . import options as kit
    from .batch import SUMMARY, grade_class
    from .names import shortened
    from .options import GradeOptions, check_kernel
    from .report import summary_rows
    from .stopping import Stopped

    missing = [
        name for name in ("nbformat", "nbclient", "ipykernel") if importlib.util.find_spec(name) is None
    ]
    if missing:  # else every submission would get a grader error, and the command exit 0
        raise ValueError(
            f"grade runs notebooks in Jupyter kernels and needs {', '.join(missing)} (the lab and test "
            "extras): run it in the kit's environment, .venv/bin/python -m varfunc.grading grade ..., or "
            "pip install -e '.[lab,test]'"
        )
    for path in map(Path, args.submissions):
        if path.is_dir():
            per_student = not any(path.glob("*.ipynb")) and any(path.glob("*/*.ipynb"))  # a folder each
            pattern = f"{path}/*/*.ipynb" if per_student else f"{path}/*.ipynb"
            raise ValueError(f"{path} is a folder; pass the notebooks in it, e.g. {pattern}")
        if not path.exists():
            raise FileNotFoundError(f"no submission at {path} (a pattern that matched nothing?)")
    check_kernel(args.kernel)  # else every submission would get a grader error
    if args.jobs < 1:
        raise ValueError(f"--jobs must be 1 or more (submissions graded at once), not {args.jobs}")
    if Path(args.report).exists() and not Path(args.report).is_dir():
        raise ValueError(f"--report {args.report} is a file; pass a folder for the reports (made if missing)")
    options = GradeOptions(
        cell_timeout=args.timeout,
        notebook_timeout=args.notebook_timeout,
        chapter=args.chapter,
        source=Path(args.source) if args.source else None,
        hidden_files=tuple(Path(p) for p in args.hidden),
        kernel_name=args.kernel,
        memory_gib=args.memory,
        max_output_mib=args.max_output,
    )
    kit_before = kit.kit_digests()
    try:
        results = grade_class(
            [Path(p) for p in args.submissions],
            Path(args.report),
            options,
            jobs=args.jobs,
            resume=not args.force,
            progress=not args.no_progress,
        )
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (Stopped): nothing is left running
        again = "run it again without --force" if args.force else "run the same command again"
        print(
            f"stopped: the reports written so far are kept in {args.report}; {again} "
            "to resume where it stopped",
            file=sys.stderr,
        )
        return 143 if isinstance(stop, Stopped) else 130
    graded = [r for r in results if not r.get("resumed")]
    other = [r for r in results if r.get("other_chapter")]
    print(f"graded {len(graded)} submission(s), {len(results) - len(graded)} unchanged since the last run;")
    if other:  # a folder of every chapter's files, graded for one chapter
        chapters = ", ".join(sorted({r["chapter"] for r in other}))
        print(
            f"left {len(other)} file(s) graded as {chapters} as they were: not the notebook of "
            f"{args.chapter} (to grade one chapter of such a folder, pick its files: "
            f"submissions/*/{args.chapter[2:]}_*.ipynb)"
        )
    rows = summary_rows(Path(args.report) / SUMMARY)
    print(
        f"summary.csv lists {rows} submission(s), every report in {args.report}, "
        f"{len(graded)} of them graded in this run"
    )
    print(_last_line(results, args.report))
    changed = kit.changed_files(kit_before, kit.kit_digests())
    if changed:  # a submission's code runs with your permissions, and the kit is installed editable
        shown = shortened(changed)
        print(
            f"warning: the kit's files changed while this run graded: {shown} (in {kit.KIT_SOURCES}); "
            "a submission wrote to them, so grades from this run may be wrong: restore the files "
            "(git checkout, or reinstall the kit) and run the command again: it grades those files again",
            file=sys.stderr,
        )
    return 1 if changed or any(r["status"] == "grader_error" for r in results) else 0


def _last_line(results: list[dict], report: str) -> str:
    """Where the reports are, and how many of this run's files the grader could not grade, and why."""
    errors = sum(r["status"] == "grader_error" for r in results)
    unreadable = sum(r["status"] == "unreadable" for r in results)
    line = f"reports in {report} (summary.csv, and a .json, .md and .html per submission): "
    line += f"{errors} grader error(s), {unreadable} unreadable file(s)"
    where = "their status in summary.csv, the why in their .md reports"
    if errors:
        return (
            f"{line} ({where}; a grader error is on the grader's side: run the command again to retry them)"
        )
    return f"{line} ({where})" if unreadable else line


def parser() -> argparse.ArgumentParser:
    """The command-line parser of ``python -m varfunc.grading``."""
    main = argparse.ArgumentParser(
        prog="python -m varfunc.grading", description="Release student notebooks and grade submissions."
    )
    commands = main.add_subparsers(dest="command", required=True)

    release = commands.add_parser(
        "release", help="write student copies: solutions stubbed, hidden tests removed, outputs cleared"
    )
    release.add_argument("source", help="a notebook, or a folder of notebooks (the instructor versions)")
    release.add_argument("out", help="the folder to write the student copies into")
    release.add_argument(
        "--force",
        action="store_true",
        help="overwrite the files of an earlier release already in out (a student's work in them is lost)",
    )
    release.set_defaults(run=_release)

    grade = commands.add_parser("grade", help="run submissions in fresh kernels and write score reports")
    grade.add_argument("submissions", nargs="+", help="submitted notebooks (.ipynb)")
    grade.add_argument("--report", required=True, help="folder for the reports and summary.csv")
    grade.add_argument("--jobs", "-j", type=int, default=1, help="submissions graded at once (default 1)")
    grade.add_argument("--timeout", type=float, default=60, help="seconds per cell (default 60)")
    grade.add_argument(
        "--notebook-timeout", type=float, default=600, help="seconds per submission (default 600)"
    )
    grade.add_argument(
        "--memory",
        type=float,
        default=4,
        help="GiB of memory per submission's kernel (default 4; 0: no limit; Linux only): an allocation "
        "past it raises MemoryError in the student's cell",
    )
    grade.add_argument(
        "--max-output",
        type=float,
        default=20,
        help="MiB of outputs a submission keeps, in all (default 20; 0: no limit): what its cells print "
        "or show past it is dropped, the checks' verdicts kept, and its report says so",
    )
    grade.add_argument(
        "--chapter",
        help="the chapter every file should be, e.g. ch03; without it, each file's two leading digits "
        "(03_...), else the chapter of the notebook's own exercise cells, which a wrong notebook passes",
    )
    grade.add_argument(
        "--source", help="the instructor notebooks folder: their HIDDEN TESTS regions are run too"
    )
    grade.add_argument(
        "--hidden", action="append", default=[], help="a Python file of @hidden_check checks (repeatable)"
    )
    grade.add_argument("--kernel", default="python3", help="the Jupyter kernel to run (default python3)")
    grade.add_argument("--force", action="store_true", help="grade again even if a report is up to date")
    grade.add_argument("--no-progress", action="store_true", help="no progress bar")
    grade.set_defaults(run=_grade)
    return main


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # piped into head or less, which stopped reading: no traceback
        # (as the Python documentation recommends: the rest of the output goes nowhere)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
