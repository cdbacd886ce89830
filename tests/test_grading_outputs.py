"""A submission keeps at most --max-output MiB of outputs: a cell that prints without end filled the
grading process's memory. Past the limit its outputs are dropped, the verdicts of the grader's
runner cells kept (the points stay right), and the report says so, naming the cell."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from varfunc.grading.execute import execute  # noqa: E402
from varfunc.grading.grade import GradeOptions, grade_submission  # noqa: E402
from varfunc.grading.hidden import RUNNER_MARK, VERDICT_MIME  # noqa: E402
from varfunc.grading.kernels import text_size  # noqa: E402

pytestmark = pytest.mark.slow  # starts Jupyter kernels

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "notebooks" / "03_functions_and_the_forward_graph.ipynb"
LOUD = "for _ in range(8):\n    print('x' * 250_000, flush=True)\n"  # 2 million characters
LIMIT_MIB = 0.5
VERDICT = (
    f"{RUNNER_MARK} a runner\n"
    "from IPython.display import display\n"
    f"display({{{VERDICT_MIME!r}: {{'exercise': 'ch03.mul', 'passed': True}}}}, raw=True)\n"
)


def test_outputs_past_the_limit_are_dropped_but_not_the_verdicts(tmp_path):
    cells = [LOUD, VERDICT, "print('after')", "print('x' * 1000)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    runs = execute(nb, tmp_path, cell_timeout=30, notebook_timeout=60, max_output_mib=LIMIT_MIB)
    assert [run.status for run in runs] == ["ok"] * 4
    kept = sum(text_size(output) for run in runs for output in run.outputs)
    assert kept <= LIMIT_MIB * 2**20
    assert [run.cut for run in runs] == [True, False, True, True]
    assert [VERDICT_MIME in output.get("data", {}) for output in runs[1].outputs] == [True]


def test_a_loud_notebook_keeps_its_points_and_its_report_says_what_was_dropped(tmp_path):
    nb = copy.deepcopy(nbformat.read(SOURCE, as_version=4))
    nb.cells.insert(3, nbformat.v4.new_code_cell(LOUD))
    path = tmp_path / "alice" / SOURCE.name
    path.parent.mkdir()
    nbformat.write(nb, path)
    options = GradeOptions(cell_timeout=60, notebook_timeout=300, max_output_mib=LIMIT_MIB)
    report = grade_submission(path, options)
    assert report["score"] == report["max_score"] > 0, report["exercises"]
    note = (
        "the notebook's outputs passed the grader's limit of 0.5 MiB (--max-output): what cell 4 "
        "(counting from 1) and the cells after it printed or showed past it was dropped"
    )
    assert any(problem.startswith(note) for problem in report["problems"]), report["problems"]


def test_what_fits_the_limit_is_all_kept_and_only_a_runner_cells_verdict_passes_it(tmp_path):
    # 100 KB fits 0.5 MiB (a limit counted in KiB would cut it); a verdict a student's own cell
    # shows past the limit is dropped like any output: only the grader's runner cells get through
    fake = VERDICT.replace(RUNNER_MARK, "# not a runner")
    cells = ["print('y' * 100_000)", LOUD, fake, VERDICT]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    runs = execute(nb, tmp_path, cell_timeout=30, notebook_timeout=60, max_output_mib=LIMIT_MIB)
    assert [run.status for run in runs] == ["ok"] * 4
    assert [run.cut for run in runs] == [False, True, True, False]
    assert "".join(output["text"] for output in runs[0].outputs) == "y" * 100_000 + "\n"
    assert runs[2].outputs == []
    assert [VERDICT_MIME in output.get("data", {}) for output in runs[3].outputs] == [True]


def test_a_limit_of_0_keeps_every_output(tmp_path):
    cells = ["print('y' * 100_000)", "print('after')"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    runs = execute(nb, tmp_path, cell_timeout=30, notebook_timeout=60, max_output_mib=0)
    assert [run.cut for run in runs] == [False, False]
    assert ["".join(output["text"] for output in run.outputs) for run in runs] == [
        "y" * 100_000 + "\n",
        "after\n",
    ]


PROGRESS = (  # 300 lines of 5,000 characters printed, one kept at a time
    "from IPython.display import clear_output\n"
    "for step in range(300):\n"
    "    clear_output(wait=True)\n"
    "    print(f'{step:>5000}', flush=True)\n"
)
HANDLES = "from IPython.display import display\nhandles = [display('s', display_id=True) for _ in range(100)]"
UPDATES = "for handle in handles:\n    handle.update('x' * 100_000)\n"  # 10 million characters


def test_what_is_counted_is_what_the_notebook_keeps_display_updates_included(tmp_path):
    """A progress loop that kept one line at a time passed the limit (cleared outputs counted), and
    cut every cell after it; updates of display handles went around it (10 MB kept under 0.5 MiB)."""
    cells = [PROGRESS, "print('after')", HANDLES, UPDATES, VERDICT]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    runs = execute(nb, tmp_path, cell_timeout=60, notebook_timeout=120, max_output_mib=LIMIT_MIB)
    assert [run.status for run in runs] == ["ok"] * 5
    assert [run.cut for run in runs] == [False, False, False, True, False]
    shown = ["".join(output["text"] for output in run.outputs) for run in runs[:2]]  # 1 or 2 messages each
    assert shown == [f"{299:>5000}\n", "after\n"]
    assert sum(text_size(output) for run in runs for output in run.outputs) <= LIMIT_MIB * 2**20
    assert [VERDICT_MIME in output.get("data", {}) for output in runs[4].outputs] == [True]
