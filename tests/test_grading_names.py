"""The student a submission belongs to, from its folders and file name: every folder below the
submissions' common folder (``section1/alice``), Moodle's and Canvas's bulk-download names, and the
chapter of a Canvas file. No kernel is started here."""

from __future__ import annotations

from pathlib import Path

import pytest

from varfunc.grading.batch import report_bases
from varfunc.grading.grade import GradeOptions, expected_chapter
from varfunc.grading.names import is_late

CHAPTER = "03_functions_and_the_forward_graph.ipynb"
CANVAS = f"smithalice_123456_7891011_{CHAPTER}"


def _students(root: Path, *relative: str) -> list[str]:
    bases = report_bases([root / path for path in relative], root / "grades")
    return [student for _, student in bases.values()]


def test_students_in_sections_are_named_with_their_section(tmp_path):
    """section1/alice and section1/bob were both student "section1"."""
    paths = [f"section1/alice/{CHAPTER}", f"section1/bob/{CHAPTER}", f"section2/carol/{CHAPTER}"]
    assert _students(tmp_path, *paths) == ["section1/alice", "section1/bob", "section2/carol"]
    assert _students(tmp_path, *paths[:2]) == ["alice", "bob"]  # one section: its folder is the root


def test_the_reports_keep_the_folders_below_the_root(tmp_path):
    paths = [tmp_path / "s1" / "alice" / CHAPTER, tmp_path / "s2" / "alice" / CHAPTER]
    bases = report_bases(paths, tmp_path / "grades")
    assert [base for base, _ in bases.values()] == [
        tmp_path / "grades" / "s1" / "alice" / Path(CHAPTER).stem,
        tmp_path / "grades" / "s2" / "alice" / Path(CHAPTER).stem,
    ]


@pytest.mark.parametrize(
    "folder, student",
    [
        ("Alice Smith_123456_assignsubmission_file_", "Alice Smith"),
        ("Bob Jones_98_assignsubmission_onlinetext_", "Bob Jones"),
        ("Zoë Ångström_7_assignsubmission_file", "Zoë Ångström"),
        ("alice_2024", "alice_2024"),  # not Moodle's suffix: kept as it is
    ],
)
def test_moodle_folders_lose_the_suffix_of_the_bulk_download(tmp_path, folder, student):
    paths = [f"{folder}/{CHAPTER}", f"Carl Sagan_1_assignsubmission_file_/{CHAPTER}"]
    assert _students(tmp_path, *paths)[0] == student
    assert _students(tmp_path / "class", f"{folder}/{CHAPTER}") == [student]  # graded alone


@pytest.mark.parametrize(
    "name, student, late",
    [
        (CANVAS, "smithalice", False),
        (f"smithalice_late_123456_7891011_{CHAPTER}", "smithalice", True),
        (f"jonesbob_LATE_42_7_{CHAPTER}", "jonesbob", True),
        (f"late_1_2_{CHAPTER}", "late", False),  # a student named late, on time
        (f"latecomer_1_2_{CHAPTER}", "latecomer", False),
    ],
)
def test_canvas_files_are_named_by_the_part_before_the_numbers(tmp_path, name, student, late):
    assert _students(tmp_path, name, f"doecarol_1_2_{CHAPTER}")[0] == student
    assert expected_chapter(tmp_path / name, GradeOptions()) == "ch03"
    assert is_late(name) is late


def test_a_file_named_after_its_student_or_a_chapter_alone_keeps_its_name(tmp_path):
    assert _students(tmp_path, "class/alice.ipynb", "class/bob.ipynb") == ["alice", "bob"]
    chapters = [f"alice/{CHAPTER}", "alice/07_writing_your_own_function.ipynb"]
    assert _students(tmp_path, *chapters) == ["alice", "alice"]


def test_a_loose_chapter_file_in_a_class_folder_leaves_the_other_students_their_names(tmp_path):
    """One unrenamed chapter file in the class folder moved the root up: every loose file's student
    became the class folder ("sub2" for eve, smithalice and the unrenamed file alike)."""
    paths = [CHAPTER, f"Dan Smith_1_assignsubmission_file_/{CHAPTER}", CANVAS, "eve.ipynb"]
    assert _students(tmp_path / "sub2", *paths) == [Path(CHAPTER).stem, "Dan Smith", "smithalice", "eve"]


def test_a_canvas_file_is_its_student_in_an_assignment_folder_too(tmp_path):
    """Grading canvas/hw3/*.ipynb then canvas/hw4/*.ipynb into one folder renamed every student to
    hw3 and hw4: Canvas's names were read only for files right in the root."""
    hw4 = "smithalice_123456_7891099_04_the_execution_engine.ipynb"
    at_once = _students(tmp_path / "canvas", f"hw3/{CANVAS}", f"hw3/jonesbob_1_2_{CHAPTER}", f"hw4/{hw4}")
    assert at_once == ["smithalice", "jonesbob", "smithalice"]
    assert _students(tmp_path / "canvas", f"hw3/{CANVAS}", f"hw3/jonesbob_1_2_{CHAPTER}") == at_once[:2]
    assert _students(tmp_path / "canvas", f"section1/hw4/{hw4}") == ["smithalice"]
    bases = report_bases([tmp_path / "canvas" / "hw3" / CANVAS], tmp_path / "grades", tmp_path / "canvas")
    assert [base for base, _ in bases.values()] == [tmp_path / "grades" / "hw3" / Path(CANVAS).stem]


@pytest.mark.parametrize(
    "names", [("hw3.ipynb", "hw3.final.ipynb"), ("03_x.v1.ipynb", "03_x.v2.ipynb"), ("a.b", "a.c")]
)
def test_names_that_differ_after_a_dot_get_reports_of_their_own(tmp_path, names):
    """hw3.ipynb and hw3.final.ipynb shared grades/alice/hw3.json: each run graded both again, each
    overwriting the other's report."""
    from varfunc.grading.report import write_reports

    bases = report_bases([tmp_path / "alice" / name for name in names], tmp_path / "grades")
    assert [base.name for base, _ in bases.values()] == [name.removesuffix(".ipynb") for name in names]
    for path, (base, _) in bases.items():
        report = {"submission": str(path), "status": "unreadable", "score": 0, "max_score": 0}
        write_reports({**report, "problems": [], "exercises": []}, base)
    written = sorted(p.name for p in (tmp_path / "grades").rglob("*") if p.is_file())
    assert written == sorted(
        base.name + kind for base, _ in bases.values() for kind in (".json", ".md", ".html")
    )


def test_both_reports_are_kept_and_resumed(tmp_path):
    pytest.importorskip("nbformat")
    from varfunc.grading.batch import grade_class

    paths = [tmp_path / "submissions" / "alice" / name for name in ("hw3.ipynb", "hw3.final.ipynb")]
    paths.append(tmp_path / "submissions" / "bob" / "hw3.ipynb")
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"not json: {path.name}")  # unreadable: graded without a kernel
    grade_class(paths, tmp_path / "grades", progress=False)
    again = grade_class(paths, tmp_path / "grades", progress=False)
    assert [r.get("resumed") for r in again] == [True, True, True]
    written = sorted(p.name for p in (tmp_path / "grades" / "alice").iterdir())
    assert written == [
        f"hw3.{kind}" for kind in ("final.html", "final.json", "final.md", "html", "json", "md")
    ]
