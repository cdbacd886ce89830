"""varfunc.data: seeded toy data sets and a minibatch iterator (NumPy only, nothing downloaded)."""

from .generators import (
    PolynomialTarget,
    Regression,
    digit_glyphs,
    digits,
    linear_regression,
    make_features,
    moons,
    poly_desc,
    polynomial_regression,
    two_spirals,
)
from .loader import Minibatches, minibatches, train_test_split

__all__ = [
    "Minibatches",
    "PolynomialTarget",
    "Regression",
    "digit_glyphs",
    "digits",
    "linear_regression",
    "make_features",
    "minibatches",
    "moons",
    "poly_desc",
    "polynomial_regression",
    "train_test_split",
    "two_spirals",
]
