"""The chapter notebooks' shape: valid, executed, opening and closing as the house rules say, linked.

Reads the stored notebooks only (no kernel), so it runs in well under a second per chapter.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
LAST_CHAPTER = 10

# nbval's markers that stop it from running a cell or from comparing its outputs.
SKIP_MARKERS = {"NBVAL_SKIP", "NBVAL_IGNORE_OUTPUT"}
SKIP_TAGS = {"nbval-skip", "nbval-ignore-output"}


@cache
def read(path: Path):
    return nbformat.read(path, as_version=4)


def number(path: Path) -> int:
    return int(path.name[:2])


def code_cells(path: Path) -> list:
    return [cell for cell in read(path).cells if cell.cell_type == "code"]


def comment_lines(source: str) -> list[str]:
    """The text of each comment line of a cell (what follows the #), stripped."""
    return [line.strip().lstrip("#").strip() for line in source.splitlines() if line.strip().startswith("#")]


def test_there_are_chapters():
    assert CHAPTERS, "no notebooks/NN_*.ipynb found"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_valid_nbformat_4_with_a_python3_kernel(path):
    nb = read(path)
    assert nb.nbformat == 4
    nbformat.validate(nb)
    kernelspec = nb.metadata.get("kernelspec", {})
    assert kernelspec.get("name") == "python3" and kernelspec.get("language") == "python", kernelspec


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_first_cell_says_chapter_and_what_you_will_learn(path):
    first = read(path).cells[0]
    assert first.cell_type == "markdown"
    assert re.match(rf"# Chapter {number(path):02d}\b", first.source), first.source.splitlines()[0]
    assert "## What you will learn" in first.source


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_last_cell_summarises_and_links_the_next_chapter(path):
    last = read(path).cells[-1]
    assert last.cell_type == "markdown"
    assert "## Summary" in last.source
    if number(path) == LAST_CHAPTER:
        return
    following = f"{number(path) + 1:02d}"
    links = re.findall(rf"\]\(({following}_[a-z0-9_]+\.ipynb)\)", last.source)
    assert links, f"no link to chapter {following} in the last cell"
    existing = [p.name for p in CHAPTERS if p.name.startswith(following + "_")]
    if existing:
        assert existing[0] in links, f"the link {links} does not name {existing[0]}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_and_outputs_are_stored(path):
    cells = code_cells(path)
    unexecuted = [i for i, cell in enumerate(cells) if not isinstance(cell.execution_count, int)]
    assert not unexecuted, f"code cells {unexecuted} have no execution_count: execute the notebook"
    assert any(cell.outputs for cell in cells), "no outputs stored"
    errors = [cell.execution_count for cell in cells for out in cell.outputs if out.output_type == "error"]
    assert not errors, f"cells {errors} stored an error"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_ipython_magics_or_shell_escapes(path):
    # The exercise tests run the cells with exec, where magics are syntax errors.
    for cell in code_cells(path):
        for line in cell.source.splitlines():
            assert not line.lstrip().startswith(("%", "!")), f"magic or shell escape: {line!r}"
            assert "get_ipython()" not in line, f"IPython call: {line!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_cells_skipped_by_nbval_say_why(path):
    for cell in code_cells(path):
        comments = comment_lines(cell.source)
        markers = SKIP_MARKERS.intersection(comments)
        tags = SKIP_TAGS.intersection(cell.metadata.get("tags", []))
        if markers or tags:
            reasons = [c for c in comments if c not in SKIP_MARKERS and len(c.split()) >= 3]
            assert reasons, f"{sorted(markers | tags)} without a comment saying why:\n{cell.source}"


def test_the_readme_links_every_chapter():
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([0-9]{2}_[a-z0-9_]+\.ipynb)\)", readme))
    missing = [p.name for p in CHAPTERS if p.name not in linked]
    assert not missing, f"notebooks/README.md does not link {missing}"
