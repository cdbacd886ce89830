"""Chapter 08's further answers (tests/exercises/ch08_more.py): each wrong one fails its check with a
hint, each right one passes."""

from __future__ import annotations

import pytest
from exercises.ch08_more import MORE_RIGHT_ANSWERS, MORE_WRONG_ANSWERS
from test_exercises import verdict

WRONG = [(ex, label, source) for ex, answers in MORE_WRONG_ANSWERS.items() for label, source in answers]
RIGHT = [(ex, label, source) for ex, answers in MORE_RIGHT_ANSWERS.items() for label, source in answers]


@pytest.mark.parametrize("exercise_id, label, source", WRONG, ids=[f"{w[0]}: {w[1]}" for w in WRONG])
def test_a_further_wrong_answer_fails_with_a_hint(exercise_id, label, source):
    result = verdict(exercise_id, source)
    assert not result.passed, f"wrong answer {label!r} passed {exercise_id}"
    assert result.hint, f"wrong answer {label!r}: a verdict with no hint\n{result}"


@pytest.mark.parametrize("exercise_id, label, source", RIGHT, ids=[f"{r[0]}: {r[1]}" for r in RIGHT])
def test_a_further_right_answer_passes(exercise_id, label, source):
    result = verdict(exercise_id, source)
    assert result.passed, f"right answer {label!r} failed:\n{result}"
