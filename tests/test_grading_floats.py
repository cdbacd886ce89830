"""A notebook's np.seterr(all="raise") cannot make the checks fail a right answer."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nbformat")

from test_exercises import CASES, states, verdict_for  # noqa: E402

from varfunc.grading import lookup  # noqa: E402
from varfunc.grading.floats import NUMPY_DEFAULTS, numpy_defaults  # noqa: E402
from varfunc.grading.notebook import solution_source  # noqa: E402


def test_the_defaults_are_numpys():
    with np.errstate(all="raise"), numpy_defaults():
        assert np.geterr() == NUMPY_DEFAULTS
    with np.errstate(all="ignore"):
        assert np.geterr() != NUMPY_DEFAULTS  # a fresh process's settings are the defaults themselves


@pytest.mark.parametrize("path, exercise_id", CASES, ids=[c[1] for c in CASES])
def test_the_solution_passes_after_seterr_raise(path, exercise_id):
    _, source = states(path)[lookup(exercise_id).grade_id]
    with np.errstate(all="raise"):  # what np.seterr(all="raise") in a notebook's first cell does
        verdict = verdict_for(path, exercise_id, solution_source(source))
        assert np.geterr()["invalid"] == "raise"  # put back afterwards
    assert verdict.passed, str(verdict)
