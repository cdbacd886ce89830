"""Small pieces of the grader, tested without a kernel: how outputs are counted against --max-output,
the list of kernels a stopped grading process kills, and which files in a report folder are the
grader's own views (the ones removed when their .json is gone)."""

from __future__ import annotations

import pytest

pytest.importorskip("nbclient")

from varfunc.grading import stopping  # noqa: E402
from varfunc.grading.kernels import text_size  # noqa: E402
from varfunc.grading.report import remove_orphaned_views  # noqa: E402


def test_text_size_counts_the_strings_in_lists_tuples_and_dicts():
    assert text_size({"traceback": ["ab", "c"]}) == 3
    assert text_size({"data": {"text/plain": ("abcd",)}, "n": 7}) == 4


def test_running_forgets_its_client_when_done_or_when_it_raised():
    client = object()
    with stopping.running(client):
        assert stopping._KERNELS == [client]
    assert stopping._KERNELS == []
    with pytest.raises(ValueError), stopping.running(client):
        raise ValueError("the cell failed")
    assert stopping._KERNELS == []


def test_only_the_graders_own_views_are_removed_when_their_json_is_gone(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_bytes("# Notes\n\nSubmission: `caf\xe9`\n".encode("latin-1"))  # not UTF-8
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><p>notes</p>\n", encoding="utf-8")
    assert remove_orphaned_views(tmp_path) == []
    assert notes.exists() and page.exists()
