"""Releasing student notebooks: solutions stubbed, hidden tests removed, outputs cleared, metadata kept,
the same bytes every time, the instructor notebooks untouched. No kernel is started here."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.notebook import (  # noqa: E402
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    END_SOLUTION,
    STUB,
    nbgrader_meta,
    solution_cells,
)
from varfunc.grading.release import hidden_tests, release, release_notebook, remove_hidden_tests  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _digests(folder: Path) -> dict:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


def _notebook_with_hidden_tests():
    nb = nbformat.v4.new_notebook()
    solution = nbformat.v4.new_code_cell(
        f"def double(x):\n    {BEGIN_SOLUTION}\n    return 2 * x\n    {END_SOLUTION}\n"
    )
    solution.metadata["nbgrader"] = {"grade_id": "ch99_double", "solution": True, "grade": False}
    check = nbformat.v4.new_code_cell(
        f'check("ch99.double")\n{BEGIN_HIDDEN}\nassert double(21) == 42\n### END HIDDEN TESTS\n'
    )
    check.metadata["nbgrader"] = {"grade_id": "ch99_double_check", "grade": True, "points": 1}
    answer = nbformat.v4.new_markdown_cell(f"Why?\n\n{BEGIN_SOLUTION}\nBecause.\n{END_SOLUTION}\n")
    answer.metadata["nbgrader"] = {"grade_id": "ch99_why", "solution": True, "grade": True, "points": 1}
    nb.cells = [solution, check, answer]
    return nb


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_release_stubs_solutions_clears_outputs_and_keeps_metadata(path):
    nb = nbformat.read(path, as_version=4)
    released, summary = release_notebook(nb)
    assert len(released.cells) == len(nb.cells)
    assert summary.stubbed == len(solution_cells(nb))
    for before, after in zip(nb.cells, released.cells):
        assert after.get("id") == before.get("id")
        assert nbgrader_meta(after) == nbgrader_meta(before)
        assert BEGIN_SOLUTION not in after.source and BEGIN_HIDDEN not in after.source
        if after.cell_type == "code":
            assert after.outputs == [] and after.execution_count is None
            assert "execution" not in after.metadata
        if nbgrader_meta(after).get("solution"):
            assert STUB in after.source
        else:
            assert after.source == before.source
    assert released.metadata == {k: v for k, v in nb.metadata.items() if k != "widgets"}
    nbformat.validate(released)


def test_hidden_test_regions_are_removed_and_markdown_answers_stubbed():
    released, summary = release_notebook(_notebook_with_hidden_tests())
    solution, check, answer = released.cells
    assert solution.source == f"def double(x):\n    {STUB}\n"
    assert check.source == 'check("ch99.double")'
    assert answer.source == "Why?\n\nYOUR ANSWER HERE\n"
    assert (summary.stubbed, summary.hidden_removed) == (2, 1)


def test_hidden_tests_gives_the_code_inside_the_regions():
    source = f"check('x')\n{BEGIN_HIDDEN}\nassert f(1) == 2\nassert f(2) == 4\n### END HIDDEN TESTS\n"
    assert hidden_tests(source) == "assert f(1) == 2\nassert f(2) == 4"
    assert remove_hidden_tests(source) == "check('x')\n"
    assert hidden_tests("check('x')\n") == ""


def test_release_is_deterministic_and_leaves_the_source_alone(tmp_path):
    before = _digests(NOTEBOOKS)
    release(NOTEBOOKS, tmp_path / "a")
    release(NOTEBOOKS, tmp_path / "b")
    assert _digests(NOTEBOOKS) == before
    first, second = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert first == second
    assert {p.name for p in CHAPTERS} <= set(first)
    assert "README.md" in first  # files next to the notebooks come along


def test_release_refuses_to_overwrite_the_source(tmp_path):
    with pytest.raises(ValueError, match="must differ"):
        release(NOTEBOOKS, NOTEBOOKS)


def test_release_command_line(tmp_path, capsys):
    assert main(["release", str(NOTEBOOKS), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"released {len(list(NOTEBOOKS.glob('*.ipynb')))} notebook(s)" in out
    released = nbformat.read(tmp_path / "out" / CHAPTERS[3].name, as_version=4)
    assert all(not c.get("outputs") for c in released.cells)
    assert main(["release", str(tmp_path / "nowhere"), str(tmp_path / "x")]) == 2


def test_release_refuses_to_overwrite_a_single_source_notebook(tmp_path):
    copy = tmp_path / CHAPTERS[3].name
    copy.write_bytes(CHAPTERS[3].read_bytes())
    with pytest.raises(ValueError, match="would overwrite the source notebook"):
        release(copy, copy)
    with pytest.raises(ValueError, match="would overwrite the source notebook"):
        release(copy, tmp_path)
    assert copy.read_bytes() == CHAPTERS[3].read_bytes()


def test_release_releases_notebooks_in_subfolders_too(tmp_path):
    source = tmp_path / "course"
    (source / "extra").mkdir(parents=True)
    (source / CHAPTERS[3].name).write_bytes(CHAPTERS[3].read_bytes())
    (source / "extra" / CHAPTERS[3].name).write_bytes(CHAPTERS[3].read_bytes())
    (source / "extra" / "data.txt").write_text("kept")
    (source / "extra" / "broken.ipynb").write_text("not json")
    with pytest.raises(ValueError, match=r"broken.ipynb is not a readable notebook"):
        release(source, tmp_path / "out")
    (source / "extra" / "broken.ipynb").unlink()
    summaries = release(source, tmp_path / "out")
    assert len(summaries) == 2
    nested = (tmp_path / "out" / "extra" / CHAPTERS[3].name).read_text()
    assert BEGIN_SOLUTION not in nested and (tmp_path / "out" / "extra" / "data.txt").read_text() == "kept"


def test_grade_command_refuses_a_folder_or_a_missing_path(tmp_path, capsys):
    report = str(tmp_path / "report")
    assert main(["grade", str(tmp_path), "--report", report, "--no-progress"]) == 2
    assert f"is a folder; pass the notebooks in it, e.g. {tmp_path}/*.ipynb" in capsys.readouterr().err
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "03_x.ipynb").write_text("{}")  # a folder per student, as Moodle's download
    assert main(["grade", str(tmp_path), "--report", report, "--no-progress"]) == 2
    assert f"pass the notebooks in it, e.g. {tmp_path}/*/*.ipynb" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "none*.ipynb"), "--report", report, "--no-progress"]) == 2
    assert "no submission at" in capsys.readouterr().err
    assert not (tmp_path / "report").exists()


def test_release_drops_the_saved_widget_state():
    """Chapter 04 saves its widgets' state with the notebook: an HTML widget there shows an answer."""
    answer = {"model_name": "HTMLModel", "state": {"value": "<b>the answer: 42</b>"}}
    widgets = {"application/vnd.jupyter.widget-state+json": {"state": {"abc": answer}, "version_major": 2}}
    nb = {"cells": [], "metadata": {"kernelspec": {"name": "python3"}, "widgets": widgets}}
    released, _ = release_notebook(nb)
    assert released["metadata"] == {"kernelspec": {"name": "python3"}}
    assert "widgets" in nb["metadata"]  # the instructor's notebook is left alone


def test_the_released_chapter_04_holds_no_widget_state(tmp_path):
    chapter = NOTEBOOKS / "04_the_execution_engine.ipynb"
    assert "widgets" in nbformat.read(chapter, as_version=4).metadata  # what there is to drop
    release(chapter, tmp_path)
    text = (tmp_path / chapter.name).read_text()
    assert "widget-state" not in text and "HTMLModel" not in text


def _course(tmp_path: Path) -> Path:
    """A folder to release: chapter 03's notebook (as 03_third.ipynb) and a data file."""
    source = tmp_path / "course"
    source.mkdir()
    (source / "03_third.ipynb").write_bytes(CHAPTERS[3].read_bytes())
    (source / "data.txt").write_text("kept")
    return source


@pytest.mark.parametrize(
    "cell, edit, words",
    [
        (
            0,
            ("### END SOLUTION", "### END SOLUTON"),
            r"keeps the line '### BEGIN SOLUTION'.*without its end marker",
        ),
        (1, ("### END HIDDEN TESTS", "### END HIDDEN TEST"), r"keeps the line '### BEGIN HIDDEN TESTS'"),
        (1, ("### BEGIN HIDDEN TESTS", "### BEGIN HIDDEN TEST"), r"keeps the line '### BEGIN HIDDEN TEST'"),
    ],
)
def test_a_misspelt_or_unended_marker_stops_the_release(tmp_path, cell, edit, words):
    # the answer or the hidden test would ship: nbgrader refuses an unended region too
    nb = _notebook_with_hidden_tests()
    nb.cells[cell].source = nb.cells[cell].source.replace(*edit)
    path = tmp_path / "99_double.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(
        ValueError, match=rf"nothing was written: \S*99_double.ipynb: cell {cell + 1} .*{words}"
    ):
        release(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_solution_region_outside_a_solution_cell_stops_the_release():
    nb = _notebook_with_hidden_tests()
    del nb.cells[0].metadata["nbgrader"]
    with pytest.raises(
        ValueError, match="cell 1 (.*) keeps the line '### BEGIN SOLUTION'.*not a solution cell"
    ):
        release_notebook(nb)


@pytest.mark.parametrize(
    "bad, words",
    [
        (
            {"01_first.ipynb": CHAPTERS[3].read_text(), "02_damaged.ipynb": '{"cells": ['},
            r"\S*02_damaged.ipynb is not a readable notebook",
        ),
        (
            {"my_checks.py": "from varfunc.grading.hidden import hidden_check\n"},
            r"\S*my_checks.py holds hidden checks .* would be copied to the students",
        ),
    ],
    ids=["damaged notebook", "hidden checks"],
)
def test_a_bad_file_in_the_folder_stops_the_release_before_anything_is_written(tmp_path, bad, words):
    source, out = _course(tmp_path), tmp_path / "out"
    for name, text in bad.items():
        (source / name).write_text(text)
    with pytest.raises(ValueError, match="nothing was written: " + words):
        release(source, out)
    assert not out.exists()
    assert main(["release", str(source), str(out)]) == 2
    assert not out.exists()


def test_release_lists_the_other_files_it_copies(tmp_path, capsys):
    assert main(["release", str(_course(tmp_path)), str(tmp_path / "out")]) == 0
    assert "copied 1 other file(s): data.txt" in capsys.readouterr().out


README = """# Course
Open the chapters in order.
<!-- BEGIN INSTRUCTOR ONLY -->
The solutions are in place in these copies.
<!-- END INSTRUCTOR ONLY -->
Each exercise checks itself.
"""


def test_markdown_loses_its_instructor_only_regions(tmp_path, capsys):
    source, out = _course(tmp_path), tmp_path / "out"
    (source / "README.md").write_text(README)
    assert main(["release", str(source), str(out)]) == 0
    released = (out / "README.md").read_text()
    assert released == "# Course\nOpen the chapters in order.\nEach exercise checks itself.\n"
    assert "README.md (instructor-only regions removed), data.txt" in capsys.readouterr().out
    assert (source / "README.md").read_text() == README, "the source is only read"


@pytest.mark.parametrize(
    "edit",
    [("<!-- END INSTRUCTOR ONLY -->\n", ""), ("END INSTRUCTOR ONLY", "END INSTRUCTORS ONLY")],
    ids=["unended", "misspelt"],
)
def test_an_unended_instructor_region_stops_the_release(tmp_path, edit):
    source, out = _course(tmp_path), tmp_path / "out"
    (source / "README.md").write_text(README.replace(*edit))
    words = r"nothing was written: \S*README.md keeps the line '<!-- BEGIN INSTRUCTOR"
    with pytest.raises(ValueError, match=words):
        release(source, out)
    assert not out.exists()


def test_the_chapters_readme_tells_students_what_their_copy_is(tmp_path):
    """notebooks/README.md's instructor text (solutions in place, how outputs are stored) stays behind."""
    release(CHAPTERS[3].parent, tmp_path / "student")
    released = (tmp_path / "student" / "README.md").read_text()
    assert "exercise solutions are in place" not in released and "nbval" not in released
    assert "NotImplementedError" in released and "| 10 |" in released


def test_the_command_piped_into_a_reader_that_stops_early_ends_without_a_traceback(tmp_path):
    import subprocess
    import sys

    command = [sys.executable, "-m", "varfunc.grading", "release", str(CHAPTERS[0]), str(tmp_path / "out")]
    reader = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # as `... | head -0` does: every print meets a closed pipe
    stderr = reader.stderr.read().decode()
    assert reader.wait(timeout=60) == 1 and "Traceback" not in stderr, stderr
    assert (tmp_path / "out" / CHAPTERS[0].name).exists()  # the work itself was done
