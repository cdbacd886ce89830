"""Releasing again is safe: files already in the release folder (a student's notebook or README, a
linked copy) are not overwritten without --force, a file is no release folder, release folders inside
the source folder are left out, and a release holds copies of the files outside the source folder
that its links name."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.links import LinkedCopies, relinked  # noqa: E402
from varfunc.grading.release import release  # noqa: E402

CHAPTER = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("03_*.ipynb"))[0]


def _course(root: Path, markdown: str = "See [the docs](../docs/differences.md).") -> Path:
    """root/course/ (a chapter with a Markdown cell, a README) and root/docs/differences.md."""
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "differences.md").write_text("# Differences\n")
    source = root / "course"
    source.mkdir()
    nb = nbformat.read(CHAPTER, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(markdown))
    nbformat.write(nb, source / CHAPTER.name)
    (source / "README.md").write_text("[Differences](../docs/differences.md), [chapter](03_x.ipynb)\n")
    return source


def test_releasing_again_does_not_overwrite_a_students_work_without_force(tmp_path, capsys):
    source = _course(tmp_path)
    out = tmp_path / "student"
    assert main(["release", str(source), str(out)]) == 0
    work = out / CHAPTER.name
    work.write_text(work.read_text().replace("NotImplementedError", "print('my solution')"))
    solved = work.read_bytes()
    capsys.readouterr()
    assert main(["release", str(source), str(out)]) == 2
    err = capsys.readouterr().err
    assert "nothing was written" in err and str(work) in err and "--force" in err
    assert work.read_bytes() == solved
    with pytest.raises(ValueError, match="would be overwritten"):
        release(source / CHAPTER.name, out)  # one notebook too
    assert main(["release", "--force", str(source), str(out)]) == 0
    assert work.read_bytes() != solved


def test_releasing_again_does_not_overwrite_any_file_of_the_copy_without_force(tmp_path, capsys):
    """Only notebooks were refused: a README.md the student edited and the linked docs/differences.md
    were overwritten without a word, though the README says a release refuses to write over a copy."""
    source = _course(tmp_path)
    out = tmp_path / "student"
    release(source, out)
    (out / CHAPTER.name).unlink()  # the notebook is gone: only other files are in the way
    (out / "README.md").write_text("my notes")
    (out / "docs" / "differences.md").write_text("my notes too")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["release", str(source), str(out)]) == 2
    err = capsys.readouterr().err
    assert "nothing was written: 2 file(s) already there would be overwritten" in err
    assert str(out / "README.md") in err and str(out / "docs" / "differences.md") in err
    (out / "README.md").unlink()
    with pytest.raises(ValueError, match=r"1 file\(s\) already there .*differences.md"):
        release(source / CHAPTER.name, out)  # one notebook and the file it links to
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == {
        p: b for p, b in before.items() if p.name != "README.md"
    }
    assert main(["release", "--force", str(source), str(out)]) == 0
    assert (out / "docs" / "differences.md").read_text() == "# Differences\n"


def test_a_file_as_the_release_folder_is_refused(tmp_path, capsys):
    source = _course(tmp_path)
    target = tmp_path / "student.txt"
    target.write_text("not a folder")
    for what in (source, source / CHAPTER.name):
        assert main(["release", str(what), str(target)]) == 2
        assert "is a file, not a folder" in capsys.readouterr().err
    assert target.read_text() == "not a folder"


def test_release_folders_inside_the_source_folder_are_left_out(tmp_path):
    source = _course(tmp_path)
    release(source, source / "student_copy")  # a release into the source folder itself
    release(source, source / "deeper" / "student_copy")  # and one further down
    (source / "deeper" / "notes.txt").write_text("kept")
    release(source, tmp_path / "student")
    released = {p.relative_to(tmp_path / "student").as_posix() for p in (tmp_path / "student").rglob("*")}
    assert "student_copy" not in released and "deeper/student_copy" not in released
    assert {CHAPTER.name, "README.md", "deeper/notes.txt"} <= released


def _markdown_cells(path: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


@pytest.mark.parametrize("out", ["student", "a/b/student", "../elsewhere"])
def test_a_release_holds_the_files_its_links_leave_the_folder_for(tmp_path, out):
    """Before: the link was rewritten to lead back into the instructor's checkout
    (../../checkout/docs/differences.md from ../elsewhere), nowhere on a student's machine."""
    source = _course(tmp_path / "checkout")
    target = (tmp_path / "checkout" / out).resolve()
    release(source, target)
    for text in (_markdown_cells(target / CHAPTER.name), (target / "README.md").read_text()):
        link = text.split("](", 1)[1].split(")", 1)[0]
        assert link == "docs/differences.md", text
        assert (target / link).read_text() == "# Differences\n"
    assert "[chapter](03_x.ipynb)" in (target / "README.md").read_text()  # within the folder: kept
    moved = tmp_path / "handed_out"
    target.rename(moved)  # zipped and unpacked elsewhere: the links still lead somewhere
    assert (moved / "docs" / "differences.md").is_file()


def test_one_released_notebook_gets_its_linked_files_too(tmp_path):
    source = _course(tmp_path / "checkout")
    release(source / CHAPTER.name, tmp_path / "one")
    assert "(docs/differences.md)" in _markdown_cells(tmp_path / "one" / CHAPTER.name)
    assert (tmp_path / "one" / "docs" / "differences.md").is_file()


def test_relinked_keeps_web_anchor_inside_and_missing_links_and_copies_the_rest(tmp_path):
    text = (
        "[a](https://pytorch.org) [b](#top) [c](04_next.ipynb) [d](../README.md#setup 'title') "
        '<img src="../docs/fig.png">\n[ref]: ../docs/x.md\n[gone](../nothing.md) [far](../../far.md)\n'
    )
    source, out = tmp_path / "a" / "course", tmp_path / "x"
    source.mkdir(parents=True)
    (tmp_path / "a" / "docs").mkdir()
    for name in ("README.md", "docs/fig.png", "docs/x.md"):
        (tmp_path / "a" / name).write_text(name)
    (tmp_path / "far.md").write_text("far")
    copies = LinkedCopies(source, out)
    new = relinked(text, source, out / "y", source, copies)
    assert "[a](https://pytorch.org) [b](#top) [c](04_next.ipynb)" in new
    assert "[d](../README.md#setup 'title')" in new  # out/y/ -> out/README.md
    assert '<img src="../docs/fig.png">' in new and "[ref]: ../docs/x.md" in new
    assert "[gone](../nothing.md)" in new  # no such file: left as it was
    assert "[far](../linked/far.md)" in new  # above the source folder's parent: out/linked/
    copies.write()
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == {
        "README.md",
        "docs/fig.png",
        "docs/x.md",
        "linked/far.md",
    }
