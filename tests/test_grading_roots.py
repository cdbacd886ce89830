"""A submission's report path and student do not depend on which other files a run includes: grading
one student after another into one folder kept only the last one's report (each run's files had their
own folder as the root), and grading one section after the whole class renamed its students and
left their old reports behind. The submissions here are not notebooks: they are graded without a
kernel."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402

CH03 = "03_functions_and_the_forward_graph.ipynb"
MOODLE = "Alice Smith_123456_assignsubmission_file_"


def _submissions(root: Path, *folders: str) -> list[Path]:
    """root/<folder>/CH03 for each folder, each an unreadable notebook."""
    paths = []
    for folder in folders:
        path = root / folder / CH03
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not json")
        paths.append(path)
    return paths


def _graded(report: Path) -> dict[str, str]:
    """{report path below the folder, without suffix: its student} of every report in it."""
    return {
        path.relative_to(report).with_suffix("").as_posix(): json.loads(path.read_text(encoding="utf-8"))[
            "student"
        ]
        for path in report.rglob("*.json")
    }


def _rows(report: Path) -> list[dict]:
    with open(report / "summary.csv", newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def _grade(paths: list[Path], report: Path) -> None:
    grade_class(paths, report, progress=False)


def test_students_graded_one_at_a_time_keep_every_report(tmp_path):
    """grade alice/*.ipynb, then bob/*.ipynb, into grades/ kept only Bob's grades/03_x.json."""
    alice, bob = _submissions(tmp_path / "submissions", "alice", "bob")
    one_by_one, at_once = tmp_path / "one_by_one", tmp_path / "at_once"
    _grade([alice], one_by_one)
    assert _graded(one_by_one) == {f"alice/{Path(CH03).stem}": "alice"}  # the README's promise
    _grade([bob], one_by_one)
    _grade([alice, bob], at_once)
    assert _graded(one_by_one) == _graded(at_once)
    assert sorted(row["student"] for row in _rows(one_by_one)) == ["alice", "bob"]


def test_a_section_graded_after_the_class_keeps_its_names_and_leaves_nothing_stale(tmp_path):
    class_ = _submissions(tmp_path / "submissions", "section1/alice", "section2/bob", "section2/carol")
    report = tmp_path / "grades"
    _grade(class_, report)
    before = _graded(report)
    assert set(before.values()) == {"section1/alice", "section2/bob", "section2/carol"}
    _grade(class_[1:], report)
    assert _graded(report) == before
    assert len(_rows(report)) == 3


def test_a_section_graded_before_the_class_moves_to_the_class_paths(tmp_path):
    """The other order: the section's reports move below the wider root, their students renamed."""
    class_ = _submissions(tmp_path / "submissions", "section1/alice", "section2/bob")
    report, at_once = tmp_path / "grades", tmp_path / "at_once"
    _grade(class_[1:], report)
    assert _graded(report) == {f"bob/{Path(CH03).stem}": "bob"}
    _grade(class_[:1], report)
    _grade(class_, at_once)
    assert _graded(report) == _graded(at_once)
    assert {p.suffix for p in (report / "section2" / "bob").iterdir()} == {".json", ".md", ".html"}
    assert (
        "# section2/bob, " in (report / "section2" / "bob" / Path(CH03).stem).with_suffix(".md").read_text()
    )
    assert sorted(row["student"] for row in _rows(report)) == ["section1/alice", "section2/bob"]


def test_a_moodle_folder_graded_alone_keeps_its_stripped_name(tmp_path, capsys):
    alice, bob = _submissions(tmp_path / "submissions", MOODLE, "bob")
    report = tmp_path / "grades"
    assert main(["grade", str(alice), "--report", str(report), "--no-progress"]) == 0
    assert _graded(report) == {f"{MOODLE}/{Path(CH03).stem}": "Alice Smith"}
    assert main(["grade", str(bob), "--report", str(report), "--no-progress"]) == 0
    assert _graded(report) == {f"{MOODLE}/{Path(CH03).stem}": "Alice Smith", f"bob/{Path(CH03).stem}": "bob"}
    assert "summary.csv lists 2 submission(s)" in capsys.readouterr().out
