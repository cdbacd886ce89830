"""`make lint` lints the kit's own folders only: an instructor's course folder kept in the checkout
(submissions/, grades/, the students' code in them) was linted with the kit, and failed the lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (the test extra has it)")
def test_ruff_lints_the_kits_folders_and_not_a_course_folder_beside_them(tmp_path):
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    kit = ["varfunc/a.py", "varfunc/grading/b.py", "tests/e2e/c.py", "benchmarks/d.py", "figures/e.py"]
    course = ["submissions/alice/f.py", "submissions/bob/03_x.ipynb", "grades/g.py", "student/h.py", "j.py"]
    for name in kit + course + ["notebooks/03_x.ipynb"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}" if name.endswith(".ipynb") else "x = 1\n")
    shown = subprocess.run(
        [RUFF, "check", "--show-files", "."], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    files = sorted(Path(line).resolve().relative_to(tmp_path.resolve()).as_posix() for line in shown.split())
    assert files == sorted([*kit, "notebooks/03_x.ipynb", "pyproject.toml"])
