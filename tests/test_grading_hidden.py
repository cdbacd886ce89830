"""Hidden checks: the kit's own pass every stored solution, and grading runs them where check() does not;
the grader takes only the verdict its runner displayed (with the check's nonce), not one the notebook made.
"""

from __future__ import annotations

import ast
import json
import secrets
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from test_exercises import CASES, states  # noqa: E402
from test_grading_grade import NAME, SOURCE, _cell, _exercises  # noqa: E402

from varfunc.grading import (  # noqa: E402
    evaluate,
    grade,  # noqa: E402
    lookup,
)
from varfunc.grading.execute import CellRun, verdict_of  # noqa: E402
from varfunc.grading.grade import GradeOptions, grade_submission  # noqa: E402
from varfunc.grading.hidden import HIDDEN, VERDICT_MIME, evaluate_hidden, runner_source  # noqa: E402
from varfunc.grading.notebook import BEGIN_HIDDEN, END_HIDDEN, solution_source  # noqa: E402

WITH_HIDDEN = [(path, ex) for path, ex in CASES if ex in HIDDEN]
ONLY_VISIBLE = """
class Mul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, g):
        a, b = self.saved_tensors
        if a is b:
            return g * b, g * 0
        return sum_to_shape(g * b, a.shape), sum_to_shape(g * a, b.shape)
"""


def _namespace(path, exercise_id, source):
    before, _ = states(path)[lookup(exercise_id).grade_id]
    namespace = dict(before)
    exec(compile(source, exercise_id, "exec"), namespace)
    return namespace


def test_some_exercises_have_hidden_checks():
    assert len(WITH_HIDDEN) >= 4


@pytest.mark.parametrize("path, exercise_id", WITH_HIDDEN, ids=[c[1] for c in WITH_HIDDEN])
def test_the_solution_passes_the_hidden_checks(path, exercise_id):
    _, source = states(path)[lookup(exercise_id).grade_id]
    verdict = evaluate_hidden(exercise_id, _namespace(path, exercise_id, solution_source(source)))
    assert verdict.passed, str(verdict)


def test_a_hidden_check_catches_what_the_visible_ones_miss():
    path = next(p for p, ex in CASES if ex == "ch03.mul")
    namespace = _namespace(path, "ch03.mul", ONLY_VISIBLE)
    assert evaluate("ch03.mul", namespace).passed
    verdict = evaluate_hidden("ch03.mul", namespace)
    assert not verdict.passed and verdict.case.startswith("hidden check: Mul()(a, a)")


NUMPY_SCALAR_AS_NUMBER = """
def make_param(values):
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        return Variable(values.copy(), requires_grad=True)
    return Variable(np.array(values, dtype=np.float64), requires_grad=True)
"""
ALWAYS_FLOAT64 = """
def make_param(values):
    return Variable(np.array(values, dtype=np.float64), requires_grad=True)
"""


def test_make_params_hidden_check_asks_only_for_what_the_exercise_promises():
    """A list, a number or an array: a right answer that makes a NumPy scalar float64 passed check()
    and got 0/2 from the grader (the hidden check gave it np.float32(2.5)); one that makes float32
    arrays float64 is still refused."""
    path = next(p for p, ex in CASES if ex == "ch02.make_param")
    right = _namespace(path, "ch02.make_param", NUMPY_SCALAR_AS_NUMBER)
    assert evaluate("ch02.make_param", right).passed
    assert evaluate_hidden("ch02.make_param", right).passed
    wrong = evaluate_hidden("ch02.make_param", _namespace(path, "ch02.make_param", ALWAYS_FLOAT64))
    assert not wrong.passed and "float32" in wrong.case


def test_hidden_test_code_fails_on_a_false_assert():
    verdict = evaluate_hidden("ch02.predict_grad", _predicted(), "assert 1 == 2, 'no'")
    assert (verdict.case, verdict.got) == ("hidden check: an assertion in the hidden tests", "no")
    assert evaluate_hidden("ch02.predict_grad", _predicted(), "assert 1 == 1").passed


def _predicted():
    return {"predicted_a_grad": [3.5, 4.5], "predicted_b_grad": None}


def test_the_runner_grades_with_fresh_modules_then_puts_the_notebooks_back(capsys):
    import sys

    import varfunc.grading.core as core

    namespace = {**_predicted(), "__name__": "__main__"}
    exec(compile(runner_source("ch02.predict_grad"), "runner", "exec"), namespace)
    assert "ch02.predict_grad passed" in capsys.readouterr().out
    assert set(namespace) == {*_predicted(), "__name__", "__builtins__"}  # no names left behind
    assert sys.modules["varfunc.grading.core"] is core  # the notebook's own modules are back


def test_the_runner_puts_the_nonce_in_its_verdict(capsys):
    namespace = {**_predicted(), "__name__": "__main__"}
    exec(compile(runner_source("ch02.predict_grad", nonce="f00d"), "runner", "exec"), namespace)
    out = capsys.readouterr().out
    assert "'exercise': 'ch02.predict_grad', 'nonce': 'f00d', 'passed': True" in out


def _shown(payload) -> dict:
    return {"output_type": "display_data", "data": {VERDICT_MIME: payload, "text/plain": "ok"}}


def test_only_a_verdict_with_the_exercise_and_the_nonce_counts():
    forged = {"exercise": "ch02.predict_grad", "passed": True, "case": ""}
    ours = {"exercise": "ch02.predict_grad", "nonce": "f00d", "passed": False, "case": "wrong"}
    outputs = [
        _shown(forged),
        _shown({**forged, "nonce": "guessed"}),
        _shown({**forged, "exercise": "ch02.describe", "nonce": "f00d"}),
        _shown(ours),
        _shown("not JSON"),
        _shown(["a", "list"]),
        {"output_type": "stream", "name": "stdout", "text": "hello"},
    ]
    assert verdict_of(CellRun("ok", outputs=outputs), "ch02.predict_grad", "f00d") == ours
    assert verdict_of(CellRun("ok", outputs=outputs[:3]), "ch02.predict_grad", "f00d") is None


@pytest.mark.parametrize("forged_first", [True, False], ids=["during the checks", "after them"])
def test_a_second_verdict_with_the_nonce_fails_the_exercise(forged_first):
    """A forger who read the nonce shows a verdict before the runner's (during the checks) or after it."""
    runner = {"exercise": "ch02.predict_grad", "nonce": "f00d", "passed": False, "case": "wrong"}
    forged = {**runner, "passed": True, "case": ""}
    shown = [_shown(forged), _shown(json.dumps(runner))]  # a payload may also arrive as JSON text
    verdict = verdict_of(
        CellRun("ok", outputs=shown if forged_first else shown[::-1]), "ch02.predict_grad", "f00d"
    )
    assert verdict["passed"] is False and "showed 2 verdicts" in verdict["case"]
    assert verdict_of(CellRun("ok", outputs=shown[1:]), "ch02.predict_grad", "f00d") == runner


def _runner_payload(capsys, exercise_id, namespace, hidden_source="", hidden_files=()):
    """The verdict the runner displayed (outside a kernel, display prints the bundle's repr)."""
    exec(compile(runner_source(exercise_id, hidden_source, hidden_files), "runner", "exec"), namespace)
    shown = next(line for line in capsys.readouterr().out.splitlines() if VERDICT_MIME in line)
    return ast.literal_eval(shown)[VERDICT_MIME]


@pytest.mark.parametrize(
    "hidden_source, got",
    [("assert 1 == 2, 'no'", "'no'"), ("raise ValueError('my bad')", "'ValueError: my bad'")],
    ids=["a failed assert", "an error"],
)
def test_a_failure_with_nothing_to_expect_shows_no_expected_value(capsys, hidden_source, got):
    namespace = {**_predicted(), "__name__": "__main__"}
    payload = _runner_payload(capsys, "ch02.predict_grad", namespace, hidden_source)
    assert payload["passed"] is False and payload["got"] == got
    assert payload["expected"] is None  # left out of the report (not the text "None")


def test_an_expected_none_is_still_shown(capsys, tmp_path):
    checks = tmp_path / "my_checks.py"
    checks.write_text(
        "from varfunc.grading.core import CheckFailed\nfrom varfunc.grading.hidden import hidden_check\n\n"
        "@hidden_check('ch02.predict_grad')\ndef wants_none(ns):\n"
        "    raise CheckFailed('the unused slot', None, 3)\n"
    )
    namespace = {**_predicted(), "__name__": "__main__"}
    payload = _runner_payload(capsys, "ch02.predict_grad", namespace, hidden_files=[checks])
    assert (payload["case"], payload["expected"], payload["got"]) == (
        "hidden check: the unused slot",
        "None",
        "3",
    )


LEAKS_THE_HISTORY = (  # every earlier cell that ran the grader's runner, and the last inputs
    "raise RuntimeError('LEAKED ' + repr([s for s in In if '_vf_' + 'importlib' in s]) + repr(_ih[-3:]) "
    "+ repr({k: v for k, v in globals().items() if k.startswith('_i')}))"
)


@pytest.mark.slow  # starts a Jupyter kernel
def test_hidden_tests_regions_and_hidden_check_files_count_and_stay_hidden(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # both given as relative paths, as in the README: the kernels run elsewhere
    nonces, token_hex = [], secrets.token_hex
    monkeypatch.setattr(secrets, "token_hex", lambda n: nonces.append(token_hex(n)) or nonces[-1])
    source = Path("source")
    source.mkdir()
    nb = nbformat.read(SOURCE, as_version=4)
    hidden = "ones = Variable(np.ones(2))\nassert Div()(ones, ones).data.sum() == 3, 'hidden says no'"
    _cell(nb, "ch03_div_check").source += f"\n{BEGIN_HIDDEN}\n{hidden}\n{END_HIDDEN}\n"
    nbformat.write(nb, source / NAME)
    checks = Path("my_checks.py")
    checks.write_text(
        "from varfunc.grading.core import CheckFailed\nfrom varfunc.grading.hidden import hidden_check\n\n"
        "@hidden_check('ch03.mul')\ndef never(ns):\n    raise CheckFailed('the instructor says no')\n"
    )
    options = GradeOptions(cell_timeout=8, notebook_timeout=120, source=source, hidden_files=(checks,))
    submission = nbformat.read(SOURCE, as_version=4)  # a last cell that puts IPython's history in its error
    submission.cells.append(nbformat.v4.new_code_cell(LEAKS_THE_HISTORY))
    nbformat.write(submission, NAME)
    report = grade_submission(Path(NAME), options)
    text = json.dumps(report)
    assert "LEAKED []" in text and "Div()(ones, ones)" not in text  # no runner left in In
    assert "ones = Variable(np.ones(2))" not in text and "my_checks.py" not in text
    assert nonces and not any(nonce in text for nonce in nonces)
    exercises = _exercises(report)
    assert exercises["ch03.mul"]["reason"] == "hidden check: the instructor says no"
    assert exercises["ch03.div"]["reason"] == "hidden check: an assertion in the hidden tests"
    assert exercises["ch03.div"]["got"] == "'hidden says no'"
    assert "expected" not in exercises["ch03.div"]  # an assert has no expected value (not "None")
    assert report["score"] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / checks).write_bytes(checks.read_bytes())
    other = GradeOptions(source=source, hidden_files=(elsewhere / checks,))
    assert other.fingerprint() != options.fingerprint()  # the same text in another file: graded again


def test_a_report_shows_no_hidden_test_path_or_nonce_however_the_notebook_got_them(tmp_path):
    # e.g. read from the checks' stack frames (run's arguments) and raised in an error
    source = tmp_path / "source"
    source.mkdir()
    nb = nbformat.read(SOURCE, as_version=4)
    _cell(
        nb, "ch03_div_check"
    ).source += f"\n{BEGIN_HIDDEN}\nassert Div is not None, 'no Div'\n{END_HIDDEN}\n"
    nbformat.write(nb, source / NAME)
    (tmp_path / "my_checks.py").write_text("")
    options = GradeOptions(source=source, hidden_files=(tmp_path / "my_checks.py",))
    plan = grade.plan_grading(nb, grade.cell_index(nb)[0], grade.chapter_exercises("ch03"), options, [])
    runner = nbformat.reads(nbformat.writes(plan.nb), as_version=4).cells[plan.runner["ch03.div"]].source
    nonce = plan.nonce["ch03.div"]
    leak = {
        "got": f"{runner} | {nonce} | assert Div is not None, 'no Div' | {tmp_path / 'my_checks.py'}",
        "points": 0,
    }
    clean = grade._scrubbed(leak, grade._secret_texts(plan, options))
    assert clean["got"] == "[hidden] | [hidden] | [hidden] | [hidden]" and clean["points"] == 0


RAISES_IN_BACKWARD = ONLY_VISIBLE.replace("if a is b:", "if a is b:\n            raise RuntimeError('boom')")


def test_an_error_in_a_hidden_check_names_the_case_that_ran_the_students_code():
    path = next(p for p, ex in CASES if ex == "ch03.mul")
    namespace = _namespace(path, "ch03.mul", RAISES_IN_BACKWARD)
    assert evaluate("ch03.mul", namespace).passed  # the visible checks never pass one array twice
    verdict = evaluate_hidden("ch03.mul", namespace)
    assert verdict.case == "hidden check: Mul()(a, a): your code raised an error"
    assert verdict.got == "RuntimeError: boom" and "that case's values" in verdict.hint


def test_an_error_in_hidden_test_code_quotes_the_line_that_ran_the_students_code():
    hidden = "x = 1\nassert predicted_a_grad[0] == 3.5\nboom = predicted_b_grad[0]\n"
    verdict = evaluate_hidden("ch02.predict_grad", _predicted(), hidden)
    assert (
        verdict.case
        == "hidden check: the hidden tests' line 3, `boom = predicted_b_grad[0]`: your code raised an error"
    )
    assert verdict.got == "TypeError: 'NoneType' object is not subscriptable"
