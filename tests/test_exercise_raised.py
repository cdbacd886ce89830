"""What a refused answer is told when the student's code raised or was interrupted: one line for an
endless loop, a snippet that runs the failing case, the kit's own message when it says the fix."""

from __future__ import annotations

import traceback

import pytest
from exercises import ch07, ch08
from test_exercise_messages import function_class, verdict

from varfunc import Function, Variable
from varfunc.errors import VarfuncError
from varfunc.grading import check, passes
from varfunc.grading.advice import STUB_MESSAGE, missing_hint, stub_hint
from varfunc.grading.core import RAISED, lookup, raise_with_hint, raised_verdict, show


def _endless(values):
    while True:
        raise KeyboardInterrupt  # what Ctrl-C raises in an endless loop


def test_ctrl_c_in_passes_prints_one_line_about_an_endless_loop_and_stops_the_cell(capsys):
    with pytest.raises(KeyboardInterrupt) as interrupt:
        passes("ch02.make_param", {"make_param": _endless})
    out = capsys.readouterr().out
    assert out.startswith("✘ ch02.make_param interrupted while running your make_param"), out
    assert "did not finish (an endless loop?)" in out and out.count("\n") == 1, out
    frames = [f.name for f in traceback.extract_tb(interrupt.value.__traceback__) if "varfunc" in f.filename]
    assert frames == ["passes"]  # not the checks' own frames


def test_ctrl_c_in_check_asks_about_an_endless_loop(capsys):
    with pytest.raises(KeyboardInterrupt):
        check("ch02.make_param", {"make_param": _endless})
    assert "(an endless loop?)" in capsys.readouterr().out


def test_code_that_raised_on_random_operands_gets_a_snippet_to_run():
    source = function_class(
        "Mul",
        "self.save_for_backward(a, b)\nreturn a * b",
        "a, b = self.saved_tensors\nreturn grad_output * b.T, grad_output * a",
        "a, b",
    )
    result = verdict("ch03.mul", source)
    assert result.case.endswith(RAISED), str(result)
    assert result.hint.startswith("to see the traceback, run this in a new cell: a = Variable(np.full("), str(
        result
    )


def test_the_kits_own_error_is_not_followed_by_the_generic_advice():
    source = function_class(
        "MySigmoid",
        "y = 1 / (1 + np.exp(-a))\nself.save_for_backward(y)\nreturn y",
        "(y,) = self.saved_tensors\ngrad_output *= y * (1 - y)\nreturn grad_output",
    )
    result = verdict("ch05.sigmoid", source)
    assert result.hint == "the kit's error message (got) says what to change", str(result)


def test_a_backward_unpacking_tensors_forward_never_saved_is_told_to_save_them():
    """Before: the bare "not enough values to unpack (expected 2, got 0)" and generic advice."""
    source = function_class(
        "Div", "return a / b", "a, b = self.saved_tensors\nreturn grad_output / b, None", "a, b"
    )
    result = verdict("ch03.div", source)
    assert "not enough values to unpack" in result.got, str(result)
    assert result.hint.startswith("self.saved_tensors is empty: forward must pass"), str(result)


def test_a_matmul_gradient_of_the_wrong_shape_gets_the_shape_hint():
    backward = "a, b = self.saved_tensors\nreturn b.T @ grad_output, a.T @ grad_output"
    result = verdict(
        "ch05.matmul",
        function_class("MyMatmul", "self.save_for_backward(a, b)\nreturn a @ b", backward, "a, b"),
    )
    assert result.case.endswith(RAISED) and "each gradient has its input's shape" in result.hint, str(result)


def test_a_huge_error_message_is_cut_in_the_verdict():
    """Before: the whole message (a million characters here) went into the verdict and the report."""
    source = function_class(
        "Mul", "raise ValueError('x' * 1_000_000)", "return grad_output, grad_output", "a, b"
    )
    result = verdict("ch03.mul", source)
    assert len(result.got) > 1_000_000 and len(str(result)) < 3_000, len(str(result))
    assert "got:      'ValueError: xxx" in str(result) and "xxx...xxx" in str(result)


def test_grad_data_read_as_the_gradient_is_told_that_grad_is_an_array():
    """Before: "'memoryview' object has no attribute 'copy'" and the generic advice."""
    source = ch08.MOMENTUM_RIGHT.replace("g = p.grad\n", "g = p.grad.data\n")
    assert source != ch08.MOMENTUM_RIGHT
    result = verdict("ch08.momentum_sgd", source)
    assert "'memoryview' object" in result.got and "(p.grad, not p.grad.data)" in result.hint, str(result)


def test_an_overflowing_softplus_is_told_it_overflows_not_that_np_max_reduces():
    source = next(code for label, code in ch07.WRONG_ANSWERS["ch07.softplus"] if label.startswith("naive"))
    result = verdict("ch07.softplus", source)
    assert "overflows" in result.hint and "reduces" not in result.hint, str(result)


def test_a_checks_hint_for_an_error_wins_over_the_kits_message_and_the_innermost_wins():
    error = VarfuncError("the kit's message")
    raise_with_hint(error, "inner")
    raise_with_hint(error, "outer")
    assert raised_verdict(lookup("ch03.mul"), error).hint == "inner"


def test_an_unpacking_error_in_a_backward_that_saved_its_input_gets_no_save_hint():
    source = function_class(
        "Mul",
        "self.save_for_backward(a, b)\nreturn a * b",
        "a, b = self.saved_tensors\nm, n = a.shape[:1]\nreturn grad_output * b, grad_output * a",
        "a, b",
    )
    result = verdict("ch03.mul", source)
    assert "not enough values to unpack" in result.got, str(result)
    assert "save_for_backward" not in result.hint, str(result)


def test_a_long_list_is_cut_in_a_verdict():
    assert len(show(list(range(100_000)))) < 500


def test_a_missing_answer_is_matched_only_with_the_notebooks_own_functions():
    def MSE(a, b):  # noqa: N802 - the student's name
        return ((a - b) ** 2).mean()

    MSE.__module__ = "__main__"
    assert missing_hint(["variable"], {"__name__": "__main__", "Variable": Variable}) == (
        "run the exercise cell above first"
    )
    assert "this notebook defines MSE: rename it mse" in missing_hint(
        ["mse"], {"__name__": "__main__", "MSE": MSE}
    )


def test_only_the_methods_still_raising_the_stubs_error_are_named():
    namespace: dict = {"Function": Function}
    exec(
        function_class(
            "Flip", f"raise NotImplementedError({STUB_MESSAGE!r})", "raise NotImplementedError('2D only')"
        ),
        namespace,
    )
    hint = stub_hint(("Flip",), namespace, NotImplementedError(STUB_MESSAGE))
    assert hint.startswith("Flip.forward still raises NotImplementedError: replace"), hint
