"""A failed verdict says what is wrong with this student's code: the case that ran when the code
raised, a hint that fits the mistake (not one that restates what the student got right, nor a recipe
that gives the answer away), and case texts that say what was set up."""

from __future__ import annotations

import numpy as np
import pytest
from exercises import ch03, ch05, ch08
from test_exercises import CASES, solution_source, states, verdict, verdict_for, wrong_answers

from varfunc.grading import ch04 as ch04_checks
from varfunc.grading import ch08 as ch08_checks
from varfunc.grading import evaluate
from varfunc.grading.core import RAISED


def wrong(exercise_id: str, label: str) -> str:
    return next(source for name, source in wrong_answers(exercise_id) if name == label)


def test_parameters_of_one_shape_sharing_a_buffer_fail_and_are_told_so():
    result = verdict("ch08.momentum_sgd", ch08.MOMENTUM_KEYED_BY_SHAPE)
    assert not result.passed
    assert result.case.startswith("two parameters of the same shape"), str(result)
    assert "a buffer of its own" in result.hint, str(result)


def test_parameters_kept_as_a_used_up_generator_are_told_to_make_a_list():
    result = verdict("ch08.momentum_sgd", ch08.MOMENTUM_KEEPS_THE_GENERATOR)
    assert not result.passed and "generator" in result.hint and "list" in result.hint, str(result)
    assert "momentum * buf" not in result.hint, str(result)


def test_a_wrong_sigmoid_formula_fails_gradcheck_not_the_saved_tensors_case():
    result = verdict("ch05.sigmoid", ch05.SIGMOID_WRONG_SIGN)
    assert result.case.startswith("gradcheck on shape"), str(result)
    assert "kept elsewhere" not in result.hint, str(result)


def test_a_sigmoid_gradient_from_the_input_kept_aside_is_told_so_without_the_checks_internals():
    result = verdict("ch05.sigmoid", ch05.SIGMOID_RECOMPUTES_FROM_AN_ATTRIBUTE)
    assert result.case == "backward computes its gradient from self.saved_tensors", str(result)
    assert "kept elsewhere" in result.hint, str(result)
    assert "replaced" not in str(result) and "y2" not in str(result)


@pytest.mark.parametrize(
    "exercise_id, source",
    [
        ("ch03.mul", ch03.MUL_MEAN_OVER_STRETCHED),
        ("ch03.mul", ch03.MUL_TAKES_THE_FIRST),
        ("ch03.div", ch03.DIV_TAKES_THE_FIRST),
    ],
    ids=["mean", "take-mul", "take-div"],
)
def test_a_gradient_wrong_only_with_broadcasting_points_at_summing_back(exercise_id, source):
    result = verdict(exercise_id, source)
    assert "(2, 1) and b of shape (1, 3)" in result.case, str(result)
    assert "same-shape cases passed" in result.hint and "sum_to_shape" in result.hint, str(result)
    assert "the gradient for a is" not in result.hint, str(result)


SUM_RESHAPES = (
    """
def my_sum_to_shape(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad if grad.shape == tuple(shape) else grad.sum(axis=0).reshape(shape)
"""
    + ch05.BROADCAST_MUL
)

ONE_HOT_STACKS = """
def one_hot(labels, num_classes):
    xp = get_array_module(labels)
    return xp.stack([xp.eye(num_classes, dtype=xp.float32)[k] for k in labels])
"""


@pytest.mark.parametrize(
    "exercise_id, source, case, error",
    [
        ("ch05.broadcast", SUM_RESHAPES, "my_sum_to_shape(grad of shape (3, 4), (3, 1))", "cannot reshape"),
        (
            "ch06.clip_hook",
            wrong("ch06.clip_hook", "a Python loop over the elements: right for 1-D gradients only"),
            "m.grad for a 2x3 leaf m, L = sum(m^2), limit 2.5",
            "truth value",
        ),
        ("ch09.one_hot", ONE_HOT_STACKS, "one_hot([], 3) (no labels)", "ValueError"),
    ],
    ids=["broadcast", "clip_hook", "one_hot"],
)
def test_code_that_raised_is_told_which_case_ran_it(exercise_id, source, case, error):
    result = verdict(exercise_id, source)
    assert result.case == f"{case}: {RAISED}", str(result)
    assert error in result.got and "expected" not in str(result), str(result)


def recording(check, cases: list):
    """check (expect_close or expect_equal), noting the case of every call in cases."""

    def record(case, *args, **kwargs):
        cases.append(case)
        return check(case, *args, **kwargs)

    return record


def test_the_add_grad_cases_each_say_their_whole_setup(monkeypatch):
    cases: list = []
    for name in ("expect_close", "expect_equal"):
        monkeypatch.setattr(ch04_checks, name, recording(getattr(ch04_checks, name), cases))
    path = next(p for p, ex in CASES if ex == "ch04.add_grad")
    assert verdict_for(path, "ch04.add_grad", solution_source(states(path)["ch04_add_grad"][1])).passed
    assert len(cases) > 10 and len(set(cases)) == len(cases), cases
    assert not any(case.startswith("...") for case in cases), cases


def test_a_hook_that_clips_only_from_above_is_told_the_bottom_is_not_clipped():
    result = verdict("ch06.clip_hook", wrong("ch06.clip_hook", "clips only from above"))
    assert "below -1 are not" in result.hint, str(result)


def test_none_none_for_an_input_without_gradient_is_not_sent_to_output_ids():
    result = verdict(
        "ch10.next_functions",
        wrong("ch10.next_functions", "(None, None) for an input that needs no gradient"),
    )
    assert "output_ids" not in result.hint and "(None, 0)" in result.hint, str(result)


def test_describe_hints_show_the_variable_not_the_order_of_the_tests():
    for label, source in wrong_answers("ch02.describe"):
        result = verdict("ch02.describe", source)
        assert "first, then" not in result.hint, (label, str(result))
    result = verdict("ch02.describe", wrong("ch02.describe", "asks requires_grad before volatile"))
    assert result.case == "describe(a volatile Variable)" and "volatile=True" in result.hint, str(result)


def test_training_loop_hints_say_where_the_losses_part_not_the_order_of_the_calls():
    for label, source in wrong_answers("ch08.training_loop"):
        result = verdict("ch08.training_loop", source)
        assert "optimizer.zero_grad(); loss" not in result.hint, (label, str(result))
    piled_up = verdict(
        "ch08.training_loop", wrong("ch08.training_loop", "no zero_grad: gradients accumulate across steps")
    )
    assert "match up to step 2 and differ from step 3" in piled_up.hint, str(piled_up)
    late = wrong("ch08.training_loop", "step before backward (each update uses the previous step's gradient)")
    assert "all 4 losses match" in verdict("ch08.training_loop", late).hint


@pytest.mark.parametrize(
    "ending, says",
    [
        ("    pass\n", "train_losses returned None: end it with return losses"),
        ("    return np.array(losses)\n", "return the list itself, not a ndarray made from it"),
    ],
    ids=["no return", "an array"],
)
def test_a_training_loop_that_returns_no_list_is_not_told_about_loss_variables(ending, says):
    """Before: both got "append loss.item() (a float), not the loss Variable", though they had."""
    steps = (
        "optimizer.zero_grad()",
        "loss = nn.cross_entropy(model(x), y)",
        "loss.backward()",
        "optimizer.step()",
    )
    right = ch08._loop(*steps)
    assert verdict("ch08.training_loop", right).passed
    result = verdict("ch08.training_loop", right.replace("    return losses\n", ending))
    assert not result.passed and says in result.hint, str(result)


@pytest.mark.parametrize(
    "exercise_id, namespace, expected",
    [
        ("ch10.double_count", {"wrong_orders": {"naive"}, "naive_grad_a": "thirty-two"}, "a number"),
        ("ch10.double_count", {"wrong_orders": {"naive"}, "naive_grad_a": [32.0, 16.0]}, "a number"),
        ("ch10.double_count", {"wrong_orders": "naive", "naive_grad_a": 32.0}, None),
        ("ch06.inplace", {"predicted_raises": "ADEG"}, "a set of letters like {'A', 'C'}"),
    ],
)
def test_an_answer_in_the_wrong_form_gets_a_hint(exercise_id, namespace, expected):
    result = evaluate(exercise_id, namespace)
    assert not result.passed and result.hint, str(result)
    assert expected is None or result.expected == expected, str(result)


def test_one_wrong_prediction_is_counted_in_the_singular():
    right = wrong("ch06.inplace", "misses tanh_ and .data assignment").replace('"A", "D"', '"A", "D", "E"')
    assert verdict("ch06.inplace", right).case == "1 of the 7 predictions is wrong"


PREDICTIONS_BY_THE_KIT = [
    (exercise_id, label)
    for exercise_id in ("ch02.predict_grad", "ch04.dependencies", "ch06.accumulate", "ch06.inplace")
    + ("ch10.predict_modern", "ch10.double_count")
    for label, _ in wrong_answers(exercise_id)
    if any(word in label for word in ("computed", "code run", "snippet_raises", "walked", "viz.trace"))
]


@pytest.mark.parametrize(
    "exercise_id, label", PREDICTIONS_BY_THE_KIT, ids=[p[1] for p in PREDICTIONS_BY_THE_KIT]
)
def test_a_prediction_computed_by_running_code_is_refused_as_not_by_hand(exercise_id, label):
    result = verdict(exercise_id, wrong(exercise_id, label))
    assert result.case.endswith(": a prediction written by hand"), str(result)
    assert "(uses `" in result.got and "type the values themselves" in result.hint, str(result)


@pytest.mark.parametrize(
    "exercise_id, source, label, hint",
    [
        ("ch03.mul", ch03.MUL_SWAPPED, "a", "this is b's gradient"),
        ("ch03.mul", ch03.MUL_FORGETS_GRAD_OUTPUT, "a", "grad_output is missing"),
        ("ch03.mul", ch03.MUL_ADDS, "a", "this is grad_output unchanged"),
        ("ch03.div", ch03.DIV_SIGN, "b", "the sign is wrong"),
        ("ch03.div", ch03.DIV_NOT_SQUARED, "b", "one power of b is missing"),
        ("ch03.div", ch03.DIV_MUL_FORWARD, "b", "this is a's gradient"),
    ],
    ids=["mul-swapped", "mul-no-g", "mul-adds", "div-sign", "div-power", "div-like-a"],
)
def test_a_common_wrong_gradient_is_named_not_answered_with_the_formula(exercise_id, source, label, hint):
    result = verdict(exercise_id, source)
    assert result.case.endswith(f"of shape (3,): gradient for {label}"), str(
        result
    )  # the first, same-shape case
    assert result.hint.startswith(hint) and "the gradient for a is" not in result.hint, str(result)


def test_a_wrong_gradient_that_is_no_common_mistake_gets_the_chapters_rule():
    result = verdict("ch03.mul", ch03.MUL_DOUBLED)
    assert result.hint == "the gradient for a is g * b, for b it is g * a", str(result)


@pytest.mark.parametrize(
    "label, hint",
    [
        ("updates by the gradient alone (plain SGD)", "the parameter moved as plain SGD"),
        ("adds the buffer (moves up the gradient)", "the parameter moved up the gradient"),
        ("Nesterov's update", "this is Nesterov's momentum"),
        ("dampened average: buf = momentum * buf + (1 - momentum) * g", "this is a dampened average"),
        ("update with the old buffer, then update the buffer", "each update used the buffer from before"),
        ("zero_grad forgets to zero (gradients pile up)", "the gradients piled up"),
        (
            "the first buffer is the .grad array itself (zero_grad wipes it)",
            "the buffer is the .grad array itself",
        ),
    ],
)
def test_a_momentum_rule_with_a_common_mistake_is_told_which(label, hint):
    result = verdict("ch08.momentum_sgd", wrong("ch08.momentum_sgd", label))
    assert result.hint.startswith(hint), str(result)


@pytest.mark.parametrize(
    "label, hint",
    [
        ("a wrong sign, from the saved output", "the sign is wrong"),
        ("backward forgets the (1 - y) factor", "the factor (1 - y) is missing"),
        ("tanh's derivative 1 - y^2", "1 - y² is tanh's derivative"),
        ("backward forgets to multiply by grad_output", "grad_output is missing"),
    ],
)
def test_a_sigmoid_gradient_with_a_common_mistake_is_told_which(label, hint):
    result = verdict("ch05.sigmoid", wrong("ch05.sigmoid", label))
    assert result.case.startswith("gradcheck on shape") and result.hint.startswith(hint), str(result)


def test_a_backward_that_returns_variables_is_not_told_to_sum_where_nothing_was_broadcast():
    result = verdict("ch03.mul", ch03.MUL_READS_THE_NOTEBOOKS_VARIABLES)
    assert result.case == "Mul with a of shape (3,) and b of shape (3,): backward", str(result)
    assert "sum_to_shape" not in result.hint and "self.saved_tensors" in result.hint, str(result)


@pytest.mark.parametrize(
    "exercise_id, source", [("ch03.mul", ch03.MUL_FLOAT32), ("ch03.div", ch03.DIV_FLOAT32)]
)
def test_a_forward_that_casts_to_float32_is_told_to_keep_the_dtype(exercise_id, source):
    result = verdict(exercise_id, source)
    assert result.case.endswith("dtype of forward's result for float64 inputs"), str(result)
    assert result.got == "float32" and "float32" in result.hint, str(result)


def test_a_slot_replaced_by_each_gradient_is_told_to_add_not_to_copy():
    result = verdict(
        "ch04.add_grad", wrong("ch04.add_grad", "puts each gradient in the slot, in place of the one there")
    )
    assert "added to what it holds, not put in its place" in result.hint and "copy" not in result.hint, str(
        result
    )


@pytest.mark.parametrize(
    "label",
    [
        label
        for label, _ in wrong_answers("ch05.sigmoid")
        if label.startswith(("forward clips", "forward cuts"))
    ],
)
def test_a_sigmoid_clipped_or_cut_off_fails_far_from_zero(label):
    result = verdict("ch05.sigmoid", wrong("ch05.sigmoid", label))
    assert result.case.startswith("forward of [-30, -8, 8, 30], worst at a = "), str(result)
    assert "no clipping or cut-off" in result.hint, str(result)


@pytest.mark.parametrize(
    "label, case, hint",
    [
        ("logs max |g| as an int", "log for the gradient [0.3, -1.75, 0.5]", "a whole number"),
        ("logs max |g| rounded", "log for the gradient [0.3, -1.75, 0.5]", "a whole number"),
        ("clips to the limit made an int", "e.grad for a hook on leaf e", "not to [-1.25, 1.25]"),
    ],
)
def test_a_clip_hook_that_rounds_is_told_so_not_to_work_on_whole_arrays(label, case, hint):
    result = verdict("ch06.clip_hook", wrong("ch06.clip_hook", label))
    assert result.case.startswith(case) and hint in result.hint, str(result)
    assert "whole arrays" not in result.hint, str(result)


@pytest.mark.parametrize(
    "label, hint",
    [
        ("lo and hi made ints in __init__", "made whole numbers"),
        ("lo and hi rounded in __init__", "made whole numbers"),
        ("lo and hi kept on the class: the last ClampSTE made sets them for all", "the other ClampSTE"),
    ],
)
def test_clamp_bounds_rounded_or_shared_between_objects_are_told_which(label, hint):
    result = verdict("ch07.clamp_ste", wrong("ch07.clamp_ste", label))
    assert result.case.startswith("ClampSTE(-0.5, 0.25) and ClampSTE(0, 1) both made"), str(result)
    assert hint in result.hint, str(result)


@pytest.mark.parametrize(
    "label",
    [
        "params kept on the class: the last optimizer made steps them all",
        "lr and momentum kept on the class",
        "buffers kept on the class: optimizers share them",
    ],
)
def test_momentum_state_shared_between_optimizers_fails_with_two_alive(label):
    result = verdict("ch08.momentum_sgd", wrong("ch08.momentum_sgd", label))
    assert result.case.startswith("two MomentumSGD alive at once"), str(result)
    assert "on the class" in result.hint, str(result)


def test_a_momentum_hint_names_a_mistake_only_if_its_rule_fits_every_step():
    """At step 2 a buffer never updated and an update with the old buffer move a parameter alike."""
    result = verdict(
        "ch08.momentum_sgd", wrong("ch08.momentum_sgd", "the buffer is never updated after the first step")
    )
    assert result.case.endswith("after step 2"), str(result)
    assert result.hint.startswith("the buffer stayed the first step's gradient"), str(result)
    start, grads = np.zeros(2), [np.array([1.0, -2.0]), np.array([0.5, 3.0])]
    got = ch08_checks._after_steps("never updated", start, grads, 0.1, 0.9)
    assert ch08_checks._momentum_hint(start, grads, 0.1, 0.9, got) == ch08_checks._MOMENTUM_HINT  # both fit


def test_a_loop_that_zeroes_after_the_step_fails_from_stale_gradients():
    label = "zero_grad at the end of each step: gradients left before the call reach step 1"
    result = verdict("ch08.training_loop", wrong("ch08.training_loop", label))
    assert "left over from a backward run before train_losses" in result.case, str(result)
    assert "step 1's gradient alone" in result.hint, str(result)


def test_predictions_that_name_some_leaves_are_not_told_leaves_count_too():
    assert ch04_checks._no_leaves(["Sum#5", "x"], {"x": 1, "y": 2}) is False
    assert ch04_checks._no_leaves(["Sum#5"], {"x": 1, "y": 2}) is True


def test_an_add_grad_wrong_in_one_slot_only_is_not_told_the_slots_are_swapped():
    def add_grad(need_copy, buffer, output_nr, grad):  # slot 1's gradients land in slot 0, slot 0's nowhere
        if output_nr == 1:
            buffer[0] = grad.copy() if buffer[0] is None else buffer[0] + grad

    with pytest.raises(ch04_checks.CheckFailed) as failure:
        ch04_checks._check_two_slots_of_one_buffer(add_grad, set(), "the hint")
    assert "swapped" not in failure.value.hint and "meant for slot 1" not in failure.value.hint
