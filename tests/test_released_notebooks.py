"""The released chapters open and run: a student who runs a fresh copy top to bottom without solving
anything sees errors only in the exercise cells themselves (the stub's NotImplementedError), a
"not passed yet" verdict from every check cell, and every other cell runs.

Each chapter is released into a temporary folder with ``python -m varfunc.grading release`` and
executed in a fresh kernel of this interpreter: about 20 s for the eleven chapters on two cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = pytest.mark.slow  # every test here runs released chapters in Jupyter kernels

from varfunc.grading import evaluate, lookup  # noqa: E402
from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.ch09 import _GRAD_DEVICE_ANSWERS  # noqa: E402
from varfunc.grading.notebook import BEGIN_SOLUTION, STUB, nbgrader_meta  # noqa: E402
from varfunc.grading.release import release_notebook  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
KERNEL = "varfunc-released-test"
CELL_TIMEOUT = 120
NOT_PASSED = "not passed yet"
STUB_MESSAGE = STUB.split('"')[1]  # what the stub's NotImplementedError says


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The student copies of all chapters, and a kernel spec for this interpreter that nbclient finds."""
    from ipykernel.kernelspec import write_kernel_spec

    root = tmp_path_factory.mktemp("released")
    assert main(["release", str(NOTEBOOKS), str(root / "student")]) == 0
    write_kernel_spec(root / "jupyter" / "kernels" / KERNEL)  # argv: sys.executable -m ipykernel_launcher
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(root / "jupyter"))
        patch.setenv("MPLBACKEND", "Agg")
        patch.setenv("IPYTHONDIR", str(root / "ipython"))
        yield root / "student"


def run_released(folder: Path, name: str):
    """The released chapter executed top to bottom, errors allowed, in a fresh kernel."""
    from nbclient import NotebookClient

    nb = nbformat.read(folder / name, as_version=4)
    NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        allow_errors=True,
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(folder)}},
        record_timing=False,
    ).execute()
    return nb


def printed(cell) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_a_released_chapter_fails_only_in_its_exercise_cells(released, path):
    nb = run_released(released, path.name)
    errors = {
        index: out
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    }
    solutions = {index for index, cell in enumerate(nb.cells) if nbgrader_meta(cell).get("solution")}
    # A stub inside a method raises only when called (by the check), so not every exercise cell errors.
    outside = {i: f"{out.ename}: {out.evalue}" for i, out in errors.items() if i not in solutions}
    assert not outside, f"cells other than exercise cells raised in the student copy: {outside}"
    for index, out in errors.items():
        assert (out.ename, out.evalue) == ("NotImplementedError", STUB_MESSAGE), (
            f"exercise cell {index} raised {out.ename}: {out.evalue}, not the stub's error"
        )
    checks = [cell for cell in nb.cells if nbgrader_meta(cell).get("grade") and cell.cell_type == "code"]
    for cell in checks:
        assert NOT_PASSED in printed(cell), f"check cell {cell.source!r} printed {printed(cell)!r}"


# Prediction exercises whose answer is a dict: the student copy keeps the dict with its keys and
# `...` for each value to fill in, and the check asks for the values until they are filled in.
TEMPLATES = [
    (
        "09_on_the_gpu.ipynb",
        "ch09.grad_device",
        ["predicted = {"] + [f'"{k}": ...,' for k in _GRAD_DEVICE_ANSWERS],
    ),
    ("10_then_and_now.ipynb", "ch10.predict_modern", ["predicted_next = {\n    ...  #"]),
]


@pytest.mark.parametrize("name, exercise_id, shown", TEMPLATES, ids=[t[1] for t in TEMPLATES])
def test_a_prediction_template_stays_in_the_student_copy(name, exercise_id, shown):
    released, _ = release_notebook(nbformat.read(NOTEBOOKS / name, as_version=4))
    grade_id = lookup(exercise_id).grade_id
    source = next(cell.source for cell in released.cells if nbgrader_meta(cell).get("grade_id") == grade_id)
    assert BEGIN_SOLUTION not in source and STUB in source, source
    for text in shown:
        assert text in source, f"the student copy of {exercise_id} does not show {text!r}:\n{source}"
    namespace: dict = {}
    with pytest.raises(NotImplementedError):
        exec(compile(source, exercise_id, "exec"), namespace)  # the template runs, then the stub raises
    verdict = evaluate(exercise_id, namespace)
    assert not verdict.passed and verdict.case == "not solved yet", str(verdict)
    assert verdict.hint.startswith("fill in"), str(verdict)
