"""Hidden checks: the kit's own pass every stored solution, and grading runs them where check() does not;
the grader takes only the verdict its runner displayed (with the check's nonce), not one the notebook made.
"""

from __future__ import annotations

import ast
import json

import pytest

pytest.importorskip("nbformat")

from test_exercises import CASES, states  # noqa: E402

from varfunc.grading import evaluate, lookup  # noqa: E402
from varfunc.grading.execute import CellRun, verdict_of  # noqa: E402
from varfunc.grading.hidden import HIDDEN, VERDICT_MIME, evaluate_hidden, runner_source  # noqa: E402
from varfunc.grading.notebook import solution_source  # noqa: E402

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
