"""Chapter 08's MomentumSGD check: zero_grad must leave zeros (or None) even after an inf or nan gradient.

``p.grad *= 0`` zeroes a finite gradient, but inf * 0 and nan * 0 are nan: after one loss that
overflowed, every later step would be nan. PyTorch's zero_grad sets None or fills zeros.
"""

from __future__ import annotations

from exercises import ch08
from test_exercises import CASES, verdict_for

ZEROING = "p.grad[...] = 0"  # MOMENTUM_RIGHT's zero_grad
TIMES_ZERO = ch08.MOMENTUM_RIGHT.replace(ZEROING, "p.grad *= 0")


def verdict(source: str):
    path = next(p for p, ex in CASES if ex == "ch08.momentum_sgd")
    return verdict_for(path, "ch08.momentum_sgd", source)


def test_zeroing_by_times_zero_is_refused_with_a_hint_that_says_why():
    """Before: accepted, and listed among the right answers."""
    assert TIMES_ZERO != ch08.MOMENTUM_RIGHT
    result = verdict(TIMES_ZERO)
    assert not result.passed, str(result)
    assert "inf, -inf and nan" in result.case, str(result)
    assert result.hint.startswith("zero_grad sets every parameter's .grad to zeros"), str(result)
    assert "p.grad *= 0 is not the same: inf * 0 and nan * 0 are nan" in result.hint, str(result)


def test_setting_grad_to_none_or_filling_zeros_passes():
    for zeroing in ("p.grad = None", "p.grad.fill(0)", ZEROING):
        result = verdict(ch08.MOMENTUM_RIGHT.replace(ZEROING, zeroing))
        assert result.passed, (zeroing, str(result))
