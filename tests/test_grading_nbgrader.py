"""Compatibility with nbgrader (the optional ``nbgrader`` extra; skipped when it is not installed):
``nbgrader generate_assignment`` accepts the instructor notebooks as they are, and, told to use the
kit's stub, releases exactly the cells that ``python -m varfunc.grading release`` writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install varfunc[nbgrader])")
nbformat = pytest.importorskip("nbformat")

from varfunc.grading.notebook import STUB, nbgrader_meta  # noqa: E402
from varfunc.grading.release import release_notebook  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def nbgrader_release(tmp_path_factory):
    """Every chapter released by nbgrader, as one assignment of a throw-away course."""
    course = tmp_path_factory.mktemp("course")
    (course / "source" / "chapters").mkdir(parents=True)
    for path in CHAPTERS:
        shutil.copy(path, course / "source" / "chapters" / path.name)
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.ClearSolutions.code_stub = {{'python': {STUB!r}}}\n", encoding="utf-8"
    )
    env = dict(os.environ)  # nbgrader runs the `alembic` script, installed next to the interpreter
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", "chapters", "--force"],
        cwd=course,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return course / "release" / "chapters"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_nbgrader_generates_the_same_student_cells(nbgrader_release, path):
    theirs = nbformat.read(nbgrader_release / path.name, as_version=4)
    ours, _ = release_notebook(nbformat.read(path, as_version=4))
    assert len(theirs.cells) == len(ours.cells)
    for their_cell, our_cell in zip(theirs.cells, ours.cells):
        assert their_cell.source == our_cell.source
        grade_id = nbgrader_meta(our_cell).get("grade_id")
        assert nbgrader_meta(their_cell).get("grade_id") == grade_id
        if their_cell.cell_type == "code":
            assert their_cell.outputs == []
