"""Chapter 08's MomentumSGD check: zero_grad must leave zeros (or None) even after an inf or nan gradient.

``p.grad *= 0`` zeroes a finite gradient, but inf * 0 and nan * 0 are nan: after one loss that
overflowed, every later step would be nan. PyTorch's zero_grad sets None or fills zeros.
"""

from __future__ import annotations

from exercises import ch08
from test_exercises import CASES, verdict_for

TIMES_ZERO_LABEL = "zero_grad by p.grad *= 0: an inf or nan gradient stays nan (inf * 0), not zeros"


def verdict(source: str):
    path = next(p for p, ex in CASES if ex == "ch08.momentum_sgd")
    return verdict_for(path, "ch08.momentum_sgd", source)


def test_zeroing_by_times_zero_is_refused_with_a_hint_that_says_why():
    """Before: accepted, and listed among the right answers."""
    result = verdict(ch08.MOMENTUM_TIMES_ZERO)
    assert not result.passed, str(result)
    assert "inf, -inf and nan" in result.case, str(result)
    assert result.hint.startswith("zero_grad sets every parameter's .grad to zeros"), str(result)
    assert "p.grad *= 0 is not the same: inf * 0 and nan * 0 are nan" in result.hint, str(result)


def test_the_times_zero_answer_is_listed_as_wrong_and_not_as_right():
    assert (TIMES_ZERO_LABEL, ch08.MOMENTUM_TIMES_ZERO) in ch08.WRONG_ANSWERS["ch08.momentum_sgd"]
    assert all(source != ch08.MOMENTUM_TIMES_ZERO for _, source in ch08.RIGHT_ANSWERS["ch08.momentum_sgd"])


def test_setting_grad_to_none_or_filling_zeros_passes():
    for zeroing in ("p.grad = None", "p.grad.fill(0)", "p.grad[...] = 0"):
        source = ch08.MOMENTUM_TIMES_ZERO.replace(
            "if p.grad is not None:\n                p.grad *= 0", zeroing
        )
        assert source != ch08.MOMENTUM_TIMES_ZERO
        result = verdict(source)
        assert result.passed, (zeroing, str(result))
