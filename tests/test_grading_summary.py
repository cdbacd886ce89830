"""The class summary lists every submission with a report in the report folder, whichever run graded
it (grading ch03, then ch04 into the same folder kept only ch04), and is UTF-8 with a byte order mark
so that spreadsheet programs show accented names right. The submissions here are not notebooks: they
are graded without a kernel."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.report import class_reports, saved_reports  # noqa: E402

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
    saved = saved_reports(tmp_path / "grades")
    this_run = [{**saved[0], "score": 99}]
    assert [r["score"] for r in class_reports(tmp_path / "grades", this_run)] == [99]  # this run's wins


def test_accented_names_survive_the_summary(tmp_path):
    folder = "Zoë Ångström_123456_assignsubmission_file_"  # Moodle's bulk download
    paths = [_unreadable(tmp_path / folder / CH03), _unreadable(tmp_path / "bob" / CH03)]
    grade_class(paths, tmp_path / "grades", progress=False)
    summary = tmp_path / "grades" / "summary.csv"
    assert summary.read_bytes().startswith(b"\xef\xbb\xbfstudent,")  # the BOM spreadsheets look for
    # in alphabetical order whatever the case (Python's own order puts every capital before "bob")
    assert [row["student"] for row in _rows(summary)] == ["bob", "Zoë Ångström"]
