"""A class folder as the learning platforms hand it out, graded the way the README says: every
notebook below it (``submissions/**/*.ipynb``), Canvas's files right in it and in folders alike; and
what the command says at the end: grader errors and unreadable files counted, and an exit status of 1
when the grader failed on a submission (it was 0). The submissions here are not notebooks: they are
graded without a kernel."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

from varfunc.grading import batch  # noqa: E402
from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.grade import failed_report  # noqa: E402
from varfunc.grading.report import write_reports, write_summary  # noqa: E402

CH03 = "03_functions_and_the_forward_graph.ipynb"
CLASS = [
    f"alice/{CH03}",
    f"Bob Jones_42_assignsubmission_file_/{CH03}",
    f"smithcarol_123456_7891011_{CH03}",  # Canvas, right in the class folder
    f"late/jonesdan_late_123457_7891012_{CH03}",  # Canvas, in a folder of its own
]


def _class(root: Path) -> list[Path]:
    for relative in CLASS:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("not json")
    return sorted(root.glob("**/*.ipynb"))  # what bash gives for submissions/**/*.ipynb (globstar)


def _rows(report: Path) -> list[dict]:
    with open(report / "summary.csv", newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def test_every_notebook_below_the_class_folder_gets_its_students_name(tmp_path, capsys):
    paths = _class(tmp_path / "submissions")
    assert len(paths) == len(CLASS)
    report = tmp_path / "grades"
    assert (
        main(["grade", *map(str, paths), "--chapter", "ch03", "--report", str(report), "--no-progress"]) == 0
    )
    students = [row["student"] for row in _rows(report)]  # in the order of their names
    assert students == ["alice", "Bob Jones", "jonesdan", "smithcarol"]
    assert (report / "late" / f"jonesdan_late_123457_7891012_{Path(CH03).stem}.json").is_file()
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"reports in {report} (summary.csv, and a .json, .md and .html per submission)")
    assert "0 grader error(s), 4 unreadable file(s) (their status in summary.csv, the why in" in last


def _grader_fails(todo: list, options: object, jobs: int):
    """batch._graded as it goes when the grader fails on every submission."""
    for path, (base, student) in todo:
        report = failed_report(path, options, "grader_error", "the grader failed on this file: boom")
        write_reports({**report, "student": student}, base)
        yield {**report, "student": student}


def test_a_grader_error_makes_the_exit_status_1_and_is_counted(tmp_path, monkeypatch, capsys):
    alice, bob = (tmp_path / "submissions" / name / CH03 for name in ("alice", "bob"))
    for path in (alice, bob):
        path.parent.mkdir(parents=True)
        path.write_text("not json")
    report = str(tmp_path / "grades")
    assert main(["grade", str(alice), "--report", report, "--no-progress"]) == 0
    monkeypatch.setattr(batch, "_graded", _grader_fails)
    capsys.readouterr()
    assert main(["grade", str(alice), str(bob), "--report", report, "--no-progress"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert "1 grader error(s), 1 unreadable file(s)" in last  # alice's unreadable file, resumed
    assert "a grader error is on the grader's side: run the command again to retry them" in last
    assert {row["student"]: row["status"] for row in _rows(tmp_path / "grades")} == {
        "alice": "unreadable",
        "bob": "grader_error",
    }


def test_a_submission_that_writes_into_the_kit_is_reported_and_exits_1(tmp_path, monkeypatch, capsys):
    """A cell that appended to varfunc/grading/ch03.py went unnoticed, and every later run regraded all."""
    from varfunc.grading import options

    kit = tmp_path / "kit"
    (kit / "grading").mkdir(parents=True)
    (kit / "grading" / "ch03.py").write_text("CHECKS = 1\n")
    monkeypatch.setattr(options, "KIT_SOURCES", kit)

    def graded_by_a_writer(todo: list, options: object, jobs: int):
        with open(kit / "grading" / "ch03.py", "a") as f:
            f.write("# was here\n")  # as a submission's cell could: the kit is installed editable
        for path, (base, student) in todo:  # graded as usual otherwise: no grader error
            report = {**failed_report(path, options, "unreadable", "not a notebook"), "student": student}
            write_reports(report, base)
            yield report

    monkeypatch.setattr(batch, "_graded", graded_by_a_writer)
    alice = tmp_path / "submissions" / "alice" / CH03
    alice.parent.mkdir(parents=True)
    alice.write_text("not json")
    assert main(["grade", str(alice), "--report", str(tmp_path / "grades"), "--no-progress"]) == 1
    warning = capsys.readouterr().err
    assert "the kit's files changed while this run graded: grading/ch03.py" in warning
    assert "run the command again: it grades those files again" in warning


def test_the_submission_graded_while_the_kit_changed_says_so_and_is_graded_again(tmp_path, monkeypatch):
    """The run's warning went to stderr only: its report said graded, and the next run skipped it."""
    from varfunc.grading import options

    kit = tmp_path / "kit"
    (kit / "grading").mkdir(parents=True)
    (kit / "grading" / "ch03.py").write_text("CHECKS = 1\n")
    monkeypatch.setattr(options, "KIT_SOURCES", kit)

    def graded_by_a_writer(path, options):
        with open(kit / "grading" / "ch03.py", "a") as f:
            f.write("# was here\n")
        return failed_report(path, options, "unreadable", "not a notebook")

    monkeypatch.setattr(batch, "grade_submission", graded_by_a_writer)
    alice = tmp_path / "submissions" / "alice" / CH03
    alice.parent.mkdir(parents=True)
    alice.write_text("not json")
    base = tmp_path / "grades" / "alice" / alice.stem
    report = batch.grade_and_write(alice, base, "alice", options.GradeOptions())
    assert report["kit_changed"] == ["grading/ch03.py"]
    assert any(
        "the kit's files changed while this file was graded (grading/ch03.py)" in p
        for p in report["problems"]
    )
    assert batch.up_to_date(alice, base, options.GradeOptions()) is None, "graded again by the next run"
    write_summary([report], tmp_path / "summary.csv")
    assert "the kit's files changed while it was graded" in (tmp_path / "summary.csv").read_text("utf-8-sig")
