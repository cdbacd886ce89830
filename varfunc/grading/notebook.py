"""nbgrader's cell markers, read and applied: solution regions, stubs, and exercise cells of a notebook."""

from __future__ import annotations

import re
from typing import Any

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
STUB = 'raise NotImplementedError("Your code here: replace this line with your solution.")'

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
