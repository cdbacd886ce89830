"""Through real kernels: a notebook that reroutes the grader's own path (IPython's display publisher,
importlib.import_module) scores nothing, flagged; a submission that kills its grader leaves no folder."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class  # noqa: E402
from varfunc.grading.grade import GradeOptions  # noqa: E402
from varfunc.grading.release import release_notebook  # noqa: E402

pytestmark = pytest.mark.slow  # starts Jupyter kernels

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "03_functions_and_the_forward_graph.ipynb"
OPTIONS = GradeOptions(cell_timeout=20, notebook_timeout=120)

# On an unsolved (released) notebook, each of these got full marks.
DISPLAY_PUB = """\
_pub = get_ipython().display_pub
_orig = _pub.publish
def _publish(data, metadata=None, **kw):
    v = data.get("application/vnd.varfunc.verdict+json")
    if isinstance(v, dict):
        v["passed"] = True
    return _orig(data, metadata, **kw)
_pub.publish = _publish
"""
IMPORTLIB = """\
import importlib, types
from IPython.display import display
_real = importlib.import_module
def _fake(name, package=None):
    if name == "varfunc.grading.hidden":
        def run(exercise_id, ns, hidden_source="", hidden_files=(), nonce=""):
            verdict = {"exercise": exercise_id, "nonce": nonce, "passed": True, "case": ""}
            display({"application/vnd.varfunc.verdict+json": verdict, "text/plain": "ok"}, raw=True)
        return types.SimpleNamespace(run=run)
    return _real(name, package)
importlib.import_module = _fake
"""


def _kills_its_grader(record: Path) -> str:
    write_cwd = f"open({str(record)!r}, 'w').write(os.getcwd())"
    return f"import os, signal\n{write_cwd}\nos.kill(os.getppid(), signal.SIGKILL)\n"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("cheats")
    released, _ = release_notebook(nbformat.read(SOURCE, as_version=4))
    paths = []
    for student, source in [
        ("display_pub", DISPLAY_PUB),
        ("importlib", IMPORTLIB),
        ("killer", _kills_its_grader(root / "killer_cwd.txt")),
    ]:
        nb = copy.deepcopy(released)
        nb.cells.insert(2, nbformat.v4.new_code_cell(source))  # right after the imports
        path = root / student / SOURCE.name
        path.parent.mkdir()
        nbformat.write(nb, path)
        paths.append(path)
    reports = grade_class(paths, root / "reports", OPTIONS, jobs=2, progress=False)
    return {r["student"]: r for r in reports}, root


@pytest.mark.parametrize(
    ("student", "named"),
    [("display_pub", "get_ipython().display_pub.publish"), ("importlib", "importlib.import_module")],
)
def test_a_rerouted_verdict_scores_nothing_and_is_flagged(graded, student, named):
    report = graded[0][student]
    assert report["score"] == 0, json.dumps(report["exercises"], indent=1)
    for entry in report["exercises"]:
        assert entry["status"] == "not_checked" and named in entry["reason"], entry


def test_the_working_folder_of_a_killed_grader_is_removed(graded):
    reports, root = graded
    assert reports["killer"]["status"] == "grader_error"
    workdir = Path((root / "killer_cwd.txt").read_text())
    assert workdir.name.startswith("varfunc-grade-") or workdir.parent.name.startswith("varfunc-grade-")
    assert not workdir.exists()


def test_an_unknown_kernel_is_refused_before_grading(tmp_path, capsys):
    report = tmp_path / "reports"
    assert main(["grade", str(SOURCE), "--report", str(report), "--kernel", "nosuch", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--kernel 'nosuch'" in err and "python3" in err and "jupyter kernelspec list" in err
    assert not report.exists()
