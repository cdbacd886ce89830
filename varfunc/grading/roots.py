"""The submissions' root of a report folder: the folder that report paths and student names are read below.

The first run into a report folder sets its root: the common folder of the run's files, or the folder
above it when every file is a chapter's file right in it (``grade submissions/alice/*.ipynb``: the
root is ``submissions``, so the student is ``alice`` and the report ``grades/alice/03_x.json``, as
when the whole class is graded; one unrenamed chapter file among a class's submissions leaves the
root where it is) or a file of Canvas's download (``grade canvas/hw3/*.ipynb``: the root is
``canvas``, so ``canvas/hw4`` can follow into the same report folder, and a student's folder in an
assignment's, ``canvas/hw3/alice/``, is ``alice``'s). The report folder remembers
it (``ROOT_FILE``), relative to itself, so a course folder moved or copied with its grades
(``submissions/`` and ``grades/`` side by side) keeps it.

Every later run grades below that root: grading one student after another, or one section after the
class, gives each submission the report path and name a run of the whole class gives. A run with a
file outside the root is refused before anything is written: names and report paths never change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .names import in_assignment_folder, in_own_folder, shortened

ROOT_FILE = ".submissions-root"  # JSON, named so that no tool reading the reports (*.json) takes it
SHOWN = 3  # the files outside the root that a refusal names


def run_root(paths: list[Path]) -> Path:
    """The root of this run's files alone: their common folder, or the one above (see the docstring)."""
    return run_layout(paths)[0]


def run_layout(paths: list[Path]) -> tuple[Path, bool]:
    """(this run's root, whether the first folders below it are assignments'): the root is the folder
    above an assignment's folder when every file is a Canvas file right in it (canvas/ for canvas/hw3/)."""
    resolved = [Path(p).resolve() for p in paths]
    if not resolved:
        return Path(), False
    root = Path(os.path.commonpath([p.parent for p in resolved]))
    relatives = [p.relative_to(root) for p in resolved]
    if all(in_own_folder(r) or in_assignment_folder(r) for r in relatives):
        return root.parent, all(in_assignment_folder(r) for r in relatives)
    return root, False


def remembered_root(report_dir: Path) -> Path | None:
    """The root that report_dir's reports were written below, if it remembers one."""
    layout = remembered_layout(report_dir)
    return None if layout is None else layout[0]


def remembered_layout(report_dir: Path) -> tuple[Path, bool] | None:
    """(root, assignment folders below it) that report_dir remembers, if any (the root relative to
    report_dir; older versions wrote it absolute, which is read as it is, and no assignments)."""
    report_dir = Path(report_dir).resolve()
    try:
        saved = json.loads((report_dir / ROOT_FILE).read_text(encoding="utf-8"))
        root, assignments = saved["root"], saved.get("assignments", False) is True
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return (report_dir / root).resolve(), assignments  # an absolute root replaces report_dir


def settle_root(paths: list[Path], report_dir: Path) -> tuple[Path, bool]:
    """(root, assignment folders below it) for grading paths into report_dir: the remembered ones,
    else this run's (remembered from now on). ValueError, before anything is written, when a file is
    not below the remembered root."""
    layout = remembered_layout(report_dir)
    if layout is None and not paths:
        return Path(), False  # nothing to grade: no root to remember
    if layout is None:
        layout = run_layout(paths)
    else:
        refuse_files_outside(paths, layout[0], report_dir)
    remember(*layout, report_dir)
    return layout


def refuse_files_outside(paths: list[Path], root: Path, report_dir: Path) -> None:
    """ValueError naming the first files of paths that are not below root, and what to do."""
    outside = [Path(p) for p in paths if not Path(p).resolve().is_relative_to(root)]
    if not outside:
        return
    shown = shortened(outside, SHOWN)
    raise ValueError(
        f"nothing was graded: the reports in {report_dir} are of the submissions below {root} (its "
        f"root, remembered in {Path(report_dir) / ROOT_FILE}), and {len(outside)} file(s) are not below "
        f"it: {shown}. Put each below the root, in its student's folder (e.g. "
        f"{root / 'alice' / outside[0].name}), or grade them into another --report folder"
    )


def remember(root: Path, assignments: bool, report_dir: Path) -> None:
    """Write root (and whether assignment folders are below it) into report_dir's ROOT_FILE, relative
    to report_dir (unless it is there already)."""
    report_dir = Path(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    try:
        where = Path(os.path.relpath(root, report_dir.resolve())).as_posix()
    except ValueError:  # another drive (Windows): only an absolute path leads there
        where = str(root)
    text = json.dumps({"root": where, **({"assignments": True} if assignments else {})}) + "\n"
    file = report_dir / ROOT_FILE
    if not file.exists() or file.read_text(encoding="utf-8") != text:
        file.write_text(text, encoding="utf-8")
