"""The instructor's mistakes are refused before anything is graded (a missing --source folder, an
unknown --chapter, a time limit that is not positive), a change to the checks' code grades everything
again, and reports name cells and chapters the way a student finds them. No kernel is started here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from varfunc.grading import options  # noqa: E402
from varfunc.grading.__main__ import main, parser  # noqa: E402
from varfunc.grading.batch import grade_class, up_to_date  # noqa: E402
from varfunc.grading.grade import GradeOptions, cell_index, grade_submission  # noqa: E402
from varfunc.grading.report import markdown, to_html  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAME = "03_functions_and_the_forward_graph.ipynb"


@pytest.fixture
def unreadable(tmp_path):
    """A submission that is graded without a kernel: it is not a notebook."""
    path = tmp_path / "alice" / NAME
    path.parent.mkdir()
    path.write_text("not json")
    return path


@pytest.mark.parametrize(
    "flags, why",
    [
        (["--source", "nothere/"], "--source nothere: no such folder"),
        (["--source", "."], "holds no notebooks (.ipynb)"),
        (["--hidden", "no_such_checks.py"], "--hidden no_such_checks.py: no such file; --hidden takes a"),
        (["--hidden", "."], "--hidden .: is a folder; --hidden takes a Python file (.py) of @hidden_check"),
        (["--hidden", "x.py"], "(README.md, 'Visible and hidden checks', shows one)"),
        (["--chapter", "ch3"], "--chapter 'ch3' is not a chapter with exercises: use one of ch02, ch03,"),
        (["--chapter", "03"], "--chapter '03' is not a chapter"),
        (["--timeout", "-1"], "--timeout must be a positive number of seconds, not -1.0"),
        (["--timeout", "nan"], "--timeout must be a positive number of seconds"),
        (["--notebook-timeout", "0"], "--notebook-timeout must be a positive number of seconds, not 0.0"),
        (["--jobs", "0"], "--jobs must be 1 or more (submissions graded at once), not 0"),
        (["--memory", "0.1"], "--memory 0.1 GiB is too little for a kernel with NumPy and varfunc loaded"),
        (["--memory", "-2"], "--memory -2 GiB is too little"),
        (["--memory", "inf"], "--memory must be a number of GiB (0: no limit), not inf"),
        (["--max-output", "-1"], "--max-output must be a number of MiB, 0 or more (0: no limit), not -1.0"),
        (["--max-output", "nan"], "--max-output must be a number of MiB, 0 or more"),
    ],
)
def test_grade_refuses_a_wrong_setting_before_grading(unreadable, tmp_path, capsys, monkeypatch, flags, why):
    monkeypatch.chdir(tmp_path)  # "." holds no notebooks
    report = tmp_path / "report"
    assert main(["grade", str(unreadable), "--report", str(report), "--no-progress", *flags]) == 2
    assert why in capsys.readouterr().err
    assert not report.exists()


def test_grade_refuses_a_report_folder_that_is_a_file(unreadable, tmp_path, capsys):
    report = tmp_path / "grades.csv"
    report.write_text("kept")
    assert main(["grade", str(unreadable), "--report", str(report), "--no-progress"]) == 2
    assert f"--report {report} is a file; pass a folder" in capsys.readouterr().err
    assert report.read_text() == "kept"


def test_every_chapter_with_exercises_is_known():
    assert options.known_chapters() == [f"ch{n:02d}" for n in range(2, 11)]
    assert GradeOptions(chapter="ch03", source=NOTEBOOKS).chapter == "ch03"


def test_a_change_to_the_checks_code_grades_everything_again(unreadable, tmp_path, monkeypatch):
    checks = tmp_path / "grading"
    shutil.copytree(options.GRADER_SOURCES, checks, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(options, "GRADER_SOURCES", checks)
    settings = GradeOptions(cell_timeout=8)
    grade_class([unreadable], tmp_path / "reports", settings, progress=False)
    base = tmp_path / "reports" / "alice" / unreadable.stem  # as in a class run
    assert up_to_date(unreadable, base, settings) is not None
    (checks / "ch03.py").write_text((checks / "ch03.py").read_text() + "\n# a fixed check\n")
    assert up_to_date(unreadable, base, settings) is None


def test_an_unreadable_file_takes_its_chapter_from_its_name(unreadable):
    report = grade_submission(unreadable, GradeOptions())
    assert (report["status"], report["chapter"], report["max_score"]) == ("unreadable", "ch03", 6)
    assert "alice, ch03: 0 / 6 points" in markdown({**report, "student": "alice"})
    missing = grade_submission(unreadable.with_name("03_gone.ipynb"), GradeOptions())
    assert (missing["status"], missing["chapter"]) == ("missing", "ch03")


def _report_with_a_cell_error(position) -> dict:
    error = {"cell": position, "grade_id": None, "status": "error", "error": "NameError: x"}
    return {
        "submission": "alice/03.ipynb",
        "chapter": "ch03",
        "score": 0,
        "max_score": 6,
        "status": "graded",
        "problems": [],
        "exercises": [],
        "cell_errors": [error],
    }


def test_reports_name_a_cell_by_its_number_counting_from_1():
    report = _report_with_a_cell_error(35)  # the JSON keeps the position in the notebook's cells
    assert "- cell 36 (counting from 1): error: `NameError: x`" in markdown(report)
    assert "<li>cell 36 (counting from 1): error:" in to_html(report)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1") for _ in range(3)])
    nb.cells[2].metadata["nbgrader"] = "oops"
    _, problems = cell_index(nb)
    assert len(problems) == 1 and problems[0].startswith("cell 3 (counting from 1) has damaged nbgrader")


def test_a_multi_line_error_stays_one_block_in_the_markdown_and_html_reports():
    report = _report_with_a_cell_error(0)
    report["cell_errors"][0]["error"] = "ValueError: first line\n# not a heading\n``` not a fence end"
    text = markdown(report)
    assert "\n  ````\n  ValueError: first line\n  # not a heading\n  ``` not a fence end\n  ````\n" in text
    report["exercises"] = [
        {
            "id": "ch03.mul",
            "title": "Mul",
            "points": 0,
            "max_points": 3,
            "status": "failed",
            "reason": "a\nb|c",
        }
    ]
    assert "| a<br>b\\|c |" in markdown(report)
    assert "code{white-space:pre-wrap}" in to_html(report)


def test_grade_without_the_kernel_packages_says_what_is_missing_before_grading(
    unreadable, tmp_path, capsys, monkeypatch
):
    # without them every submission got a grader error (0 points) and the command exited 0
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nbclient" else find_spec(name, *a)
    )
    assert main(["grade", str(unreadable), "--report", str(tmp_path / "r"), "--no-progress"]) == 2
    assert (
        "needs nbclient (the lab and test extras): run it in the kit's environment" in capsys.readouterr().err
    )
    assert not (tmp_path / "r").exists()


def test_the_student_is_named_after_the_folder_or_the_file(tmp_path):
    """A chapter graded alone from alice/ was reported as student '03_functions_...'."""
    from varfunc.grading.batch import report_bases

    chapter = tmp_path / "alice" / "03_functions_and_the_forward_graph.ipynb"
    own_name = tmp_path / "class" / "bob.ipynb"
    for paths, student in [
        ([chapter], "alice"),
        ([chapter, tmp_path / "alice" / "07_writing_your_own_function.ipynb"], "alice"),
        ([own_name], "bob"),
        ([chapter, tmp_path / "carol" / chapter.name], "alice"),
    ]:
        assert report_bases(paths, tmp_path / "grades")[paths[0]][1] == student


def test_the_chapter_help_says_where_the_chapter_comes_from_without_it():
    """It said "default: from the file name"; a file with another name falls back to the notebook's
    own exercise cells, so another chapter's notebook scores full marks for its own chapter."""
    from varfunc.grading.__main__ import parser

    grade = parser()._subparsers._group_actions[0].choices["grade"]
    text = " ".join(grade.format_help().split())
    assert "else the chapter of the notebook's own exercise cells" in text


def test_max_output_0_means_no_limit_and_is_accepted(unreadable, tmp_path):
    assert GradeOptions(max_output_mib=0).max_output_mib == 0
    assert GradeOptions(max_output_mib=0.5).max_output_mib == 0.5
    report = tmp_path / "report"
    assert (
        main(["grade", str(unreadable), "--report", str(report), "--no-progress", "--max-output", "0"]) != 2
    )
    assert report.is_dir()


def test_max_output_defaults_to_20_mib_in_the_options_and_on_the_command_line():
    grade = parser().parse_args(["grade", "x.ipynb", "--report", "r"])
    assert GradeOptions().max_output_mib == 20 == grade.max_output


def test_max_output_is_in_the_fingerprint_and_must_be_a_number():
    assert GradeOptions(max_output_mib=1).fingerprint() != GradeOptions(max_output_mib=20).fingerprint()
    for wrong in (True, False, "1", None, float("inf"), -0.5):
        with pytest.raises(ValueError, match="--max-output must be a number of MiB"):
            GradeOptions(max_output_mib=wrong)
