"""Wrong answers that once earned full points because every case of their check shared a property
(no operand was 0, no count past the second output was nonzero, backward's dropped products were never
looked for; every optimizer had parameters of its own, in float64, given lr by keyword, and .grad was
looked at after one step only; the loop's reference trained on the very arrays the student's loop got,
and nothing counted forwards or graphs kept): each now fails, at the case added for it."""

from __future__ import annotations

import pytest
from exercises.ch08_more import _FIRST_AND_LATER, _STEPS, _WRAP, _loop, _momentum
from test_exercises import CHAPTERS, verdict_for


def chapter(number: str):
    return next(path for path in CHAPTERS if path.name.startswith(number))


PASSED_BEFORE = {
    "mul_from_output": (
        "03",
        "ch03.mul",
        """class Mul(Function):
    def forward(self, a, b):
        y = a * b
        self.save_for_backward(a, b, y)
        return y
    def backward(self, grad_output):
        a, b, y = self.saved_tensors
        return sum_to_shape(grad_output * y / a, a.shape), sum_to_shape(grad_output * y / b, b.shape)
""",
    ),
    "div_y2_over_a": (
        "03",
        "ch03.div",
        """class Div(Function):
    def forward(self, a, b):
        y = a / b
        self.save_for_backward(a, b, y)
        return y
    def backward(self, grad_output):
        a, b, y = self.saved_tensors
        return sum_to_shape(grad_output / b, a.shape), sum_to_shape(-grad_output * y**2 / a, b.shape)
""",
    ),
    "is_ready_two": (
        "04",
        "ch04.is_ready",
        """def is_ready_for_backward(dependencies, function):
    counts = dependencies[function]
    return counts[0] == 0 and (len(counts) < 2 or counts[1] == 0)
""",
    ),
    "is_ready_sum2": (
        "04",
        "ch04.is_ready",
        """def is_ready_for_backward(dependencies, function):
    return sum(dependencies[function][:2]) == 0
""",
    ),
    "matmul_drop": (
        "05",
        "ch05.matmul",
        """class MyMatmul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a @ b
    def backward(self, grad_output):
        a, b = self.saved_tensors
        grad_a, grad_b = grad_output @ b.T, a.T @ grad_output
        return (grad_a if self.needs_input_grad[0] else None, grad_b if self.needs_input_grad[1] else None)
""",
    ),
    "muladd_drop": (
        "07",
        "ch07.mul_add",
        """class MulAdd(Function):
    def forward(self, a, b, c):
        self.save_for_backward(a, b)
        return a * b + c
    def backward(self, grad_output):
        a, b = self.saved_tensors
        grads = (grad_output * b, grad_output * a, grad_output)
        return tuple(g if n else None for g, n in zip(grads, self.needs_input_grad))
""",
    ),
    "momentum_default_state": (
        "08",
        "ch08.momentum_sgd",
        _momentum(("momentum=0.9):", "momentum=0.9, state={}):"), ("self.state = {}", "self.state = state")),
    ),
    "momentum_class_state": (
        "08",
        "ch08.momentum_sgd",
        _momentum(
            ("class MomentumSGD:\n", "class MomentumSGD:\n    state = {}\n\n"),
            ("        self.state = {}\n", ""),
        ),
    ),
    "momentum_signature_order": (
        "08",
        "ch08.momentum_sgd",
        _momentum(("(self, params, lr, momentum=0.9)", "(self, params, momentum=0.9, lr=0.01)")),
    ),
    "momentum_step_zeroes_grad": (
        "08",
        "ch08.momentum_sgd",
        _momentum(
            (
                "p.data -= self.lr * self.state[p]\n",
                "p.data -= self.lr * self.state[p]\n            p.grad[...] = 0\n",
            )
        ),
    ),
    "momentum_velocity_in_grad": (
        "08",
        "ch08.momentum_sgd",
        _momentum(
            (
                "            g = p.grad\n"
                + _FIRST_AND_LATER
                + "            p.data -= self.lr * self.state[p]",
                "            if p in self.state:\n"
                "                p.grad += self.momentum * self.state[p]  # the velocity built in .grad\n"
                "            self.state[p] = p.grad.copy()\n"
                "            p.data -= self.lr * p.grad",
            )
        ),
    ),
    "momentum_float64_zero_grad": (
        "08",
        "ch08.momentum_sgd",
        _momentum(("p.grad[...] = 0", "p.grad = np.zeros(p.shape)")),
    ),
    "loop_standardises_X_in_place": (
        "08",
        "ch08.training_loop",
        _loop(*_STEPS, head="    X -= X.mean(axis=0)\n    X /= X.std(axis=0)\n" + _WRAP),
    ),
    "loop_permutes_in_place": (
        "08",
        "ch08.training_loop",
        _loop(
            "perm = np.random.default_rng(0).permutation(len(X))", "X[:] = X[perm]", "y[:] = y[perm]", *_STEPS
        ),
    ),
    "loop_keeps_every_graph": (
        "08",
        "ch08.training_loop",
        _loop(*_STEPS).replace(
            "losses.append(loss.item())\n    return losses",
            "losses.append(loss)\n    return [l.item() for l in losses]",
        ),
    ),
    "loop_in_eval_mode": ("08", "ch08.training_loop", _loop(*_STEPS, head="    model.eval()\n" + _WRAP)),
    "loop_second_forward": (
        "08",
        "ch08.training_loop",
        _loop("losses.append(nn.cross_entropy(model(x), y).item())", *_STEPS).replace(
            "        losses.append(loss.item())\n    return", "    return"
        ),
    ),
}

AFRESH = (
    "a second MomentumSGD(params, lr=0.1, momentum=0.9) over a parameter the first one stepped: "
    "p after the second one's first step"
)
CASES = {
    "mul_from_output": "Mul of [0, 1.5, -2] and [2.5, 0.0, -0.5] (a 0 in a and in b): gradient for a",
    "div_y2_over_a": "Div of [0, 1.5, -2] and [0.5, -1.25, 2.0] (a 0 in a): gradient for b",
    "is_ready_two": "dependencies[function] == [0, 0, 1]",
    "is_ready_sum2": "dependencies[function] == [0, 0, 1]",
    "matmul_drop": "backward called directly, with only input 0 requiring grad",
    "muladd_drop": "backward with needs_input_grad=(True, False, True)",
    "momentum_default_state": AFRESH,
    "momentum_class_state": AFRESH,
    "momentum_signature_order": (
        "MomentumSGD([p], 0.1), lr given by position, momentum left at its default: p after 2 steps"
    ),
    "momentum_step_zeroes_grad": "p.grad after step 1 of step(), with the gradient [0.5, -0.25]",
    "momentum_velocity_in_grad": "p.grad after step 2 of step(), with the gradient [-1.0, 0.75]",
    "momentum_float64_zero_grad": (
        "float32 parameters (as nn.Linear makes them), momentum=0.9: step 1: your code raised an error"
    ),
    "loop_standardises_X_in_place": "SGD(lr=0.5, momentum=0.9), 4 steps: X after train_losses",
    "loop_permutes_in_place": "SGD(lr=0.5, momentum=0.9), 4 steps: X after train_losses",
    "loop_keeps_every_graph": "SGD(lr=0.5, momentum=0.9), 4 steps: graphs of earlier steps still alive",
    "loop_in_eval_mode": "SGD(lr=0.5, momentum=0.9), 4 steps: the model's mode while training",
    "loop_second_forward": "SGD(lr=0.5, momentum=0.9), 4 steps: forward passes through the model",
}


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # their 0 / 0
@pytest.mark.parametrize("label", list(PASSED_BEFORE))
def test_a_wrong_answer_that_passed_fails_at_the_case_added_for_it(label):
    number, exercise_id, source = PASSED_BEFORE[label]
    result = verdict_for(chapter(number), exercise_id, source)
    assert not result.passed and result.case == CASES[label], str(result)


def test_a_backward_that_reads_only_the_shape_or_transpose_of_an_unneeded_input_still_passes():
    """The stand-in refuses arithmetic, not what costs nothing: a.shape, a.T taken ahead, a probe."""
    source = (
        "class MyMatmul(Function):\n"
        "    def forward(self, a, b):\n"
        "        self.save_for_backward(a, b)\n"
        "        return a @ b\n"
        "    def backward(self, grad_output):\n"
        "        a, b = self.saved_tensors\n"
        "        a_t, b_t = a.T, b.T\n"
        "        assert not hasattr(a, '__cuda_array_interface__') and a.ndim == b.ndim == 2\n"
        "        grad_a = grad_output @ b_t if self.needs_input_grad[0] else None\n"
        "        grad_b = a_t @ grad_output if self.needs_input_grad[1] else None\n"
        "        return grad_a, grad_b\n"
    )
    assert verdict_for(chapter("05"), "ch05.matmul", source).passed
