"""Student copies of the chapters: solutions stubbed, hidden tests removed, outputs cleared.

``release_notebook`` does what nbgrader's ``generate_assignment`` does to one notebook, with the same
markers, so the released copies work both with ``python -m varfunc.grading grade`` and with nbgrader:

- in each solution cell (``nbgrader.solution``), every ``### BEGIN SOLUTION`` ... ``### END SOLUTION``
  region becomes a stub that raises ``NotImplementedError`` with a friendly message (a cell without
  regions is replaced whole; a Markdown solution cell gets "YOUR ANSWER HERE");
- every ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` region is removed;
- outputs, execution counts and run timestamps are cleared, and so is the widget state saved with
  the notebook (``metadata.widgets``: it holds what the widgets showed, answers included); all other
  metadata is kept.

A Markdown file next to the notebooks (a course README) loses every ``<!-- BEGIN INSTRUCTOR ONLY -->``
... ``<!-- END INSTRUCTOR ONLY -->`` region; other files are copied as they are. In Markdown (files and
cells) a relative link to a file outside the released folder (``../docs/differences.md``) leads to a
copy of that file in the release (``links.py``), so the release stands on its own.

A release never overwrites a file already in the release folder (a notebook or README a student
worked in, a linked copy) unless asked to (``--force``), and leaves out of the copy a release folder
inside the source folder (this release's target, and earlier ones: each holds a ``.varfunc-release``
mark).

Releasing is deterministic: the same source gives the same bytes. A folder is released whole or not
at all: every notebook is read and released in memory before the first file is written.
"""

from __future__ import annotations

import copy
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .links import LinkedCopies, relinked
from .names import shortened
from .notebook import (
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    END_HIDDEN,
    STUB,
    cell_name,
    nbgrader_meta,
    source_of,
    stub_source,
)

MARKDOWN_STUB = "YOUR ANSWER HERE"
# Files next to the notebooks that are not copied into a release.
SKIPPED = {".ipynb_checkpoints", "__pycache__", ".DS_Store"}
# Written into each release folder: a later release of a folder that holds this one leaves it out.
RELEASE_MARK = ".varfunc-release"
SHOWN = 12  # the files already there that a refusal names


def _region(begin: str, end: str) -> re.Pattern:
    """The lines from a begin marker to its end marker, both included (markers indented or not)."""
    lines = rf"^[ \t]*{re.escape(begin)}[^\n]*\n.*?^[ \t]*{re.escape(end)}[^\n]*(\n|$)"
    return re.compile(lines, re.M | re.S)


INSTRUCTOR_BEGIN, INSTRUCTOR_END = "<!-- BEGIN INSTRUCTOR ONLY -->", "<!-- END INSTRUCTOR ONLY -->"
_HIDDEN = _region(BEGIN_HIDDEN, END_HIDDEN)
_MARKDOWN_SOLUTION = _region(BEGIN_SOLUTION, "### END SOLUTION")
_INSTRUCTOR = _region(INSTRUCTOR_BEGIN, INSTRUCTOR_END)
# A marker line left after the regions are removed: nbgrader's, or a misspelt one
_MARKER_LINE = re.compile(r"^[ \t]*###[ \t]*(BEGIN|END)\b[^\n]*", re.M)
_INSTRUCTOR_MARKER = re.compile(r"^[ \t]*<!--[ \t]*(BEGIN|END)[ \t]+INSTRUCTOR\b[^\n]*", re.M)


@dataclass
class ReleaseSummary:
    """What releasing one notebook changed."""

    name: str
    stubbed: int = 0
    hidden_removed: int = 0
    outputs_cleared: int = 0

    def __str__(self) -> str:
        return (
            f"{self.name}: {self.stubbed} solution cell(s) stubbed, "
            f"{self.hidden_removed} hidden test region(s) removed, {self.outputs_cleared} output(s) cleared"
        )


def remove_hidden_tests(source: str) -> str:
    """The source without its ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` regions."""
    return _HIDDEN.sub("", source)


def hidden_tests(source: str) -> str:
    """The code inside the hidden test regions of a source (the marker lines left out)."""
    lines = []
    for match in _HIDDEN.finditer(source):
        lines.extend(match.group(0).splitlines()[1:-1])
    return "\n".join(lines)


def _stub(cell: Any, source: str) -> str:
    """A solution cell's source as released: its regions stubbed (the whole cell when it has none)."""
    if cell["cell_type"] == "code":
        stubbed = stub_source(source) if BEGIN_SOLUTION in source else STUB
        return stubbed if source.endswith("\n") else stubbed.rstrip("\n")  # as nbgrader writes it
    if BEGIN_SOLUTION in source:
        return _MARKDOWN_SOLUTION.sub(MARKDOWN_STUB + "\n", source)
    return MARKDOWN_STUB


def release_notebook(nb: Any, relink: Callable[[str], str] | None = None) -> tuple[Any, ReleaseSummary]:
    """A student copy of a notebook (nbformat node or dict) and a summary of what changed; relink
    rewrites the Markdown cells' links (see ``links.relinked``)."""
    released = copy.deepcopy(nb)
    released.get("metadata", {}).pop("widgets", None)  # the widgets' saved state: what they showed
    summary = ReleaseSummary(name="")
    for position, cell in enumerate(released["cells"]):
        source = source_of(cell)
        if nbgrader_meta(cell).get("solution"):
            summary.stubbed += 1
            source = _stub(cell, source)
        if BEGIN_HIDDEN in source:
            summary.hidden_removed += len(list(_HIDDEN.finditer(source)))
            source = remove_hidden_tests(source).rstrip("\n")
        _refuse_a_marker_left(position, cell, source)
        if relink is not None and cell["cell_type"] == "markdown":
            source = relink(source)
        cell["source"] = source
        if cell["cell_type"] == "code":
            summary.outputs_cleared += len(cell.get("outputs", []))
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)  # nbclient's run timestamps
    return released, summary


def _refuse_a_marker_left(position: int, cell: Any, released: str) -> None:
    """ValueError when a marker line is left in a released cell: what it should hide would ship too.

    As nbgrader, which refuses a region with no end and a region in a cell that is not a solution cell.
    """
    left = _MARKER_LINE.search(released)
    if left is None:
        return
    if left.group(0).strip() == BEGIN_SOLUTION and not nbgrader_meta(cell).get("solution"):
        why = "a solution region in a cell that is not a solution cell (nbgrader metadata 'solution')"
    else:
        why = "a region without its end marker, or a misspelt marker"
    raise ValueError(
        f"{cell_name(position)} keeps the line {left.group(0).strip()!r} after release: {why}; "
        "the student copy would show what the region hides"
    )


def released_text(source: Path, relink: Callable[[str], str] | None = None) -> tuple[str, ReleaseSummary]:
    """The student copy of one notebook file, as the text to write, and its summary (nothing written)."""
    import nbformat  # an optional dependency, needed only here

    try:
        nb = nbformat.read(source, as_version=4)
        nbformat.validate(nb)
    except Exception as error:  # nbformat raises its own JSON and validation errors
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"release: {source} is not a readable notebook ({why})") from None
    try:
        released, summary = release_notebook(nb, relink)
    except ValueError as error:
        raise ValueError(f"release: {source}: {error}") from None
    summary.name = source.name
    return nbformat.writes(released) + "\n", summary


def released_markdown(source: Path, relink: Callable[[str], str] | None = None) -> str:
    """A Markdown file as the students get it: every instructor-only region removed (nothing written)."""
    released = _INSTRUCTOR.sub("", source.read_text(encoding="utf-8"))
    left = _INSTRUCTOR_MARKER.search(released)
    if left is not None:
        raise ValueError(
            f"release: {source} keeps the line {left.group(0).strip()!r}: an instructor-only region "
            "without its end marker, or a misspelt marker; the student copy would show what the region hides"
        )
    return relink(released) if relink is not None else released


def release_file(
    source: Path, target: Path, force: bool = False, linked: list[Path] | None = None
) -> ReleaseSummary:
    """Release one notebook file into target (a file path); the source is only read.

    linked: if given, gets the linked files copied into the release (``links.py``), below target's folder.
    """
    copies = LinkedCopies(source.parent, target.parent, {target})
    text, summary = released_text(
        source,
        partial(
            relinked, source_dir=source.parent, target_dir=target.parent, root=source.parent, copies=copies
        ),
    )
    _refuse_to_overwrite([target, *copies.copies.values()], force)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    copies.write()
    if linked is not None:
        linked += copies.written()
    return summary


def release(
    source: Path, out: Path, force: bool = False, linked: list[Path] | None = None
) -> list[ReleaseSummary]:
    """Release a notebook, or every notebook of a folder (other files copied as they are), into out.

    Files already in out are not overwritten (ValueError, nothing written) unless force is true.
    linked: if given, gets the files outside the folder that its Markdown links to and that were
    copied into the release (``links.py``), as paths below the release folder.
    """
    source, out = Path(source), Path(out)
    if source.is_file():
        target = out / source.name if out.suffix != ".ipynb" else out
        if target.resolve() == source.resolve():
            raise ValueError(f"release: the student copy would overwrite the source notebook {source}")
        _refuse_a_file(target.parent)
        return [release_file(source, target, force, linked)]
    if not source.is_dir():
        raise FileNotFoundError(f"no notebook or folder at {source}")
    if out.resolve() == source.resolve():
        raise ValueError("the release folder must differ from the source folder (it would overwrite it)")
    _refuse_a_file(out)
    files = folder_files(source, out)
    _refuse_hidden_check_files([path for path, _ in files if path.suffix == ".py"])
    targets = dict(files)
    copies = LinkedCopies(source, out, set(targets.values()))

    def relink(path: Path) -> Callable[[str], str]:
        return partial(
            relinked, source_dir=path.parent, target_dir=targets[path].parent, root=source, copies=copies
        )

    notebooks = _release_all(
        [path for path, _ in files if path.suffix == ".ipynb"], lambda p: released_text(p, relink(p))
    )
    markdown = _release_all(
        [path for path, _ in files if path.suffix == ".md"], lambda p: released_markdown(p, relink(p))
    )
    _refuse_to_overwrite([*targets.values(), *copies.copies.values()], force)  # the links are known now
    out.mkdir(parents=True, exist_ok=True)
    (out / RELEASE_MARK).write_text("made by python -m varfunc.grading release: a release leaves it out\n")
    for path, target in files:
        target.parent.mkdir(parents=True, exist_ok=True)
        if path in notebooks:
            target.write_text(notebooks[path][0], encoding="utf-8")
        elif path in markdown:
            target.write_text(markdown[path], encoding="utf-8")
        else:
            shutil.copyfile(path, target)
    copies.write()
    if linked is not None:
        linked += copies.written()
    return [summary for _, summary in notebooks.values()]


def folder_files(source: Path, out: Path, release_dir: Path | None = None) -> list[tuple[Path, Path]]:
    """(file, where its release goes) for every file of a folder and its subfolders, skipped ones left out.

    Notebooks in subfolders are released too: a copy would hold solutions. Release folders are left
    out: release_dir (out, this release's folder) and the ones an earlier release marked.
    """
    release_dir = (release_dir or out).resolve()
    files = []
    for path in sorted(source.iterdir()):
        if path.name in SKIPPED or path.name.startswith(".") or path.resolve() == release_dir:
            continue
        if path.is_dir():
            if not (path / RELEASE_MARK).exists():
                files += folder_files(path, out / path.name, release_dir)
        elif path.suffix == ".ipynb" or path.is_file():  # a notebook that is not a file fails when read
            files.append((path, out / path.name))
    return files


def _refuse_a_file(out: Path) -> None:
    """ValueError when the release folder is a file."""
    if out.exists() and not out.is_dir():
        raise ValueError(
            f"release: {out} is a file, not a folder: pass the folder to write the student copies into"
        )


def _refuse_to_overwrite(targets: list[Path], force: bool) -> None:
    """ValueError, before any write, when files are already where the release writes (unless force)."""
    existing = [str(target) for target in targets if target.exists()]
    if existing and not force:
        shown = shortened(existing, SHOWN)
        raise ValueError(
            f"release: nothing was written: {len(existing)} file(s) already there would be "
            f"overwritten, with any work a student did in them: {shown}; release into "
            "another folder, or pass --force to overwrite them"
        )


def _refuse_hidden_check_files(paths: list[Path]) -> None:
    """ValueError, before any write, when a Python file next to the notebooks holds hidden checks:
    the folder's other files are copied to the students as they are."""
    found = [
        str(path) for path in paths if "hidden_check" in path.read_text(encoding="utf-8", errors="replace")
    ]
    if found:
        raise ValueError(
            f"release: nothing was written: {', '.join(found)} holds hidden checks (@hidden_check) and "
            "would be copied to the students; keep it outside the folder you release"
        )


def _release_all(paths: list[Path], release_one: Callable[[Path], Any]) -> dict[Path, Any]:
    """Every file released in memory; a ValueError naming each one that cannot be, before any write."""
    released, problems = {}, []
    for path in paths:
        try:
            released[path] = release_one(path)
        except ValueError as error:
            problems.append(str(error).removeprefix("release: "))
    if problems:
        raise ValueError(
            f"release: nothing was written: {'; '.join(problems)}; fix or remove it, then release again"
        )
    return released
