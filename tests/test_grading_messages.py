"""What the instructor's commands say: how to resume a stopped ``grade --force`` (the same command
grades everything again), every file ``release`` copies (the linked ones were left out), and the
summary's "look at" column (a pass whose exercise cell timed out was not flagged). No kernel is
started here."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from varfunc.grading import batch  # noqa: E402
from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.report import write_summary  # noqa: E402

CHAPTER = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("03_*.ipynb"))[0]


def _stopped(*args: object, **kwargs: object) -> list[dict]:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    "force, advice",
    [
        ([], "run the same command again to resume where it stopped"),
        (["--force"], "run it again without --force to resume where it stopped"),
    ],
)
def test_a_stopped_run_says_how_to_resume(tmp_path, monkeypatch, capsys, force, advice):
    monkeypatch.setattr(batch, "grade_class", _stopped)
    path = tmp_path / "alice" / CHAPTER.name
    path.parent.mkdir()
    path.write_text("not json")
    assert main(["grade", str(path), "--report", str(tmp_path / "grades"), *force]) == 130
    assert advice in capsys.readouterr().err


def test_release_lists_the_linked_files_it_copies(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "differences.md").write_text("# Differences\n")
    source = tmp_path / "course"
    source.mkdir()
    nb = nbformat.read(CHAPTER, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("See [the docs](../docs/differences.md)."))
    nbformat.write(nb, source / CHAPTER.name)
    (source / "data.txt").write_text("1 2 3\n")
    assert main(["release", str(source), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "copied 2 other file(s): data.txt, docs/differences.md (linked from the chapters)" in out
    assert (tmp_path / "out" / "docs" / "differences.md").is_file()


def _exercise(exercise_id: str, status: str, points: int) -> dict:
    return {"id": exercise_id, "title": "", "points": points, "max_points": 2, "status": status, "reason": ""}


@pytest.mark.parametrize(
    "cell, note",
    [
        ("timeout", "ch03.mul: passed, but its cell timed out"),
        ("died", "ch03.mul: passed, but its cell killed the kernel"),
        ("error", "ch03.mul: passed, but its cell raised an error"),
    ],
)
def test_a_pass_whose_exercise_cell_did_not_finish_is_to_look_at(tmp_path, cell, note):
    report = {
        "student": "alice",
        "submission": "alice/03.ipynb",
        "chapter": "ch03",
        "status": "graded",
        "score": 2,
        "max_score": 6,
        "problems": [],
        "exercises": [
            _exercise("ch03.add", "passed", 2),
            _exercise("ch03.mul", "passed", 2),
            _exercise("ch03.neg", "timeout", 0),
        ],
        "cell_errors": [
            {"cell": 4, "grade_id": "ch03_mul", "status": cell, "error": "TimeoutError"},
            {"cell": 6, "grade_id": "ch03_neg", "status": "timeout", "error": "TimeoutError"},
            {"cell": 1, "grade_id": None, "status": "error", "error": "NameError: x"},
        ],
    }
    write_summary([report], tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="", encoding="utf-8-sig") as f:
        (row,) = list(csv.DictReader(f))
    assert row["look at"] == f"{note}; ch03.neg: timeout"
