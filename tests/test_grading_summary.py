"""The class summary lists every submission with a report in the report folder, whichever run graded
it (grading ch03, then ch04 into the same folder kept only ch04), one row per report (a file typed
two ways had two rows), its exercise columns in the chapters' order whoever is listed, and is UTF-8
with a byte order mark so that spreadsheet programs show accented names right. The submissions here
are not notebooks: they are graded without a kernel."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

from varfunc.grading import report as report_module  # noqa: E402
from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.report import markdown, to_html, write_summary  # noqa: E402
from varfunc.grading.stopping import Stopped  # noqa: E402

CH03, CH04 = "03_functions_and_the_forward_graph.ipynb", "04_the_execution_engine.ipynb"


def _unreadable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not json")
    return path


def _rows(summary: Path) -> list[dict]:
    with open(summary, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def test_the_summary_lists_the_submissions_of_every_run(tmp_path, capsys):
    report = tmp_path / "grades"
    report.mkdir()
    (report / "notes.json").write_text(json.dumps({"not": "a report"}))  # left out of the summary
    for name in (CH03, CH04):
        path = _unreadable(tmp_path / "alice" / name)
        assert main(["grade", str(path), "--report", str(report), "--no-progress"]) == 0
    rows = _rows(report / "summary.csv")
    assert sorted(row["chapter"] for row in rows) == ["ch03", "ch04"]
    assert {row["student"] for row in rows} == {"alice"}
    out = capsys.readouterr().out
    assert f"summary.csv lists 2 submission(s), every report in {report}, 1 of them graded in this run" in out


def test_a_submission_graded_again_keeps_one_row(tmp_path):
    path = _unreadable(tmp_path / "alice" / CH03)
    for _ in range(2):
        grade_class([path], tmp_path / "grades", resume=False, progress=False)
    assert len(_rows(tmp_path / "grades" / "summary.csv")) == 1


def test_a_file_given_twice_is_graded_once_and_listed_once(tmp_path, monkeypatch, capsys):
    """sub/zed/hw3.ipynb and $PWD/sub/zed/hw3.ipynb: two processes wrote one report, and the summary
    had two rows (it merged the reports by the path as typed)."""
    monkeypatch.chdir(tmp_path)
    _unreadable(tmp_path / "sub" / "zed" / "hw3.ipynb")
    typed = ["sub/zed/hw3.ipynb", str(tmp_path / "sub" / "zed" / "hw3.ipynb"), "sub/zed/../zed/hw3.ipynb"]
    assert main(["grade", *typed, "--report", "grades", "--no-progress"]) == 0
    assert [row["submission"] for row in _rows(tmp_path / "grades" / "summary.csv")] == [typed[0]]
    assert "graded 1 submission(s)" in capsys.readouterr().out


def test_the_summary_has_a_row_per_report_file(tmp_path):
    """Two reports of one submission path (left by a moved folder) were merged into one row, while
    the command said the summary listed every report in the folder."""
    paths = [_unreadable(tmp_path / name / CH03) for name in ("alice", "bob")]
    grade_class(paths, tmp_path / "grades", progress=False)
    bob = tmp_path / "grades" / "bob" / f"{Path(CH03).stem}.json"
    report = json.loads(bob.read_text())
    report["submission"] = str(paths[0])  # as if both were graded from one path
    bob.write_text(json.dumps(report))
    grade_class(paths[:1], tmp_path / "grades", progress=False)
    assert sorted(row["student"] for row in _rows(tmp_path / "grades" / "summary.csv")) == ["alice", "bob"]


def _report(student: str, chapter: str, *exercise_ids: str) -> dict:
    exercises = [{"id": i, "points": 1, "status": "passed"} for i in exercise_ids]
    report = {"student": student, "submission": f"{student}.ipynb", "chapter": chapter, "problems": []}
    return {**report, "status": "graded", "score": 2, "max_score": 2, "exercises": exercises}


def test_exercise_columns_follow_the_chapters_whoever_is_listed(tmp_path):
    """The columns followed the first report listing each exercise: a new student reordered them."""
    reports = [
        _report("amy", "ch04", "ch04.add_grad", "ch04.dependencies"),
        _report("bob", "ch03", "ch03.div", "ch03.mul"),
        _report("cat", "ch02", "ch02.describe", "ch99.unknown", "ch02.make_param"),
    ]
    expected = ["ch02.make_param", "ch02.describe", "ch03.mul", "ch03.div", "ch04.dependencies"]
    expected += ["ch04.add_grad", "ch99.unknown"]
    for order in (reports, reports[::-1], reports[1:]):
        write_summary(order, tmp_path / "summary.csv")
        with open(tmp_path / "summary.csv", newline="", encoding="utf-8-sig") as f:
            columns = next(csv.reader(f))[7:-2]  # between max_score and "look at"
        assert columns == [i for i in expected if any(i in str(r) for r in order)]


def test_accented_names_survive_the_summary(tmp_path):
    folder = "Zoë Ångström_123456_assignsubmission_file_"  # Moodle's bulk download
    paths = [_unreadable(tmp_path / folder / CH03), _unreadable(tmp_path / "bob" / CH03)]
    grade_class(paths, tmp_path / "grades", progress=False)
    summary = tmp_path / "grades" / "summary.csv"
    assert summary.read_bytes().startswith(b"\xef\xbb\xbfstudent,")  # the BOM spreadsheets look for
    # in alphabetical order whatever the case (Python's own order puts every capital before "bob")
    assert [row["student"] for row in _rows(summary)] == ["bob", "Zoë Ångström"]


def test_students_are_listed_in_natural_order(tmp_path):
    """student10 came before student2, as in a plain sort of the names."""
    reports = [_report(name, "ch03", "ch03.mul") for name in ("student10", "Student2", "bob", "student1")]
    write_summary(reports, tmp_path / "summary.csv")
    assert [row["student"] for row in _rows(tmp_path / "summary.csv")] == [
        "bob",
        "student1",
        "Student2",
        "student10",
    ]


def test_a_name_a_spreadsheet_would_run_as_a_formula_is_kept_as_text(tmp_path):
    """A file named =HYPERLINK(...).ipynb put a live formula into the instructor's spreadsheet."""
    evil = _report('=HYPERLINK("http://x","y")', "ch03", "ch03.mul")
    evil["problems"] = ["-1+2 from a student's error message", "@SUM(A1)"]
    plain = _report("-dash", "ch03", "ch03.mul")
    write_summary([evil, plain, _report("ann", "ch03", "ch03.mul")], tmp_path / "summary.csv")
    rows = {row["student"]: row for row in _rows(tmp_path / "summary.csv")}
    assert set(rows) == {'\'=HYPERLINK("http://x","y")', "'-dash", "ann"}
    assert rows['\'=HYPERLINK("http://x","y")']["notes"] == "'-1+2 from a student's error message; @SUM(A1)"
    assert rows["'-dash"]["submission"] == "'-dash.ipynb" and rows["ann"]["submission"] == "ann.ipynb"
    assert rows["ann"]["score"] == "2", "numbers stay numbers"


def test_two_submissions_of_one_chapter_by_one_student_are_named(tmp_path):
    first, second = _report("amy", "ch03", "ch03.mul"), _report("amy", "ch03", "ch03.mul")
    second["submission"] = "amy.final.ipynb"
    other = _report("amy", "ch04", "ch04.add_grad")
    write_summary([first, second, other, _report("bob", "ch03", "ch03.mul")], tmp_path / "summary.csv")
    look_at = [(row["submission"], row["look at"]) for row in _rows(tmp_path / "summary.csv")]
    twice = "one of 2 submissions of ch03 by this student (also {})"
    assert look_at == [
        ("amy.final.ipynb", twice.format("amy.ipynb")),
        ("amy.ipynb", twice.format("amy.final.ipynb")),
        ("amy.ipynb", ""),
        ("bob.ipynb", ""),
    ]


def test_a_run_for_one_chapter_leaves_another_chapters_graded_report_alone(tmp_path, capsys):
    """grade submissions/*/*.ipynb --chapter ch03 over a folder of every chapter's files turned the
    graded ch05 reports into wrong_chapter ones, with exit status 0."""
    ch05 = _unreadable(tmp_path / "sub" / "alice" / "05_gradients_of_operations.ipynb")
    ch03 = _unreadable(tmp_path / "sub" / "alice" / CH03)
    assert main(["grade", str(ch05), "--report", str(tmp_path / "grades"), "--no-progress"]) == 0
    saved = tmp_path / "grades" / "alice" / f"{ch05.stem}.json"
    report = json.loads(saved.read_text())
    report.update(status="graded", chapter="ch05", score=5)  # as a kernel run would have left it
    saved.write_text(json.dumps(report))
    args = ["grade", str(ch03), str(ch05), "--chapter", "ch03", "--report", str(tmp_path / "grades")]
    assert main([*args, "--no-progress", "--force"]) == 0
    assert json.loads(saved.read_text())["status"] == "graded"
    assert "left 1 file(s) graded as ch05 as they were: not the notebook of ch03" in capsys.readouterr().out
    rows = {row["chapter"]: row for row in _rows(tmp_path / "grades" / "summary.csv")}
    assert rows["ch05"]["status"] == "graded" and rows["ch03"]["status"] == "unreadable"
    ch05.write_text("changed since")  # another file now: graded again
    assert main([*args, "--no-progress"]) == 0
    assert json.loads(saved.read_text())["status"] == "unreadable"


def test_a_file_canvas_marked_late_says_so_in_its_reports_and_the_summary(tmp_path):
    """Canvas's _late_ in a file's name showed only in its path."""
    late = _unreadable(tmp_path / "canvas" / "hw3" / f"smithalice_LATE_123456_7891011_{CH03}")
    on_time = _unreadable(tmp_path / "canvas" / "hw3" / f"jonesbob_123456_7891011_{CH03}")
    grade_class([late, on_time], tmp_path / "grades", progress=False)
    rows = {row["student"]: row for row in _rows(tmp_path / "grades" / "summary.csv")}
    assert (rows["smithalice"]["late"], rows["jonesbob"]["late"]) == ("yes", "")
    for suffix in (".md", ".html"):
        assert "Late: yes" in (tmp_path / "grades" / "hw3" / (Path(late.name).stem + suffix)).read_text()
        assert "Late:" not in (tmp_path / "grades" / "hw3" / (Path(on_time.name).stem + suffix)).read_text()


def test_the_html_report_names_what_the_markdown_report_names(tmp_path):
    """The .html left out the grade_id of a cell that raised, which the .md gave."""
    report = _report("amy", "ch03", "ch03.mul")
    report["exercises"][0].update(title="Mul", max_points=2, reason="")
    report["late"] = True
    report["cell_errors"] = [{"cell": 4, "grade_id": "ch03_mul", "status": "error", "error": "NameError: x"}]
    md, page = markdown(report), to_html(report)
    assert "- cell 5 (counting from 1), grade_id `ch03_mul`: error: `NameError: x`" in md
    assert "<li>cell 5 (counting from 1), grade_id <code>ch03_mul</code>: error:" in page
    assert "Submission: `amy.ipynb`" in md and "Submission: <code>amy.ipynb</code>" in page
    for field in ("Status: graded", "Late: yes", "amy, ch03: 2 / 2 points"):
        assert field in md and field in page


def test_deleting_a_report_json_drops_its_md_and_html_at_the_next_run(tmp_path, capsys):
    """A .json deleted to drop a submission (or grade it again) left its .md and .html behind, to be
    sent to the student as if graded."""
    paths = [_unreadable(tmp_path / "sub" / name / CH03) for name in ("alice", "bob", "carol")]
    grades = tmp_path / "grades"
    grade_class(paths, grades, progress=False)
    (grades / "bob" / "notes.md").write_text("# my notes on bob\n")  # the instructor's own file
    (grades / "alice" / f"{Path(CH03).stem}.json").unlink()  # to be graded again
    (grades / "bob" / f"{Path(CH03).stem}.json").unlink()  # to be dropped
    capsys.readouterr()
    grade_class(paths[::2], grades, progress=False)
    left = sorted(p.relative_to(grades).as_posix() for p in grades.rglob("*") if p.is_file())
    stem = Path(CH03).stem
    expected = [f"{who}/{stem}{suffix}" for who in ("alice", "carol") for suffix in (".html", ".json", ".md")]
    assert left == sorted([".submissions-root", "bob/notes.md", "summary.csv", *expected])
    assert [row["student"] for row in _rows(grades / "summary.csv")] == ["alice", "carol"]
    err = capsys.readouterr().err
    assert "removed the .md and .html reports of 1 submission(s) whose .json is gone" in err
    assert str(grades / "bob" / stem) in err


CSV_WRITER = csv.writer


class _StoppedAfterTheHeader:
    """A csv writer that writes the header, then is stopped (as by a SIGTERM) before the rows."""

    def __init__(self, f: object) -> None:
        self.writer, self.written = CSV_WRITER(f), 0

    def writerow(self, row: list) -> None:
        if self.written:
            raise Stopped("stopped by signal 15")
        self.writer.writerow(row)
        self.written += 1

    def writerows(self, rows: list) -> None:
        for row in rows:
            self.writerow(row)


def test_a_summary_stopped_half_written_leaves_the_last_one_whole(tmp_path, monkeypatch):
    """A stop while summary.csv was written left it truncated: the header, and no row."""
    summary = tmp_path / "summary.csv"
    write_summary([_report("amy", "ch03", "ch03.mul")], summary)
    before = summary.read_bytes()
    monkeypatch.setattr(report_module.csv, "writer", _StoppedAfterTheHeader)
    with pytest.raises(Stopped):
        write_summary([_report("amy", "ch03", "ch03.mul"), _report("bob", "ch03", "ch03.mul")], summary)
    assert summary.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.csv"]  # no summary.csv.partial left


SIGTERM_WHILE_SUMMING_UP = """
import os, signal, sys
from pathlib import Path
from varfunc.grading import report
from varfunc.grading.batch import grade_class

shown = report._as_text
def as_text(value):  # a scheduler's SIGTERM arrives while grade writes summary.csv
    os.kill(os.getpid(), signal.SIGTERM)
    return shown(value)
report._as_text = as_text
grade_class([Path(sys.argv[2])], Path(sys.argv[1]), progress=False)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_sigterm_while_the_summary_is_written_stops_grade_and_keeps_the_last_summary(tmp_path):
    """write_summary ran outside stop_on_sigterm: SIGTERM killed grade and left summary.csv empty."""
    path = _unreadable(tmp_path / "sub" / "alice" / CH03)
    grades = tmp_path / "grades"
    grade_class([path], grades, progress=False)
    before = (grades / "summary.csv").read_bytes()
    run = [sys.executable, "-c", SIGTERM_WHILE_SUMMING_UP, str(grades), str(path)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert done.returncode != -signal.SIGTERM, "killed by the signal, not stopped by grade"
    assert "Stopped: stopped by signal 15" in done.stderr
    assert (grades / "summary.csv").read_bytes() == before
    assert not (grades / "summary.csv.partial").exists()
