"""The submissions' root of a report folder: the folder that report paths and student names are read below.

A run's own root is the common folder of its files, or the folder above it when every file is a
chapter's file right in it (``grade submissions/alice/*.ipynb``: the root is ``submissions``, so the
student is ``alice`` and the report ``grades/alice/03_x.json``, as when the whole class is graded;
one unrenamed chapter file among a class's submissions leaves the root where it is). The report
folder remembers its root (``ROOT_FILE``); a run's root is the common folder of the remembered one
and its own, so a submission's report path and student do not depend on which other files a run
includes. When the root widens, the reports already there move to their paths below the new root
(their students renamed) before grading, so no stale report or second name is left.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .names import in_own_folder, student_of
from .report import REPORT_KEYS, write_reports

ROOT_FILE = ".submissions-root"  # JSON, named so that no tool reading the reports (*.json) takes it


def run_root(paths: list[Path]) -> Path:
    """The root of this run's files alone: their common folder, or the one above (see the docstring)."""
    resolved = [Path(p).resolve() for p in paths]
    if not resolved:
        return Path()
    root = Path(os.path.commonpath([p.parent for p in resolved]))
    if all(in_own_folder(p.relative_to(root)) for p in resolved):
        return root.parent
    return root


def remembered_root(report_dir: Path) -> Path | None:
    """The root that report_dir's reports were written below, if it remembers one."""
    try:
        root = json.loads((Path(report_dir) / ROOT_FILE).read_text(encoding="utf-8"))["root"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Path(root)


def settle_root(paths: list[Path], report_dir: Path) -> Path:
    """The root for grading paths into report_dir: the remembered one widened to hold this run's files
    (the reports already there moved to match), remembered for the next run."""
    root, old = run_root(paths), remembered_root(report_dir)
    if old is not None:
        root = Path(os.path.commonpath([old, root]))
    if root != old:
        report_dir.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"root": str(root)}) + "\n"
        (report_dir / ROOT_FILE).write_text(text, encoding="utf-8")
        if old is not None:
            move_reports(report_dir, old, root)
    return root


def move_reports(report_dir: Path, old: Path, new: Path) -> None:
    """Move each report written below root old to its path below root new (an ancestor of old)."""
    prefix = old.relative_to(new)
    for path in sorted(report_dir.rglob("*.json")):
        report = _report_at(path)
        if report is None:
            continue
        relative = prefix / path.relative_to(report_dir).with_suffix("")
        report["student"] = student_of(relative)
        write_reports(report, report_dir / relative)
        for suffix in (".json", ".md", ".html"):
            path.with_suffix(suffix).unlink(missing_ok=True)


def _report_at(path: Path) -> dict | None:
    """The submission report in the JSON file at path, or None for any other file."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) and REPORT_KEYS <= set(report) else None
