"""Input makers for the op tables: each takes the test's rng and returns a float64 array.

The tables of test_ops_forward.py, test_ops_gradcheck.py and test_torch_oracle.py share them, so
that an op's inputs stay away from its kinks and ties the same way in every check.
"""

from __future__ import annotations

import numpy as np


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def unit(*shape):
    """Inside (-1, 1), away from the ends (asin, acos)."""
    return lambda rng: rng.uniform(-0.85, 0.85, shape)


def nonzero(*shape):
    """Either sign, at least 0.3 from zero (abs, 1/x, c/x)."""
    return lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 1.5, shape)


def distinct(*shape):
    """All values at least 0.2 apart, in random order: no ties for max, min, median, mode."""

    def make(rng):
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.3 + rng.uniform(0, 0.1, n) - 0.15 * n).reshape(shape)

    return make


def off_integers(*shape):
    """At least 0.1 from every integer (floor, ceil, frac jump there)."""
    return lambda rng: rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.9, shape)


def avoiding(*points, shape):
    """Normal values, each at least 0.15 from every point in points (kinks of clamp, cmax with c)."""

    def make(rng):
        x = rng.standard_normal(shape) * 1.5
        for p in points:
            near = np.abs(x - p) < 0.15
            x = np.where(near, p + np.where(x >= p, 0.15, -0.15) + np.sign(x - p + 1e-9) * 0.05, x)
        return x

    return make


def fixed(values):
    return lambda rng: np.asarray(values, dtype=np.float64)


def with_repeats(rng):
    """Rows with one clearly most frequent value (mode)."""
    return np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.5, 0.5, -1.0, 4.0, 2.0], [7.0, -2.0, 7.0, -2.0, -2.0]])
