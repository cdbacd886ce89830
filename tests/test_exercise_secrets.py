"""A prediction exercise's verdict never shows the answer: a wrong guess learns that it is wrong, and
a hint, but not what to write instead (the answer itself is for the student to work out); a wrong
value the student gave is shown as it is."""

import numpy as np
import pytest

from varfunc import Function, Variable
from varfunc.grading import evaluate
from varfunc.grading.core import RAISED, SECRET, STUB_MESSAGE, CheckFailed, expect_equal

DEVICE_KEYS = [
    "x.grad device",
    "x_gpu.is_leaf",
    "fc.weight.grad device",
    "grad device of the Variable w was copied from",
]


@pytest.mark.parametrize(
    "exercise, namespace, answer",
    [
        ("ch02.predict_grad", {"predicted_a_grad": [0.0, 0.0], "predicted_b_grad": None}, "3.5"),
        ("ch02.predict_grad", {"predicted_a_grad": None, "predicted_b_grad": None}, "3.5"),
        (
            "ch02.predict_grad",
            {"predicted_a_grad": [3.5, 4.5], "predicted_b_grad": [0, 0]},
            "does not require",
        ),
        (
            "ch06.accumulate",
            {"grad_after_one": [0.0] * 3, "grad_after_two": [0.0] * 3, "grad_after_reset": [0.0] * 3},
            "-4",
        ),
        ("ch06.inplace", {"predicted_raises": {"A"}}, "runs without error"),
        (
            "ch09.grad_device",
            {"predicted": dict.fromkeys(DEVICE_KEYS, "cpu") | {DEVICE_KEYS[1]: True}},
            "cuda:0",
        ),
        ("ch10.double_count", {"wrong_orders": set(), "naive_grad_a": 0.0}, "naive"),
    ],
)
def test_a_wrong_prediction_is_told_so_without_the_answer(exercise, namespace, answer):
    verdict = evaluate(exercise, namespace)
    assert not verdict.passed
    assert verdict.expected == SECRET and answer not in str(verdict)


def test_the_inplace_verdict_counts_the_wrong_predictions_without_naming_them():
    verdict = evaluate("ch06.inplace", {"predicted_raises": set("ABCDEFG")})
    assert verdict.case == "3 of the 7 predictions are wrong" and "snippet A" not in str(verdict)
    assert all(f"{letter}: " in verdict.hint for letter in "ABCDEFG")  # every hint, no verdict per letter


def test_a_verdict_for_code_that_raised_shows_the_error_and_no_expected_value():
    def broken(v):
        raise RuntimeError("boom")

    text = str(evaluate("ch02.describe", {"describe": broken}))
    assert "got:      'RuntimeError: boom'" in text and "expected" not in text


@pytest.mark.parametrize(
    "got, expected",
    [(np.array([1.0, 2.0]), None), ([np.array([1.0, 2.0])], [None]), (Variable(np.ones(3)), [1.0, 1.0, 1.0])],
)
def test_an_array_where_a_value_was_expected_is_a_wrong_answer_shown_not_an_error(got, expected):
    # == on an array is elementwise: its truth value was "ambiguous", reported as the student's code raising
    with pytest.raises(CheckFailed) as failure:
        expect_equal("slot 0", got, expected)
    assert failure.value.case == "slot 0" and failure.value.got is got and failure.value.expected == expected


def test_a_misnamed_method_shows_the_kits_error_not_not_solved_yet():
    class MySigmoid(Function):  # backwards, not backward: Function's own backward raises
        def forward(self, a):
            y = 1 / (1 + np.exp(-a))
            self.save_for_backward(y)
            return y

        def backwards(self, grad_output):
            return grad_output

    verdict = evaluate("ch05.sigmoid", {"MySigmoid": MySigmoid})
    assert verdict.case == f"gradcheck on shape (3, 4): {RAISED}", str(verdict)
    assert "has no backward()" in verdict.got, str(verdict)


def test_a_prediction_half_made_is_not_solved_and_names_what_is_missing():
    verdict = evaluate("ch04.dependencies", {"predicted_counts": {}})
    assert verdict.case == "not solved yet" and "but not predicted_order" in verdict.hint, str(verdict)


@pytest.mark.parametrize(
    "exercise_id, names",
    [("ch04.dependencies", "predicted_counts, predicted_order"), ("ch06.inplace", "predicted_raises")],
)
def test_a_prediction_checked_before_its_cell_ran_says_to_run_the_cell(exercise_id, names):
    verdict = evaluate(exercise_id, {})
    assert verdict.case == "not solved yet", str(verdict)  # the grader's report counts it as not solved
    run_the_cell = "run the exercise cell above (after replacing its raise line)"
    assert verdict.hint == f"{names} not defined: {run_the_cell}", str(verdict)


@pytest.mark.parametrize("message", ["", STUB_MESSAGE])
def test_the_stubs_not_implemented_error_is_not_solved_yet(message):
    def describe(v):
        raise NotImplementedError(message)

    verdict = evaluate("ch02.describe", {"describe": describe})
    assert verdict.case == "not solved yet", str(verdict)
    assert "replace the `raise NotImplementedError(...)` line" in verdict.hint  # the stubs carry a message


@pytest.mark.parametrize(
    "exercise, name", [("ch02.predict_grad", "predicted_a_grad"), ("ch06.accumulate", "grad_after_one")]
)
def test_a_prediction_in_the_wrong_form_is_told_the_form(exercise, name):
    namespace = {n: [0.0] * 3 for n in ("grad_after_one", "grad_after_two", "grad_after_reset")}
    namespace.update({"predicted_a_grad": [0.0, 0.0], "predicted_b_grad": None, name: "3.5, 4.5"})
    verdict = evaluate(exercise, namespace)
    assert (verdict.case, verdict.expected, verdict.got) == (name, "a list of numbers", "3.5, 4.5"), str(
        verdict
    )


def test_a_device_prediction_in_the_wrong_form_is_told_the_form_and_cuda_counts_as_cuda_0():
    answers = {DEVICE_KEYS[0]: "cpu", DEVICE_KEYS[1]: "False", DEVICE_KEYS[2]: "cuda", DEVICE_KEYS[3]: "cpu"}
    verdict = evaluate("ch09.grad_device", {"predicted": answers})
    assert (verdict.case, verdict.expected) == ("predicted['x_gpu.is_leaf']", "True or False"), str(verdict)
    assert evaluate("ch09.grad_device", {"predicted": answers | {DEVICE_KEYS[1]: False}}).passed
    wrong = evaluate("ch09.grad_device", {"predicted": answers | {DEVICE_KEYS[1]: True}})
    assert (
        wrong.case == "1 of the 4 predictions is wrong" and "x_gpu.is_leaf: does x.cuda() have" in wrong.hint
    )


def _pairs(fn, output_nr=None, as_list=False):
    pairs = []
    for (prev, arg_id), needed in zip(fn.previous_functions, fn.needs_input_grad):
        pair = (prev, prev.output_ids[arg_id] if output_nr is None else output_nr) if needed else (None, 0)
        pairs.append(list(pair) if as_list else pair)
    return tuple(pairs)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (lambda fn: _pairs(fn, as_list=True), "pair 0 must be a tuple of two"),
        (
            lambda fn: _pairs(fn, output_nr=0),
            "pair 0: which output of that Function is input 0? (its output_ids)",
        ),
        (lambda fn: _pairs(fn)[:1], "one pair per input: this Function has 2"),
    ],
    ids=["lists", "output 0", "one pair"],
)
def test_a_wrong_next_functions_is_pointed_at_its_first_wrong_pair(answer, hint):
    verdict = evaluate("ch10.next_functions", {"next_functions_of": answer})
    assert not verdict.passed and verdict.hint.startswith(hint), str(verdict)
    assert evaluate("ch10.next_functions", {"next_functions_of": _pairs}).passed


def test_an_accumulate_grad_key_in_the_modern_prediction_is_named():
    verdict = evaluate("ch10.predict_modern", {"predicted_next": {"AccumulateGrad": [], "MulBackward0": []}})
    assert verdict.case == "the keys of predicted_next" and "only inside the pairs" in verdict.hint
