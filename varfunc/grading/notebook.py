"""nbgrader's cell markers, read and applied: solution regions, stubs, and exercise cells of a notebook;
and a submitted notebook read, its exercise cells found, for the grader."""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from .core import STUB_MESSAGE

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
STUB = f'raise NotImplementedError("{STUB_MESSAGE}")'

_SOLUTION = re.compile(
    rf"^(?P<indent>[ \t]*){re.escape(BEGIN_SOLUTION)}[^\n]*\n.*?^[ \t]*{re.escape(END_SOLUTION)}[^\n]*(\n|$)",
    re.M | re.S,
)


def source_of(cell: Any) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def stub_source(source: str) -> str:
    """The source with each solution region replaced by a stub raising NotImplementedError, as nbgrader."""
    return _SOLUTION.sub(lambda m: f"{m['indent']}{STUB}\n", source)


def solution_source(source: str) -> str:
    """The source with the marker lines removed and the solutions kept (the instructor's code)."""
    return "\n".join(
        line for line in source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION)
    )


def _raw_nbgrader(cell: Any) -> Any:
    """The cell's nbgrader metadata as stored ({} when it has none; None when metadata is damaged)."""
    metadata = cell.get("metadata", {})
    return metadata.get("nbgrader", {}) if isinstance(metadata, dict) else None


def nbgrader_meta(cell: Any) -> dict:
    """The cell's nbgrader metadata ({} when it has none, or when it is damaged: not a mapping)."""
    meta = _raw_nbgrader(cell)
    return meta if isinstance(meta, dict) else {}


def damaged_nbgrader_meta(cell: Any) -> bool:
    """True when the cell has nbgrader metadata that is not a mapping (an edited notebook file)."""
    return not isinstance(_raw_nbgrader(cell), dict)


def solution_cells(nb: Any) -> dict:
    """{grade_id: cell} for every solution cell of a notebook."""
    return {nbgrader_meta(c)["grade_id"]: c for c in nb["cells"] if nbgrader_meta(c).get("solution")}


def check_cells(nb: Any) -> dict:
    """{grade_id: cell} for every autograded cell (the ones that call check and carry the points)."""
    return {
        nbgrader_meta(c)["grade_id"]: c
        for c in nb["cells"]
        if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")
    }


def cell_name(position: int) -> str:
    """How reports name the cell at a position: by its number counting from 1, as a student counts them."""
    return f"cell {position + 1} (counting from 1)"


# --- a submitted notebook, read for grading -------------------------------------------------------


def read_notebook(data: bytes) -> tuple[Any, str]:
    """(notebook, "") for a readable notebook, else (None, why it cannot be read)."""
    import nbformat

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "the file is not text (not a notebook, or damaged): it is not UTF-8"
    if not text.strip():
        return None, "the file is empty: submit the .ipynb notebook"
    if not text.lstrip().startswith("{"):
        start = text.lstrip()[:30].splitlines()[0]
        return None, (
            f"the file is not a notebook: a notebook is JSON that starts with '{{', this one starts "
            f"with {start!r} (a .py script or an export?); submit the .ipynb file"
        )
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"the file is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
    try:
        with warnings.catch_warnings():  # a duplicate or missing cell id: nbformat mends it, and its
            warnings.simplefilter("ignore")  # warning would land in the middle of the progress bar
            nb = nbformat.reads(text, as_version=4)
        cells = nb["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
        for cell in cells:
            cell["cell_type"], source_of(cell)
    except Exception as error:  # noqa: BLE001 - any structural damage gets the same entry
        return None, f"the file is JSON but not a Jupyter notebook ({type(error).__name__}: {error})"
    return nb, ""


def cell_index(nb: Any) -> tuple[dict[str, list[int]], list[str]]:
    """({grade_id: [cell positions]}, problems) for every cell carrying nbgrader metadata (problems:
    damaged metadata)."""
    found: dict[str, list[int]] = {}
    for position, cell in enumerate(nb["cells"]):
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id:
            found.setdefault(grade_id, []).append(position)
    problems = [  # copies of a cell are named by the grader's plan (plan.py), which knows the one graded
        f"{cell_name(position)} has damaged nbgrader metadata (not a mapping): it counts as an ordinary cell"
        for position, cell in enumerate(nb["cells"])
        if damaged_nbgrader_meta(cell)
    ]
    return found, problems


def notebook_chapter(grade_ids: list[str]) -> str | None:
    """The chapter most of the notebook's graded cells belong to (``ch03_mul`` -> ``ch03``)."""
    chapters = [g.split("_", 1)[0] for g in grade_ids if re.match(r"^ch\d\d_", g)]
    return max(sorted(set(chapters)), key=chapters.count) if chapters else None
