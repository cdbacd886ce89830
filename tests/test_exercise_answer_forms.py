"""An answer right in substance and wrong in form (None in quotes, one number for a list, a list for
an array or a dict) is told what form to give, not given a hint about the substance."""

from __future__ import annotations

import pytest
from test_exercises import verdict

GRAD_DEVICE = {
    "x.grad device": "cpu",
    "x_gpu.is_leaf": False,
    "fc.weight.grad device": "cuda:0",
    "grad device of the Variable w was copied from": "cpu",
}
ACCUMULATE = "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [4.0, -8.0, 12.0]\ngrad_after_reset = {}\n"
ONE_HOT = (
    "def one_hot(labels, num_classes):\n"
    "    xp = get_array_module(labels)\n"
    "    out = xp.zeros((len(labels), num_classes), dtype=xp.float32)\n"
    "    out[xp.arange(len(labels)), labels] = 1\n"
    "    return out{}\n"
)


@pytest.mark.parametrize(
    "exercise_id, source, case, hint",
    [
        (
            "ch02.predict_grad",
            'predicted_a_grad = [3.5, 4.5]\npredicted_b_grad = "None"\n',
            "b.grad",
            "write None without quotes: 'None' is a string",
        ),
        (
            "ch09.grad_device",
            f"predicted = {dict(GRAD_DEVICE, **{'x_gpu.is_leaf': ' False'})!r}\n",
            "predicted['x_gpu.is_leaf']",
            "write False without quotes: ' False' is a string",
        ),
    ],
    ids=["None", "False"],
)
def test_none_true_or_false_in_quotes_is_told_to_drop_the_quotes(exercise_id, source, case, hint):
    result = verdict(exercise_id, source)
    assert not result.passed and (result.case, result.hint) == (case, hint), str(result)


@pytest.mark.parametrize(
    "exercise_id, source, name, shape",
    [
        ("ch02.predict_grad", "predicted_a_grad = 8.0\npredicted_b_grad = None\n", "a.grad after", (2,)),
        (
            "ch02.predict_grad",
            "predicted_a_grad = [[3.5, 4.5]]\npredicted_b_grad = None\n",
            "a.grad after",
            (2,),
        ),
        ("ch06.accumulate", ACCUMULATE.format("3.0"), "grad_after_reset", (3,)),
    ],
    ids=["number", "nested", "reset"],
)
def test_a_prediction_of_the_wrong_shape_is_told_the_shape_not_a_hint_about_the_numbers(
    exercise_id, source, name, shape
):
    result = verdict(exercise_id, source)
    assert not result.passed and result.case.startswith(name) and result.case.endswith("(shape)")
    assert result.hint == f"write one number per element, as a list: the answer has shape {shape}", str(
        result
    )


def test_predictions_given_as_a_list_are_told_to_keep_the_template_dict():
    result = verdict("ch09.grad_device", f"predicted = {list(GRAD_DEVICE.values())!r}\n")
    assert not result.passed and result.got == "list"
    assert result.hint.startswith("keep the template's dict: predicted = {"), str(result)


@pytest.mark.parametrize("ending, got", [(".tolist()", "a list"), (".copy(), 1", "a tuple")])
def test_one_hot_returning_a_list_is_told_to_return_the_array_not_blamed_for_an_error(ending, got):
    """The check read got.dtype, so a list's AttributeError was reported as the student's code raising."""
    result = verdict("ch09.one_hot", ONE_HOT.format(ending))
    assert not result.passed and result.got == got, str(result)
    assert result.hint == "one_hot returns the array itself, made with xp (not a list, not .tolist())"
    assert "raised" not in result.case


def test_the_form_that_is_right_passes():
    assert verdict("ch06.accumulate", ACCUMULATE.format("[3.0, 3.0, 3.0]")).passed
    assert verdict("ch09.grad_device", f"predicted = {GRAD_DEVICE!r}\n").passed
    assert verdict("ch09.one_hot", ONE_HOT.format("")).passed


def test_a_describe_that_names_the_creator_by_its_modern_name_is_told_the_kind_is_right():
    source = (
        "def describe(v):\n"
        "    if v.volatile:\n"
        '        return "volatile"\n'
        "    if isinstance(v.creator, Leaf):\n"
        '        return "leaf, requires grad" if v.requires_grad else "leaf, no grad"\n'
        '    return "computed by " + v.creator.name()\n'
    )
    result = verdict("ch02.describe", source)
    assert not result.passed and result.got == "computed by MulBackward0", str(result)
    assert result.hint == "right kind; name the creator by its class in the kit, type(v.creator).__name__"


@pytest.mark.parametrize(
    "orders, hint",
    [
        ('("naive")', "'naive' alone is a string: write {'naive'}, a set (brackets alone make none)"),
        ('{"Naive", "FIFO"}', "write each name exactly as listed, in lower case"),
    ],
    ids=["string", "capitals"],
)
def test_double_count_orders_in_the_wrong_form_are_told_the_form(orders, hint):
    result = verdict("ch10.double_count", f"wrong_orders = {orders}\nnaive_grad_a = 0.0\n")
    assert not result.passed and result.case == "wrong_orders" and result.hint == hint, str(result)


@pytest.mark.parametrize(
    "exercise_id, source, text",
    [
        ("ch10.double_count", 'wrong_orders = {"naive"}\nnaive_grad_a = "32"\n', "'32'"),
        ("ch02.predict_grad", 'predicted_a_grad = ["3.5", 4.5]\npredicted_b_grad = None\n', "'3.5'"),
        ("ch06.accumulate", ACCUMULATE.format('["3.0", "3.0", "3.0"]'), "'3.0'"),
    ],
    ids=["ch10", "ch02", "ch06"],
)
def test_a_predicted_number_in_quotes_is_told_to_drop_them(exercise_id, source, text):
    """NumPy reads "32" as 32.0, so a string passed for a number."""
    result = verdict(exercise_id, source)
    assert not result.passed and result.hint == f"write numbers without quotes: {text} is a string", str(
        result
    )


@pytest.mark.parametrize(
    "pair, got",
    [
        ("[prev, prev.output_ids[arg_id]] if needed else [None, 0]", [["Leaf", 0], [None, 0]]),
        (
            "(type(prev).__name__, prev.output_ids[arg_id]) if needed else (None, 0)",
            [("'Leaf' (a string)", 0), (None, 0)],
        ),
    ],
    ids=["lists", "names"],
)
def test_next_functions_pairs_are_shown_in_the_form_given(pair, got):
    """Lists were shown as tuples and names as 'str', so got looked like expected, or named no class."""
    source = (
        "def next_functions_of(fn):\n"
        "    pairs = zip(fn.previous_functions, fn.needs_input_grad)\n"
        f"    return tuple({pair} for (prev, arg_id), needed in pairs)\n"
    )
    result = verdict("ch10.next_functions", source)
    assert not result.passed and result.expected == [("Leaf", 0), (None, 0)] and result.got == got, str(
        result
    )


@pytest.mark.parametrize("nr", ['"0"', "None", "0.0"])
def test_a_modern_pair_whose_output_number_is_no_int_is_told_so(nr):
    source = (
        "predicted_next = {\n"
        '    "MulBackward0": [("AccumulateGrad", 0), (None, 0)],\n'
        f'    "ExpBackward0": [("MulBackward0", {nr})],\n'
        '    "AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)],\n'
        "}\n"
    )
    result = verdict("ch10.predict_modern", source)
    assert not result.passed and result.case == "ExpBackward0.next_functions", str(result)
    assert (
        result.hint.startswith("the second element of ('MulBackward0', ")
        and "an int such as 0" in result.hint
    )
