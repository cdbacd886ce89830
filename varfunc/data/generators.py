"""Seeded toy data sets for the chapters: regression, two spirals, moons, and digits-like glyphs.

Every generator takes a ``seed`` (an int, or a NumPy ``Generator`` to draw from) and returns NumPy arrays:
inputs as float32 (PyTorch's default type; pass dtype=np.float64 for gradcheck-grade work) and
class labels as int64. Nothing is downloaded.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np

from ..backend import check_flag
from ..errors import DTypeError, ShapeError


class Regression(NamedTuple):
    """A regression problem: inputs X (n, d), targets y (n, 1), and the true weight and bias."""

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    bias: np.ndarray


def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _check_counts(generator: str, dtype: Any = np.float64, **counts: Any) -> None:
    """A ValueError naming the generator unless every count (samples, features, degree) is a positive
    int; a DTypeError unless dtype is a floating-point type (integers would cut the points)."""
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{generator}: {name} must be a positive integer, got {value!r}")
    if np.dtype(dtype).kind != "f":
        raise DTypeError(
            f"{generator}: dtype must be a floating-point type (np.float32 or np.float64), got "
            f"{np.dtype(dtype)}, which would cut the points to integers"
        )


def _check_amounts(generator: str, **amounts: Any) -> None:
    """A ValueError naming the generator unless every amount (noise, flip, turns) is a finite number
    >= 0 (noise=nan gave data that was all nan); flip, a fraction of pixels, is at most 1."""
    for name, value in amounts.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"{generator}: {name} must be a finite number >= 0, got {value!r}")
    if amounts.get("flip", 0) > 1:
        raise ValueError(
            f"{generator}: flip is the fraction of pixels flipped, at most 1, got {amounts['flip']!r}"
        )


def linear_regression(
    n_samples: int = 100, n_features: int = 1, noise: float = 0.1, seed: Any = 0, dtype: Any = np.float32
) -> Regression:
    """y = X @ weight + bias + noise, with X standard normal and weight, bias drawn like the 2017 example."""
    _check_counts("linear_regression", dtype, n_samples=n_samples, n_features=n_features)
    _check_amounts("linear_regression", noise=noise)
    rng = _rng(seed)
    weight = rng.standard_normal((n_features, 1)) * 5
    bias = rng.standard_normal(1) * 5
    X = rng.standard_normal((n_samples, n_features))
    y = X @ weight + bias + noise * rng.standard_normal((n_samples, 1))
    return Regression(X.astype(dtype), y.astype(dtype), weight.astype(dtype), bias.astype(dtype))


def make_features(x: Any, degree: int = 4) -> np.ndarray:
    """[x, x**2, ..., x**degree] as columns: the 2017 regression example's make_features."""
    _check_counts("make_features", degree=degree)
    x = np.asarray(x)
    if x.ndim > 1 and x.shape[1:] != (1,):  # one number per sample: (n,) or (n, 1)
        raise ShapeError(
            f"make_features: x must hold one number per sample, shape (n,) or (n, 1), got {x.shape}"
        )
    x = x.reshape(-1, 1)
    return np.concatenate([x**i for i in range(1, degree + 1)], axis=1)


def poly_desc(weight: Any, bias: Any) -> str:
    """'y = +1.23 x^1 -0.45 x^2 ... +0.67': a fitted or true polynomial, printed as the example did.

    The 2017 example labelled the exponents in reverse (``len(W) - i``: the x^1 weight was printed
    as x^4); here each weight carries its own exponent.
    """
    weight = np.asarray(weight).reshape(-1)
    bias = float(np.asarray(bias).reshape(-1)[0])
    terms = "".join(f"{w:+.2f} x^{i} " for i, w in enumerate(weight, 1))
    return f"y = {terms}{bias:+.2f}"


class PolynomialTarget:
    """The 2017 example's target: W_target = randn(degree, 1) * 5, b_target = randn(1) * 5.

    ``batch(32)`` draws fresh inputs x ~ N(0, 1) and returns (make_features(x), f(x)), as the
    example's ``get_batch``; ``f(X)`` evaluates the target on features. Both return ``dtype``.
    """

    def __init__(self, degree: int = 4, seed: Any = 0, dtype: Any = np.float32) -> None:
        _check_counts("PolynomialTarget", dtype, degree=degree)
        self.rng = _rng(seed)
        self.degree = degree
        self.dtype = dtype
        self.weight = self.rng.standard_normal((degree, 1)) * 5
        self.bias = self.rng.standard_normal(1) * 5

    def f(self, X: Any) -> np.ndarray:
        """The true polynomial at features X (n, degree), in the target's dtype."""
        return (np.asarray(X) @ self.weight + self.bias).astype(self.dtype)

    def batch(self, batch_size: int = 32) -> tuple[np.ndarray, np.ndarray]:
        """Fresh (features, targets) for batch_size random x."""
        _check_counts("PolynomialTarget.batch", batch_size=batch_size)
        X = make_features(self.rng.standard_normal(batch_size), self.degree)
        return X.astype(self.dtype), self.f(X)

    def __repr__(self) -> str:
        return f"PolynomialTarget({poly_desc(self.weight, self.bias)})"


def polynomial_regression(
    n_samples: int = 256, degree: int = 4, noise: float = 0.0, seed: Any = 0, dtype: Any = np.float32
) -> Regression:
    """A fixed sample of the 2017 example's problem: features [x, ..., x**degree], y = f(x) (+ noise)."""
    _check_counts("polynomial_regression", dtype, n_samples=n_samples, degree=degree)
    _check_amounts("polynomial_regression", noise=noise)
    target = PolynomialTarget(degree, seed, dtype=np.float64)
    X, y = target.batch(n_samples)
    y = y + noise * target.rng.standard_normal(y.shape)
    return Regression(
        X.astype(dtype), y.astype(dtype), target.weight.astype(dtype), target.bias.astype(dtype)
    )


def two_spirals(
    n_per_class: int = 200, turns: float = 1.5, noise: float = 0.05, seed: Any = 0, dtype: Any = np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals (X (2n, 2), labels 0 and 1); radius sqrt(0.02) ~ 0.14 to 1, plus noise."""
    _check_counts("two_spirals", dtype, n_per_class=n_per_class)
    _check_amounts("two_spirals", noise=noise, turns=turns)
    rng = _rng(seed)
    t = np.sqrt(rng.uniform(0.02, 1, n_per_class))  # more points at larger radius, where arms are longer
    angle = 2 * np.pi * turns * t
    arm = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1)
    X = np.concatenate([arm, -arm]) + noise * rng.standard_normal((2 * n_per_class, 2))
    y = np.repeat(np.arange(2), n_per_class)
    order = rng.permutation(2 * n_per_class)
    return X[order].astype(dtype), y[order].astype(np.int64)


def moons(
    n_samples: int = 200, noise: float = 0.1, seed: Any = 0, dtype: Any = np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (as scikit-learn's make_moons): X (n, 2), labels 0 and 1."""
    _check_counts("moons", dtype, n_samples=n_samples)
    _check_amounts("moons", noise=noise)
    rng = _rng(seed)
    n_outer = n_samples // 2
    n_inner = n_samples - n_outer
    outer = np.linspace(0, np.pi, n_outer)
    inner = np.linspace(0, np.pi, n_inner)
    X = np.concatenate(
        [
            np.stack([np.cos(outer), np.sin(outer)], axis=1),
            np.stack([1 - np.cos(inner), 0.5 - np.sin(inner)], axis=1),
        ]
    )
    X = X + noise * rng.standard_normal(X.shape)
    y = np.concatenate([np.zeros(n_outer, np.int64), np.ones(n_inner, np.int64)])
    order = rng.permutation(n_samples)
    return X[order].astype(dtype), y[order]


# 5 x 7 glyphs of the digits 0-9 (a classic dot-matrix font), one string of 7 rows of 5 per digit.
_GLYPHS = (
    "01110 10001 10011 10101 11001 10001 01110",
    "00100 01100 00100 00100 00100 00100 01110",
    "01110 10001 00001 00010 00100 01000 11111",
    "11111 00010 00100 00010 00001 10001 01110",
    "00010 00110 01010 10010 11111 00010 00010",
    "11111 10000 11110 00001 00001 10001 01110",
    "00110 01000 10000 11110 10001 10001 01110",
    "11111 00001 00010 00100 01000 01000 01000",
    "01110 10001 10001 01110 10001 10001 01110",
    "01110 10001 10001 01111 00001 00010 01100",
)


def digit_glyphs() -> np.ndarray:
    """The ten clean 5 x 7 templates the digits set is made from, shape (10, 7, 5), values 0 or 1."""
    return np.array([[[int(c) for c in row] for row in glyph.split()] for glyph in _GLYPHS], dtype=np.float64)


def digits(
    n_samples: int = 1797,
    noise: float = 0.15,
    flip: float = 0.03,
    seed: Any = 0,
    dtype: Any = np.float32,
    flatten: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """A small digits-like set, generated (the size of scikit-learn's 8 x 8 digits by default).

    Each sample is one of ten 5 x 7 glyphs placed at a random offset in an 8 x 8 image, with a
    random stroke strength, a fraction ``flip`` of pixels flipped and Gaussian ``noise`` added, then
    clipped to [0, 1]. Returns X (n, 64) (or (n, 8, 8) with flatten=False) and labels y (n,), with
    the classes balanced and shuffled.
    """
    _check_counts("digits", dtype, n_samples=n_samples)
    _check_amounts("digits", noise=noise, flip=flip)
    check_flag("digits", "flatten", flatten)
    rng = _rng(seed)
    glyphs = digit_glyphs()
    y = rng.permutation(np.arange(n_samples) % 10)
    images = np.zeros((n_samples, 8, 8))
    dy = rng.integers(0, 2, n_samples)  # 8 - 7 + 1 vertical places
    dx = rng.integers(0, 4, n_samples)  # 8 - 5 + 1 horizontal places
    for top in range(2):  # one placement at a time: 8 loops, not one per sample
        for left in range(4):
            placed = (dy == top) & (dx == left)
            images[placed, top : top + 7, left : left + 5] = glyphs[y[placed]]
    images *= rng.uniform(0.6, 1.0, (n_samples, 1, 1))
    flips = rng.random(images.shape) < flip
    images = np.where(flips, 1 - images, images) + noise * rng.standard_normal(images.shape)
    images = np.clip(images, 0, 1)
    X = images.reshape(n_samples, 64) if flatten else images
    return X.astype(dtype), y.astype(np.int64)
