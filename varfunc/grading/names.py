"""Who submitted a file, and what its reports are called: read from the folders and the file name.

The rules, for a submission's path below the submissions' root (``roots.py``):

- a file named as Canvas's bulk download names it
  (``smithalice_123456_7891011_03_functions_and_the_forward_graph.ipynb``, with ``_late_`` or
  ``_LATE_`` after the name when it came late) is the student before the numbers (``smithalice``),
  wherever it lies: its folders are then the assignment's (``hw3/smithalice_...``), so grading
  ``canvas/*/*.ipynb`` at once or each assignment's folder on its own names the same students;
- any other file in folders below the root is the student of those folders, joined with "/"
  (``alice/03_x.ipynb`` -> ``alice``; ``section1/alice/03_x.ipynb`` -> ``section1/alice``), each
  folder without the suffix that Moodle's bulk download adds
  (``Alice Smith_123456_assignsubmission_file_`` -> ``Alice Smith``; also ``_onlinetext_``);
- when every file of a first run is a chapter's file in one folder (``grade alice/*.ipynb``: one
  student's chapters), the root is the folder above it (``roots.py``), so the student is that folder;
  so it is when they are Canvas's files (``grade canvas/hw3/*.ipynb``): the root is ``canvas``, and
  ``canvas/hw4`` can be graded into the same report folder later;
- any other file right in the root is its own name (``alice.ipynb`` -> ``alice``; an unrenamed
  ``03_x.ipynb`` among a class's submissions -> ``03_x``: no name of a student is known for it).

A submission's reports are named after the file without its final ``.ipynb`` only (``report_name``):
``hw3.final.ipynb`` -> ``hw3.final.json``, so it does not share ``hw3.json`` with ``hw3.ipynb``.
"""

from __future__ import annotations

import re
from pathlib import Path

CHAPTER_FILE = re.compile(r"\d\d_")  # a chapter's file name: 03_functions_and_the_forward_graph
MOODLE_FOLDER = re.compile(r"^(?P<student>.+?)_\d+_assignsubmission_(?:file|onlinetext)_?$")
CANVAS_FILE = re.compile(r"^(?P<student>[^_]+?)(?P<late>_late)?_\d+_\d+_(?P<name>.+)$", re.IGNORECASE)


def shortened(items: list, shown: int = 5) -> str:
    """'a, b, c and 4 more': the first shown items, for a message that names what it found."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(map(str, items[:shown])) + more


def folder_student(folder: str) -> str:
    """A folder's student: its name without Moodle's ``_123456_assignsubmission_file_`` suffix."""
    moodle = MOODLE_FOLDER.match(folder)
    return moodle["student"] if moodle else folder


def submitted_name(file_name: str) -> str:
    """The name the student gave the file, without the prefix of Canvas's bulk download."""
    canvas = CANVAS_FILE.match(file_name)
    return canvas["name"] if canvas else file_name


def is_late(file_name: str) -> bool:
    """True for a file that Canvas's bulk download marked late (``smithalice_late_123456_...``)."""
    canvas = CANVAS_FILE.match(file_name)
    return bool(canvas and canvas["late"])


def report_name(file_name: str) -> str:
    """The name of a submission's reports (.json, .md and .html appended): the file's without ".ipynb"."""
    return file_name.removesuffix(".ipynb")


def in_own_folder(relative: Path) -> bool:
    """True for a chapter's file right in the root (not Canvas's): one student's, in their folder."""
    return (
        len(relative.parts) == 1
        and not CANVAS_FILE.match(relative.name)
        and bool(CHAPTER_FILE.match(relative.stem))
    )


def in_assignment_folder(relative: Path) -> bool:
    """True for a Canvas file right in the root: its folder is then an assignment's (hw3/)."""
    return len(relative.parts) == 1 and bool(CANVAS_FILE.match(relative.name))


def student_of(relative: Path, assignments: bool = False) -> str:
    """The student of a submission at relative below the root (the rules are in this module's
    docstring); assignments: the first folder below the root is an assignment's (canvas/hw3/)."""
    canvas = CANVAS_FILE.match(relative.name)
    if canvas:
        return canvas["student"]
    folders = relative.parts[1 if assignments else 0 : -1]
    if folders:
        return "/".join(folder_student(folder) for folder in folders)
    return report_name(relative.name)
