"""A submission's report path and student do not depend on which other files a run includes: grading
one student after another into one folder kept only the last one's report (each run's files had their
own folder as the root), and grading one section after the whole class renamed its students and
left their old reports behind. Nor do they change later: a file outside the report folder's root is
refused (one late file from /tmp renamed the whole class), and the root is remembered relative to the
report folder (a course folder copied elsewhere was renamed and graded again). The submissions here
are not notebooks: they are graded without a kernel."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.roots import ROOT_FILE, remembered_root  # noqa: E402

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


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_file_outside_the_root_is_refused_before_anything_is_written(tmp_path, capsys):
    """grade /tmp/late/alice_late.ipynb --report grades widened the root to /tmp: every student was
    renamed (alice -> aud_work/submissions/alice) and every report moved."""
    class_ = _submissions(tmp_path / "course" / "submissions", "alice", "bob")
    report = tmp_path / "course" / "grades"
    _grade(class_, report)
    before = _files(report)
    late = _submissions(tmp_path / "late", "alice")[0]
    hw4 = _submissions(tmp_path / "course" / "hw4", "alice")[0]  # a second assignment beside it
    for outside in ([late], [class_[0], hw4]):
        assert main(["grade", *map(str, outside), "--report", str(report), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert f"are of the submissions below {tmp_path / 'course' / 'submissions'}" in err
        assert f"1 file(s) are not below it: {outside[-1]}." in err
        assert f"(e.g. {tmp_path / 'course' / 'submissions' / 'alice' / CH03})" in err
        assert "or grade them into another --report folder" in err
        assert _files(report) == before
    assert _graded(report) == {f"alice/{Path(CH03).stem}": "alice", f"bob/{Path(CH03).stem}": "bob"}


def test_a_course_folder_copied_with_its_grades_keeps_its_names_and_reports(tmp_path):
    """The root was remembered absolute: the copy's files widened it to their common folder with the
    original's, so every student was renamed, every file graded again and the old reports left."""
    class_ = _submissions(tmp_path / "course" / "submissions", "alice", "section2/bob")
    _grade(class_, tmp_path / "course" / "grades")
    assert json.loads((tmp_path / "course" / "grades" / ROOT_FILE).read_text()) == {"root": "../submissions"}
    before = _graded(tmp_path / "course" / "grades")
    shutil.copytree(tmp_path / "course", tmp_path / "copy")
    copied = [tmp_path / "copy" / p.relative_to(tmp_path / "course") for p in class_]
    again = grade_class(copied, tmp_path / "copy" / "grades", progress=False)
    assert all(r.get("resumed") for r in again)  # nothing graded again
    assert _graded(tmp_path / "copy" / "grades") == before
    assert len(_rows(tmp_path / "copy" / "grades")) == 2


def test_an_absolute_root_of_an_older_version_is_still_read(tmp_path):
    class_ = _submissions(tmp_path / "submissions", "alice", "bob")
    report = tmp_path / "elsewhere" / "grades"
    report.mkdir(parents=True)
    (report / ROOT_FILE).write_text(json.dumps({"root": str(tmp_path / "submissions")}))
    assert remembered_root(report) == tmp_path / "submissions"
    _grade(class_[1:], report)  # bob alone: his folder would be the root of a first run
    assert _graded(report) == {f"bob/{Path(CH03).stem}": "bob"}
    assert json.loads((report / ROOT_FILE).read_text()) == {"root": "../../submissions"}  # now relative


def test_a_moodle_folder_graded_alone_keeps_its_stripped_name(tmp_path, capsys):
    alice, bob = _submissions(tmp_path / "submissions", MOODLE, "bob")
    report = tmp_path / "grades"
    assert main(["grade", str(alice), "--report", str(report), "--no-progress"]) == 0
    assert _graded(report) == {f"{MOODLE}/{Path(CH03).stem}": "Alice Smith"}
    assert main(["grade", str(bob), "--report", str(report), "--no-progress"]) == 0
    assert _graded(report) == {f"{MOODLE}/{Path(CH03).stem}": "Alice Smith", f"bob/{Path(CH03).stem}": "bob"}
    assert "summary.csv lists 2 submission(s)" in capsys.readouterr().out


def test_canvas_assignment_folders_graded_one_after_another_share_a_report_folder(tmp_path):
    """canvas/hw3 first set the root to canvas/hw3, so canvas/hw4 afterwards was refused as outside it."""
    canvas = tmp_path / "canvas"
    hw3 = canvas / "hw3" / f"smithalice_123456_7891011_{CH03}"
    hw4 = canvas / "hw4" / "smithalice_123456_7891099_04_the_execution_engine.ipynb"
    for path in (hw3, hw4):
        path.parent.mkdir(parents=True)
        path.write_text("not json")
    report = tmp_path / "grades"
    _grade([hw3], report)
    _grade([hw4], report)
    assert _graded(report) == {
        f"hw3/{hw3.name[: -len('.ipynb')]}": "smithalice",
        f"hw4/{hw4.name[: -len('.ipynb')]}": "smithalice",
    }


def test_a_student_folder_beside_canvas_files_is_named_as_in_a_run_of_the_whole_class(tmp_path):
    """Canvas files right in submissions/ first made the root the folder above, so a student's folder
    graded afterwards, submissions/bob/03_x.ipynb, was named 'submissions/bob'."""
    canvas = tmp_path / "submissions" / f"smithalice_123456_7891011_{CH03}"
    canvas.parent.mkdir(parents=True)
    canvas.write_text("not json")
    (bob,) = _submissions(tmp_path / "submissions", "bob")
    late = tmp_path / "submissions" / "carol.ipynb"  # a file named after its student, beside Canvas's
    late.write_text("not json")
    one_by_one, at_once = tmp_path / "one_by_one", tmp_path / "at_once"
    for paths in ([canvas], [bob], [late]):
        _grade(paths, one_by_one)
    assert set(_graded(one_by_one).values()) == {"smithalice", "bob", "carol"}
    _grade([canvas, bob, late], at_once)
    assert set(_graded(at_once).values()) == {"smithalice", "bob", "carol"}
