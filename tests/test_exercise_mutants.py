"""Wrong answers that only one case of their check catches, or only one hint names (from a mutation
audit of the exercise checks: with that case or that hint's condition gone, each passed or was
blamed on another slip): the case and the hint each fails with are pinned here."""

from __future__ import annotations

import pytest
from exercises.ch08 import WRONG_ANSWERS
from exercises.ch08_more import _STEPS, MORE_WRONG_ANSWERS, _loop, _momentum
from test_exercises import verdict

_LOOP = "SGD(lr=0.5, momentum=0.9), 4 steps"


def corpus(answers: dict, exercise_id: str, label: str) -> str:
    """The source of a wrong answer the corpus already lists, by its label."""
    return dict(answers[exercise_id])[label]


LEN_BEFORE_LIST = _momentum(
    ("        self.state = {}\n", "        self.counts = [0] * len(params)\n        self.state = {}\n")
)
INF_NORM = """
import numpy as np

def make_clip_hook(limit, log):
    def hook(g):
        log.append(float(np.linalg.norm(g, np.inf)))
        return np.clip(g, -limit, limit)
    return hook
"""

CASES = {
    "p.data[:] -= ... (a 0-d parameter has no [:])": (
        "ch08.momentum_sgd",
        _momentum(("p.data -= self.lr", "p.data[:] -= self.lr")),
        "two parameters (a matrix and a scalar), momentum=0.5: step 1: your code raised an error",
        "traceback",
    ),
    "momentum or 0.9 (momentum=0 becomes 0.9)": (
        "ch08.momentum_sgd",
        _momentum(
            ("momentum=0.9):", "momentum=None):"),
            ("self.momentum = momentum", "self.momentum = momentum or 0.9"),
        ),
        "momentum=0 (plain SGD): parameter 0 (shape (4,)) after step 2",
        "buf = momentum * buf + g",
    ),
    "len(params), where params may be a generator": (
        "ch08.momentum_sgd",
        LEN_BEFORE_LIST,
        "one parameter, lr=0.1, momentum=0.9: the parameters given as a generator",
        "params may be a generator",
    ),
    "logs the infinity norm (a matrix's largest row sum)": (
        "ch06.clip_hook",
        INF_NORM,
        "log for the 2x3 gradient",
        "append max |g| over the whole array",
    ),
    "X wrapped with requires_grad=True": (
        "ch08.training_loop",
        _loop(*_STEPS, head="    x = Variable(X, requires_grad=True)\n"),
        f"{_LOOP}: the input train_losses gives the model",
        "X is data, not a parameter",
    ),
    "returns the loss Variables": (
        "ch08.training_loop",
        corpus(WRONG_ANSWERS, "ch08.training_loop", "returns the loss Variables instead of floats"),
        f"{_LOOP}: the result",
        "append loss.item() (a float), not the loss Variable",
    ),
    "the loss summed over the batch": (
        "ch08.training_loop",
        corpus(MORE_WRONG_ANSWERS, "ch08.training_loop", "the loss summed over the batch (reduction='sum')"),
        f"{_LOOP}: the losses, one per step",
        "the loss of step 1 differs, and it comes before any update",
    ),
    "one step short": (
        "ch08.training_loop",
        _loop(*_STEPS).replace("range(steps)", "range(steps - 1)"),
        f"{_LOOP}: the losses, one per step (shape)",
        "one loss per step: 4 steps, 3 losses",
    ),
}


@pytest.mark.parametrize("label", list(CASES))
def test_a_wrong_answer_fails_at_its_own_case_with_its_own_hint(label):
    exercise_id, source, case, hint = CASES[label]
    result = verdict(exercise_id, source)
    assert not result.passed and result.case == case, str(result)
    assert hint in result.hint, str(result)
