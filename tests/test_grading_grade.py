"""Grading submissions in fresh kernels: the instructor's notebook gets full marks, the released copy
zero, and prepared wrong submissions (an endless loop, sys.exit(), os._exit(), an exception, a wrong
gradient, a deleted cell, a damaged file, the wrong chapter, patched checks, a patched NumPy or display,
NumPy patched while the checks run or its code rewritten in place, a verdict displayed by the notebook
itself, a failing import cell) get the right partial scores and
reasons while every other exercise is still graded.

Chapter 03 (two short exercises, Mul and Div) is the subject: one parallel batch grades all the
prepared submissions once (module fixture), the tests read its reports.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from varfunc.grading import evaluate  # noqa: E402
from varfunc.grading.__main__ import main  # noqa: E402
from varfunc.grading.batch import grade_class, up_to_date  # noqa: E402
from varfunc.grading.grade import GradeOptions  # noqa: E402
from varfunc.grading.notebook import nbgrader_meta  # noqa: E402
from varfunc.grading.release import release_notebook  # noqa: E402

pytestmark = pytest.mark.slow  # starts Jupyter kernels: about a minute in all on two cores

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "03_functions_and_the_forward_graph.ipynb"
NAME = SOURCE.name
OPTIONS = GradeOptions(cell_timeout=8, notebook_timeout=120)

MUL_HEAD = (
    "class Mul(Function):\n"
    "    def forward(self, a, b):\n        self.save_for_backward(a, b)\n        return a * b\n\n"
)
WRONG_GRADIENT = MUL_HEAD + (
    "    def backward(self, g):\n        a, b = self.saved_tensors\n"
    "        return sum_to_shape(g * a, a.shape), sum_to_shape(g * b, b.shape)\n"  # swapped
)
# Its backward raises in the checks: a wrong answer ("failed"), not a zero to look at ("error").
RAISES_IN_CHECKS = MUL_HEAD + "    def backward(self, g):\n        raise ValueError('not written yet')\n"
ENDLESS = MUL_HEAD + "    def backward(self, g):\n        while True:\n            pass\n"
# Right on every visible case; wrong when both inputs are the same array (a hidden check tries Mul()(a, a)).
ONLY_VISIBLE = MUL_HEAD + (
    "    def backward(self, g):\n        a, b = self.saved_tensors\n"
    "        if a is b:\n            return g * b, g * 0\n"
    "        return sum_to_shape(g * b, a.shape), sum_to_shape(g * a, b.shape)\n"
)
PATCHES = WRONG_GRADIENT + (
    "import dataclasses\nimport varfunc.grading as grading\nimport varfunc.grading.core as core\n"
    "always = lambda exercise_id, ns=None: core.Verdict(core.lookup(exercise_id), True)\n"
    "core.evaluate = grading.evaluate = always\n"
    "core.check = grading.check = check = lambda *args, **kwargs: print('passed')\n"
    "core.REGISTRY['ch03.mul'] = dataclasses.replace(core.lookup('ch03.mul'), run=lambda ns: None)\n"
)

# A wrong Div (both gradients g) that then makes NumPy, or IPython's display, say yes to everything.
WRONG_DIV = "class Div(Function):\n    def forward(self, a, b):\n        return a / b\n\n" + (
    "    def backward(self, g):\n        return g, g\n"
)
PATCHED_NUMPY = WRONG_DIV + "np.allclose = lambda *args, **kwargs: True\n"
PATCHED_DISPLAY = WRONG_DIV + (
    "import IPython.display\n_display = IPython.display.display\n\n"
    "def all_passed(*objects, **kwargs):\n"
    "    for bundle in objects:\n"
    "        for payload in (bundle.values() if isinstance(bundle, dict) else ()):\n"
    "            if isinstance(payload, dict) and 'passed' in payload:\n"
    "                payload['passed'] = True\n"
    "    return _display(*objects, **kwargs)\n\n"
    "IPython.display.display = all_passed\n"
)
# A Div wrong only in the sign of b's gradient that makes NumPy say yes once the checks run it (the
# guard has looked by then), and one that rewrites the code behind np.isclose in place (same object).
WRONG_SIGN_DIV = (
    "class Div(Function):\n    def forward(self, a, b):\n        self.save_for_backward(a, b)\n"
    "        return a / b\n\n    def backward(self, g):\n        a, b = self.saved_tensors\n"
    "        return sum_to_shape(g / b, a.shape), sum_to_shape(g * a / b**2, b.shape)\n"
)
PATCHED_DURING = WRONG_SIGN_DIV.replace(
    "        return a / b\n",
    "        import numpy\n\n"
    "        numpy.isclose = lambda x, y, **k: numpy.ones(numpy.broadcast(x, y).shape, bool)\n"
    "        return a / b\n",
)
CODE_SWAP = WRONG_SIGN_DIV + (
    "always = lambda a, b, rtol=1e-05, atol=1e-08, equal_nan=False: np.ones(np.broadcast(a, b).shape, bool)\n"
    "np.isclose._implementation.__code__ = always.__code__\n"
)
# A wrong Div whose forward displays, during the checks, verdicts that say it passed.
FORGED_VERDICT = WRONG_DIV.replace(
    "        return a / b\n",
    "        from IPython.display import display\n\n"
    "        for nonce in (None, '', 'guessed'):\n"
    "            verdict = {'exercise': 'ch03.div', 'nonce': nonce, 'passed': True, 'case': ''}\n"
    "            display({'application/vnd.varfunc.verdict+json': verdict, 'text/plain': 'ok'}, raw=True)\n"
    "        return a / b\n",
)


def _cell(nb, grade_id):
    return next(c for c in nb.cells if nbgrader_meta(c).get("grade_id") == grade_id)


def _with(grade_id, source):
    def edit(nb):
        _cell(nb, grade_id).source = source

    return edit


def _delete_div(nb):
    nb.cells.remove(_cell(nb, "ch03_div"))


def _damage_div_metadata(nb):
    _cell(nb, "ch03_div").metadata["nbgrader"] = "oops"  # hand-edited JSON


def _break_the_imports(nb):
    nb.cells[1].source = "raise RuntimeError('boom')\n" + nb.cells[1].source  # the import cell


SUBMISSIONS = {
    "instructor": None,
    "released": "release",
    "endless_loop": _with("ch03_mul", ENDLESS),
    "sys_exit": _with("ch03_div", "import sys\nsys.exit()\n"),
    "os_exit": _with("ch03_mul", "import os\nos._exit(1)\n"),
    "exception": _with("ch03_div", "raise ValueError('my bad')\n"),
    "wrong_gradient": _with("ch03_mul", WRONG_GRADIENT),
    "raises_in_checks": _with("ch03_mul", RAISES_IN_CHECKS),
    "patched_checks": _with("ch03_mul", PATCHES),
    "only_visible": _with("ch03_mul", ONLY_VISIBLE),
    "patched_numpy": _with("ch03_div", PATCHED_NUMPY),
    "patched_display": _with("ch03_div", PATCHED_DISPLAY),
    "patched_during": _with("ch03_div", PATCHED_DURING),
    "code_swap": _with("ch03_div", CODE_SWAP),
    "deleted_cell": _delete_div,
    "damaged_metadata": _damage_div_metadata,
    "forged_verdict": _with("ch03_div", FORGED_VERDICT),
    "broken_imports": _break_the_imports,
    "memory_hog": _with("ch03_div", "hog = np.ones(5 * 2**30, dtype=np.uint8)  # 5 GiB, over --memory's 4\n"),
    "kills_the_grader": _with("ch03_div", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"),
}


def _write_submissions(root: Path) -> list[Path]:
    instructor = nbformat.read(SOURCE, as_version=4)
    paths = []
    for student, edit in SUBMISSIONS.items():
        nb = copy.deepcopy(instructor)
        if edit == "release":
            nb, _ = release_notebook(nb)
        elif edit is not None:
            edit(nb)
        path = root / student / NAME
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
        paths.append(path)
    (root / "corrupted").mkdir()
    (root / "corrupted" / NAME).write_bytes(b'{"cells": [{"cell_type": "code", "sour\x00\xff')
    (root / "wrong_chapter").mkdir()
    (root / "wrong_chapter" / NAME).write_bytes(
        SOURCE.with_name("02_variables_and_leaves.ipynb").read_bytes()
    )
    (root / "unnumbered").mkdir()  # a file name without the chapter's number: the notebook's cells say it
    (root / "unnumbered" / "homework.ipynb").write_bytes(SOURCE.read_bytes())
    return paths + [
        root / "corrupted" / NAME,
        root / "wrong_chapter" / NAME,
        root / "unnumbered" / "homework.ipynb",
    ]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("submissions")
    paths = _write_submissions(root)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    report_dir = root.parent / "reports"
    reports = grade_class(paths, report_dir, OPTIONS, jobs=2, progress=False)
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    by_student = {r["student"]: r for r in reports}
    return {"reports": by_student, "dir": report_dir, "paths": paths, "unchanged": before == after}


def _exercises(report):
    return {e["id"]: e for e in report["exercises"]}


def test_the_instructor_notebook_gets_full_marks(graded):
    report = graded["reports"]["instructor"]
    assert (report["status"], report["score"], report["max_score"]) == ("graded", 6, 6), report
    assert report["problems"] == [] and report["cell_errors"] == []


def test_a_file_name_without_the_chapter_takes_the_notebooks_chapter(graded):
    """The chapter then comes from the exercise cells, in the report and in summary.csv."""
    report = graded["reports"]["unnumbered"]
    assert (report["chapter"], report["status"], report["score"]) == ("ch03", "graded", 6), report
    summary = (graded["dir"] / "summary.csv").read_text(encoding="utf-8-sig")
    assert any(line.startswith("unnumbered,") and ",ch03," in line for line in summary.splitlines())


def test_the_released_copy_scores_zero_with_a_clear_reason(graded):
    report = graded["reports"]["released"]
    assert report["score"] == 0
    for entry in report["exercises"]:
        assert entry["status"] == "not_solved" and "NotImplementedError" in entry["reason"]


@pytest.mark.parametrize(
    "student, failing, status, reason",
    [
        ("endless_loop", "ch03.mul", "timeout", "time limit"),
        ("sys_exit", "ch03.div", "error", "SystemExit"),
        ("os_exit", "ch03.mul", "crashed", "kernel died"),
        ("exception", "ch03.div", "error", "ValueError: my bad"),
        ("memory_hog", "ch03.div", "error", "MemoryError: Unable to allocate 5.00 GiB"),
        ("wrong_gradient", "ch03.mul", "failed", "gradient for a"),
        ("raises_in_checks", "ch03.mul", "failed", "your code raised an error"),
        ("patched_checks", "ch03.mul", "failed", "gradient for a"),
        ("only_visible", "ch03.mul", "failed", "hidden check: Mul()(a, a)"),
        ("patched_numpy", "ch03.div", "not_checked", "library code that the checks rely on (numpy.allclose)"),
        ("patched_display", "ch03.div", "not_checked", "(IPython.display.display)"),
        ("patched_during", "ch03.div", "not_checked", "rely on while the checks ran (numpy.isclose"),
        ("code_swap", "ch03.div", "not_checked", "the code or defaults of numpy.isclose"),
        ("deleted_cell", "ch03.div", "missing", "grade_id 'ch03_div'"),
        ("damaged_metadata", "ch03.div", "missing", "metadata was changed"),
        ("forged_verdict", "ch03.div", "failed", "gradient for a"),
    ],
)
def test_a_wrong_submission_loses_only_that_exercise(graded, student, failing, status, reason):
    report = graded["reports"][student]
    exercises = _exercises(report)
    assert exercises[failing]["status"] == status, exercises[failing]
    assert reason in exercises[failing]["reason"] + exercises[failing].get("case", "")
    if student == "memory_hog":
        assert exercises[failing]["reason"].endswith("(the grader's limit: 4 GiB, --memory)")
        # the cell ran and stopped before defining Div: not "run the exercise cell above first"
        assert exercises[failing]["case"] == "Div not defined" and "hint" not in exercises[failing]
    assert exercises[failing]["points"] == 0
    others = [e for e in exercises.values() if e["id"] != failing]
    assert others and all(e["status"] == "passed" and e["points"] == e["max_points"] for e in others)
    assert report["score"] == 3


def test_a_failed_import_cell_is_named_in_every_exercises_reason(graded):
    report = graded["reports"]["broken_imports"]
    assert report["score"] == 0
    for entry in report["exercises"]:
        assert entry["status"] == "error", entry
        why = (
            "an earlier cell failed first: cell 2 (counting from 1), which starts "
            "`raise RuntimeError('boom')`, raised RuntimeError: boom"
        )
        assert why in entry["reason"]


def test_a_wrong_gradient_report_says_what_was_expected(graded):
    mul = _exercises(graded["reports"]["wrong_gradient"])["ch03.mul"]
    assert {"case", "expected", "got", "hint"} <= set(mul)
    assert mul["expected"] != mul["got"]


def test_the_visible_check_passes_what_only_the_hidden_check_catches():
    namespace = {}
    exec(
        compile(
            "from varfunc import Function\nfrom varfunc.functions.utils import sum_to_shape\n", "x", "exec"
        ),
        namespace,
    )
    exec(compile(ONLY_VISIBLE, "only_visible", "exec"), namespace)
    assert evaluate("ch03.mul", namespace).passed  # what the student sees with check("ch03.mul")


def test_damaged_nbgrader_metadata_is_named_in_the_problems(graded):
    problems = graded["reports"]["damaged_metadata"]["problems"]
    assert any("damaged nbgrader metadata" in p for p in problems), problems


def test_unreadable_and_wrong_chapter_files_get_an_entry_not_a_traceback(graded):
    corrupted, wrong = graded["reports"]["corrupted"], graded["reports"]["wrong_chapter"]
    assert corrupted["status"] == "unreadable" and "not text" in corrupted["problems"][0]
    assert corrupted["chapter"] == "ch03"  # from the file name: the notebook cannot say
    assert wrong["status"] == "wrong_chapter" and "ch02, not of ch03" in wrong["problems"][0]
    for report in (corrupted, wrong):
        assert report["score"] == 0 and report["max_score"] == 6
        assert {e["status"] for e in report["exercises"]} == {"not_graded"}


def test_reports_and_the_class_summary_are_written(graded):
    report_dir = graded["dir"]
    for student, report in graded["reports"].items():
        for suffix in (".json", ".md", ".html"):
            assert (report_dir / student / Path(report["submission"]).name).with_suffix(suffix).is_file()
    saved = json.loads((report_dir / "wrong_gradient" / NAME).with_suffix(".json").read_text())
    assert saved["score"] == 3 and saved["sha256"]
    markdown = (report_dir / "wrong_gradient" / NAME).with_suffix(".md").read_text()
    assert "wrong_gradient, ch03: 3 / 6 points" in markdown and "## What failed" in markdown
    with open(report_dir / "summary.csv", newline="", encoding="utf-8-sig") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(graded["reports"])
    assert (
        rows["instructor"]["score"],
        rows["instructor"]["ch03.mul"],
        rows["deleted_cell"]["ch03.div"],
    ) == (
        "6",
        "3",
        "0",
    )
    assert rows["instructor"]["look at"] == "" and rows["endless_loop"]["look at"] == "ch03.mul: timeout"
    assert rows["patched_numpy"]["look at"] == "ch03.div: not_checked"
    assert rows["raises_in_checks"]["look at"] == "" and rows["exception"]["look at"] == "ch03.div: error"


def test_submissions_are_never_modified(graded):
    assert graded["unchanged"]


def test_grading_resumes_where_it_stopped(graded):
    paths, report_dir = graded["paths"], graded["dir"]
    again = grade_class(paths, report_dir, OPTIONS, jobs=2, progress=False)  # nothing changed: no kernels ...
    retried = {r["student"] for r in again if not r.get("resumed")}
    assert retried == {"kills_the_grader"}  # ... but for the grading that died: it is tried again
    assert {r["student"]: r["score"] for r in again} == {s: r["score"] for s, r in graded["reports"].items()}
    changed = report_dir.parent / "changed.ipynb"
    changed.write_bytes(paths[0].read_bytes() + b"\n")
    base = report_dir / "instructor" / Path(NAME).stem
    assert up_to_date(paths[0], base, OPTIONS) is not None
    assert up_to_date(changed, base, OPTIONS) is None  # another file hash
    assert up_to_date(paths[0], base, GradeOptions(cell_timeout=9)) is None  # other grader settings


def test_grade_command_line(tmp_path, capsys):
    bad = tmp_path / "alice" / NAME
    bad.parent.mkdir()
    bad.write_text("not json")
    assert main(["grade", str(bad), "--report", str(tmp_path / "out"), "--no-progress"]) == 0
    assert "graded 1 submission(s)" in capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "alice" / Path(NAME).with_suffix(".json")).read_text())
    assert report["status"] == "unreadable" and "not a notebook" in report["problems"][0]


@pytest.mark.parametrize(
    "text, why",
    [
        (
            "import numpy as np\nx = 1\n",
            "starts with 'import numpy as np' (a .py script or an export?); submit the .ipynb",
        ),
        ("", "the file is empty"),
        ('{"cells": [', "not valid JSON (line 1, column 12"),
        ('{"cells": 3}', "JSON but not a Jupyter notebook"),
    ],
)
def test_an_unreadable_submission_says_what_it_is(text, why):
    from varfunc.grading.grade import read_notebook

    nb, problem = read_notebook(text.encode())
    assert nb is None and why in problem


def test_a_submission_with_duplicate_cell_ids_is_read_without_a_warning(recwarn):
    from varfunc.grading.grade import read_notebook

    nb = nbformat.read(SOURCE, as_version=4)
    nb.cells[1].id = nb.cells[0].id  # a cell duplicated by editing the JSON, or an old tool
    read, problem = read_notebook(json.dumps(nb).encode())
    assert read is not None and not problem
    assert len({cell.id for cell in read.cells}) == len(read.cells)  # mended
    assert not [w for w in recwarn if "cell id" in str(w.message)]  # nothing printed over the progress bar


def test_a_grader_failure_still_lists_the_chapters_exercises(tmp_path, monkeypatch):
    import varfunc.grading.batch as batch

    def broken(path, options):
        raise RuntimeError("a bug in the grader")

    monkeypatch.setattr(batch, "grade_submission", broken)
    path = tmp_path / "alice" / NAME
    path.parent.mkdir()
    path.write_bytes(SOURCE.read_bytes())
    report = batch.grade_and_write(path, tmp_path / "reports" / "alice" / path.stem, "alice", OPTIONS)
    assert report["status"] == "grader_error" and "a bug in the grader" in report["problems"][0]
    assert (report["score"], report["max_score"]) == (0, 6)
    assert [e["status"] for e in report["exercises"]] == ["not_graded", "not_graded"]


def test_every_chapters_instructor_notebook_gets_full_marks(tmp_path):
    """Through real kernels and the guard: nothing a chapter does by design counts as tampering."""
    chapters = sorted(p for p in SOURCE.parent.glob("[0-9][0-9]_*.ipynb") if p.name >= "02")
    reports = grade_class(chapters, tmp_path / "reports", OPTIONS, jobs=2, progress=False)
    short = {r["chapter"]: (r["score"], r["max_score"], r["status"]) for r in reports}
    assert len(short) == len(chapters) == 9
    assert all(score == top > 0 and status == "graded" for score, top, status in short.values()), short


def test_a_submission_that_kills_its_grader_takes_only_its_own_grading_with_it(graded):
    report = graded["reports"]["kills_the_grader"]
    assert report["status"] == "grader_error" and "the grading process died" in report["problems"][0]
    assert graded["reports"]["instructor"]["score"] == 6  # graded beside it, by the same batch
