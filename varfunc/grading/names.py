"""Who submitted a file: the student's name, read from the folders and the file name of a submission.

The rules, for the submissions' paths below their common folder (the root):

- in folders below the root, the student is those folders joined with "/"
  (``alice/03_x.ipynb`` -> ``alice``; ``section1/alice/03_x.ipynb`` -> ``section1/alice``), each
  folder without the suffix that Moodle's bulk download adds
  (``Alice Smith_123456_assignsubmission_file_`` -> ``Alice Smith``; also ``_onlinetext_``);
- a file right in the root named as Canvas's bulk download names it
  (``smithalice_123456_7891011_03_functions_and_the_forward_graph.ipynb``, with ``_late_`` or
  ``_LATE_`` after the name when it came late) is the student before the numbers (``smithalice``);
- when every file is a chapter's file in one folder (``grade alice/*.ipynb``: one student's
  chapters), the root is the folder above it (roots.py), so the student is that folder (``alice``);
- any other file right in the root is its own name (``alice.ipynb`` -> ``alice``; an unrenamed
  ``03_x.ipynb`` among a class's submissions -> ``03_x``: no name of a student is known for it).
"""

from __future__ import annotations

import re
from pathlib import Path

CHAPTER_FILE = re.compile(r"\d\d_")  # a chapter's file name: 03_functions_and_the_forward_graph
MOODLE_FOLDER = re.compile(r"^(?P<student>.+?)_\d+_assignsubmission_(?:file|onlinetext)_?$")
CANVAS_FILE = re.compile(r"^(?P<student>[^_]+?)(?:_late)?_\d+_\d+_(?P<name>.+)$", re.IGNORECASE)


def folder_student(folder: str) -> str:
    """A folder's student: its name without Moodle's ``_123456_assignsubmission_file_`` suffix."""
    moodle = MOODLE_FOLDER.match(folder)
    return moodle["student"] if moodle else folder


def submitted_name(file_name: str) -> str:
    """The name the student gave the file, without the prefix of Canvas's bulk download."""
    canvas = CANVAS_FILE.match(file_name)
    return canvas["name"] if canvas else file_name


def in_own_folder(relative: Path) -> bool:
    """True for a chapter's file right in the root (not Canvas's): one student's, in their folder."""
    return (
        len(relative.parts) == 1
        and not CANVAS_FILE.match(relative.name)
        and bool(CHAPTER_FILE.match(relative.stem))
    )


def student_of(relative: Path) -> str:
    """The student of a submission at relative below the root (the rules are in this module's docstring)."""
    folders = relative.parts[:-1]
    if folders:
        return "/".join(folder_student(folder) for folder in folders)
    canvas = CANVAS_FILE.match(relative.name)
    if canvas:
        return canvas["student"]
    return relative.stem
