"""What a refused answer is told, for common mistakes: the verdict names the mistake (a tuple where one
output belongs, a missing return, a misnamed answer, a stub method left, an np.max that reduces, ...)
instead of crashing in the check or blaming something else."""

from __future__ import annotations

import inspect
import re
import textwrap

import pytest
from test_exercises import CASES, verdict_for

from varfunc.engine import ExecutionEngine
from varfunc.grading.core import RAISED, STUB_MESSAGE

STUB = f'raise NotImplementedError("{STUB_MESSAGE}")'


def verdict(exercise_id: str, source: str):
    path = next(p for p, ex in CASES if ex == exercise_id)
    return verdict_for(path, exercise_id, textwrap.dedent(source))


def function_class(name: str, forward: str, backward: str, args: str = "a") -> str:
    """class name(Function) with these bodies of forward(self, args) and backward(self, grad_output)."""
    forward, backward = (textwrap.indent(body, " " * 8) for body in (forward, backward))
    return (
        f"class {name}(Function):\n    def forward(self, {args}):\n{forward}\n"
        f"    def backward(self, grad_output):\n{backward}\n"
    )


SUM_TO_SHAPE = """
def my_sum_to_shape(grad, shape):
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)
"""
BROADCAST_BACKWARD = (
    "a, b = self.saved_tensors\n"
    "return my_sum_to_shape(grad_output * b, a.shape), my_sum_to_shape(grad_output * a, b.shape)"
)
SIGMOID_BACKWARD = "(y,) = self.saved_tensors\nreturn grad_output * y * (1 - y)"
SOFTPLUS_BACKWARD = "(a,) = self.saved_tensors\nreturn grad_output * 0.5 * (1 + np.tanh(a / 2))"
MATMUL_BACKWARD = (
    "a, b = self.saved_tensors\n"
    "grad_a = grad_output @ b.T if self.needs_input_grad[0] else None\n"
    "grad_b = a.T @ grad_output if self.needs_input_grad[1] else None\n"
    "return grad_a, grad_b"
)

TWO_OUTPUTS = [
    (
        "ch05.sigmoid",
        function_class(
            "MySigmoid",
            "y = 1 / (1 + np.exp(-a))\nself.save_for_backward(y)\nreturn y, a.copy()",
            SIGMOID_BACKWARD,
        ),
        "MySigmoid",
    ),
    (
        "ch05.matmul",
        function_class(
            "MyMatmul", "self.save_for_backward(a, b)\nreturn a @ b, a.copy()", MATMUL_BACKWARD, "a, b"
        ),
        "MyMatmul",
    ),
    (
        "ch05.broadcast",
        SUM_TO_SHAPE
        + function_class(
            "BroadcastMul", "self.save_for_backward(a, b)\nreturn a * b, b.copy()", BROADCAST_BACKWARD, "a, b"
        ),
        "BroadcastMul",
    ),
    (
        "ch07.softplus",
        function_class(
            "Softplus",
            "self.save_for_backward(a)\nreturn np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a))), a.copy()",
            SOFTPLUS_BACKWARD,
        ),
        "Softplus",
    ),
    (
        "ch07.mul_add",
        function_class(
            "MulAdd", "self.save_for_backward(a, b)\nreturn a * b + c, c.copy()", "return None", "a, b, c"
        ),
        "MulAdd",
    ),
]


@pytest.mark.parametrize("exercise_id, source, name", TWO_OUTPUTS, ids=[t[0] for t in TWO_OUTPUTS])
def test_two_outputs_where_one_belongs_are_named_not_a_crash_in_the_check(exercise_id, source, name):
    result = verdict(exercise_id, source)
    assert result.case.endswith(f"{name}()(...) gave 2 outputs (a tuple)"), str(result)
    assert result.got == "a tuple of 2" and "forward returns one array" in result.hint, str(result)


def test_three_outputs_of_the_clamp_are_counted_and_the_two_named():
    clamp = """
    class ClampSTE(Function):
        def __init__(self, lo, hi):
            super().__init__()
            self.lo, self.hi = lo, hi
        def forward(self, a):
            mask = ((a < self.lo) | (a > self.hi)).astype(a.dtype)
            self.mark_non_differentiable(mask)
            return np.clip(a, self.lo, self.hi), mask, a.copy()
        def backward(self, grad_output, grad_mask=None, grad_extra=None):
            return grad_output
    """
    result = verdict("ch07.clamp_ste", clamp)
    assert result.got == "a tuple of 3", str(result)
    assert "forward returns 2 arrays: the clamped values and the mask" in result.hint, str(result)


PREDICTED_NEXT = (
    'predicted_next = {{"AddBackward0": [("ExpBackward0", 0), ("AccumulateGrad", 0)], '
    '"ExpBackward0": {exp}, "MulBackward0": {mul}}}\n'
)


@pytest.mark.parametrize(
    "exp, mul, says",
    [
        ('("MulBackward0", 0)', '[("AccumulateGrad", 0), (None, 0)]', "one pair alone still goes in a list"),
        ('[("MulBackward0", 0)]', '[("AccumulateGrad", 0), None]', "None alone is not a pair"),
        ('[("MulBackward0", 0)]', "[0, 0]", "0 alone is not a pair"),
        (
            '[("MulBackward0")]',
            '[("AccumulateGrad", 0), (None, 0)]',
            "('MulBackward0') is a string, not a pair",
        ),
    ],
    ids=["pair-no-list", "bare-None", "bare-ints", "string"],
)
def test_a_badly_shaped_next_functions_prediction_is_told_the_form(exp, mul, says):
    result = verdict("ch10.predict_modern", PREDICTED_NEXT.format(exp=exp, mul=mul))
    assert RAISED not in result.case and result.case.endswith(".next_functions"), str(result)
    assert result.expected == "a list of (name or None, output_nr) pairs" and says in result.hint, str(result)


def test_a_predicted_next_that_is_no_dict_shows_its_type_by_name():
    result = verdict("ch10.predict_modern", 'predicted_next = [("AddBackward0", 0)]\n')
    assert result.got == "list" and result.hint, str(result)


def test_next_functions_of_names_instead_of_functions_is_told_to_return_the_functions():
    source = """
    def next_functions_of(fn):
        return tuple(
            (type(prev).__name__, prev.output_ids[arg]) if needed else (None, 0)
            for (prev, arg), needed in zip(fn.previous_functions, fn.needs_input_grad)
        )
    """
    result = verdict("ch10.next_functions", source)
    assert "return the Function objects, not their names" in result.hint, str(result)


NO_RETURN = [
    (
        "ch05.broadcast",
        SUM_TO_SHAPE.replace("    return grad.sum", "    grad.sum")
        + function_class(
            "BroadcastMul", "self.save_for_backward(a, b)\nreturn a * b", BROADCAST_BACKWARD, "a, b"
        ),
    ),
    (
        "ch09.one_hot",
        """
    def one_hot(labels, num_classes):
        xp = get_array_module(labels)
        out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)
        out[xp.arange(labels.shape[0]), labels] = 1
    """,
    ),
]


@pytest.mark.parametrize("exercise_id, source", NO_RETURN, ids=[n[0] for n in NO_RETURN])
def test_a_function_that_returns_none_is_asked_about_its_return(exercise_id, source):
    result = verdict(exercise_id, source)
    assert result.got is None and "(shape)" not in result.case, str(result)
    assert result.hint == "got None: did the function forget `return`?", str(result)


def test_a_prediction_left_none_is_told_to_set_the_variable():
    source = (
        "grad_after_one = [2.0, -4.0, 6.0]\ngrad_after_two = [4.0, -8.0, 12.0]\ngrad_after_reset = None\n"
    )
    result = verdict("ch06.accumulate", source)
    assert result.case == "grad_after_reset" and result.got is None, str(result)
    assert result.hint.startswith("grad_after_reset is None: set it to the numbers you predict"), str(result)


def test_np_max_with_an_axis_is_told_it_reduces():
    source = function_class(
        "Softplus",
        "self.save_for_backward(a)\nreturn np.max(a, 0) + np.log1p(np.exp(-np.abs(a)))",
        SOFTPLUS_BACKWARD,
    )
    result = verdict("ch07.softplus", source)
    assert "np.max(a, 0) reduces" in result.hint and "np.maximum(a, 0)" in result.hint, str(result)
    assert "overflows" not in result.hint, str(result)


def test_one_hot_returning_a_variable_is_told_to_return_a_plain_array():
    source = """
    def one_hot(labels, num_classes):
        xp = get_array_module(labels)
        out = xp.zeros((labels.shape[0], num_classes), dtype=xp.float32)
        out[xp.arange(labels.shape[0]), labels] = 1
        return Variable(out)
    """
    result = verdict("ch09.one_hot", source)
    assert result.got == "a Variable", str(result)
    assert "one_hot returns a plain array, not a Variable" in result.hint, str(result)


@pytest.mark.parametrize(
    "got, says",
    [
        ("'Volatile'", "right kind; write exactly 'volatile'"),
        (
            "f'computed by {type(v.creator).__name__}(2)'",
            "use the class name alone, type(v.creator).__name__",
        ),
    ],
)
def test_describe_with_the_right_kind_written_another_way_is_told_so(got, says):
    source = f"""
    def describe(v):
        if v.volatile:
            return {got if "Volatile" in got else "'volatile'"}
        if isinstance(v.creator, Leaf):
            return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'
        return {got if "computed" in got else "f'computed by {type(v.creator).__name__}'"}
    """
    result = verdict("ch02.describe", source)
    assert says in result.hint, str(result)


def test_describe_names_an_add_creator_with_an():
    source = """
    def describe(v):
        if v.volatile:
            return 'volatile'
        if isinstance(v.creator, Leaf):
            return 'leaf, requires grad' if v.requires_grad else 'leaf, no grad'
        name = type(v.creator).__name__
        return 'computed by ' + name if name != 'Add' else 'leaf, no grad'
    """
    result = verdict("ch02.describe", source)
    assert result.case == "describe(x + x)" and "creator an Add:" in result.hint, str(result)


@pytest.mark.parametrize(
    "exercise_id, source, defined",
    [
        ("ch03.div", "class div(Function):\n    pass\n", "div"),
        ("ch05.broadcast", "def sum_to_shape(grad, shape):\n    return grad\n", "sum_to_shape"),
    ],
)
def test_an_answer_under_another_name_is_told_to_rename_it(exercise_id, source, defined):
    result = verdict(exercise_id, source)
    assert result.case.endswith("not defined"), str(result)
    assert "with exactly that name (case-sensitive)" in result.hint and f"defines {defined}:" in result.hint


@pytest.mark.parametrize(
    "source, made",
    [
        ("class Mul:\n    pass\n", "a class"),
        ("def Mul(a, b):\n    return a * b\n", "a function, not a class"),
    ],
)
def test_a_mul_that_is_no_function_subclass_is_told_to_inherit_function(source, made):
    result = verdict("ch03.mul", source)
    assert result.got == f"Mul is {made}" and result.hint == "Mul must inherit Function: class Mul(Function):"


@pytest.mark.parametrize(
    "exercise_id, source, left",
    [
        (
            "ch03.mul",
            function_class("Mul", "self.save_for_backward(a, b)\nreturn a * b", STUB, "a, b"),
            "Mul.backward still raises",
        ),
        (
            "ch05.broadcast",
            SUM_TO_SHAPE + function_class("BroadcastMul", STUB, STUB, "a, b"),
            "BroadcastMul.forward and BroadcastMul.backward still raise",
        ),
    ],
    ids=["mul-backward", "broadcast-class"],
)
def test_a_partly_solved_exercise_names_the_methods_still_raising(exercise_id, source, left):
    result = verdict(exercise_id, source)
    assert result.case == "not solved yet" and result.hint.startswith(left), str(result)
    assert "replace the `raise NotImplementedError(...)` line" in result.hint


def test_add_grad_writing_to_another_slot_is_told_which_slot():
    # the engine's own _add_grad, as a student writes it, with every slot shifted by one
    kits = textwrap.dedent(inspect.getsource(ExecutionEngine._add_grad))
    source = re.sub(r"def _add_grad\(.*\n", "def add_grad(need_copy, buffer, output_nr, grad):\n", kits)
    source = source.replace("buffer[output_nr]", "buffer[output_nr - 1]").replace(
        "(id(buffer), output_nr)", "(id(buffer), output_nr - 1)"
    )
    assert "buffer[output_nr]" not in source and "(id(buffer), output_nr - 1)" in source, source
    result = verdict("ch04.add_grad", source)
    assert "slot 0 got the gradients meant for slot 1" in result.hint and "buffer[output_nr]" in result.hint


def test_a_predicted_order_without_the_leaves_is_told_how_many_the_engine_pops():
    source = """
    predicted_counts = {"Sum#5": [0], "Mul#4": [1], "Add#3": [1], "Mul#2": [2], "x": [2], "y": [1]}
    predicted_order = ["Sum#5", "Mul#4", "Add#3", "Mul#2"]
    """
    result = verdict("ch04.dependencies", source)
    assert result.hint.startswith("your list has 4 names; the engine pops 6 (the Leaf nodes too)"), str(
        result
    )


def test_a_clip_hook_logging_into_a_list_of_its_own_is_told_to_append_to_the_given_one():
    source = """
    def make_clip_hook(limit, log):
        log = []
        def hook(grad):
            log.append(float(np.abs(grad).max()))
            return np.clip(grad, -limit, limit)
        return hook
    """
    result = verdict("ch06.clip_hook", source)
    assert "the log list given to make_clip_hook is still empty" in result.hint, str(result)


@pytest.mark.parametrize(
    "exercise_id, source",
    [
        ("ch06.inplace", "predicted_raises = {}\n"),
        ("ch10.double_count", "wrong_orders = {}\nnaive_grad_a = 32.0\n"),
    ],
)
def test_an_empty_dict_for_an_empty_set_is_named(exercise_id, source):
    assert verdict(exercise_id, source).hint == "{} is an empty dict; an empty set is set()"


def test_a_matmul_keeping_its_inputs_as_attributes_fails():
    forward = "self.a, self.b = a, b\nreturn a @ b"
    backward = (
        "a, b = self.a, self.b\n"
        "return (grad_output @ b.T if self.needs_input_grad[0] else None, "
        "a.T @ grad_output if self.needs_input_grad[1] else None)"
    )
    result = verdict("ch05.matmul", function_class("MyMatmul", forward, backward, "a, b"))
    assert not result.passed and result.expected == "save_for_backward", str(result)
