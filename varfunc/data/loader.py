"""Minibatches: an iterable over (inputs, targets) batches, reshuffled every epoch, seeded."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..backend import check_flag, is_array, to_device
from ..errors import ShapeError
from ..variable import Variable


def as_arrays(arrays: Any) -> tuple:
    """Arrays for Variables (their .data), arrays (NumPy or CuPy, as they are) and array-likes (NumPy)."""
    return tuple(a.data if isinstance(a, Variable) else a if is_array(a) else np.asarray(a) for a in arrays)


class Minibatches:
    """Batches of rows of arrays that share their first dim: ``for x, y in Minibatches(X, y, batch_size=32)``.

    Each pass (epoch) draws a new order from the seeded generator when ``shuffle``; the last batch is
    smaller unless ``drop_last``. With ``variables`` (the default) each batch is a tuple of Variables
    that need no grad, moved to ``device``; otherwise of NumPy arrays. ``len()`` is the number of
    batches per epoch.
    """

    def __init__(
        self,
        *arrays: Any,
        batch_size: int = 32,
        shuffle: bool = True,
        seed: Any = 0,
        drop_last: bool = False,
        variables: bool = True,
        device: str = "cpu",
    ) -> None:
        if not arrays:
            raise ValueError("Minibatches: give at least one array (for example X, y)")
        arrays = _checked_arrays(arrays, "Minibatches", "batch_size")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"Minibatches: batch_size must be a positive integer, got {batch_size!r}")
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last), ("variables", variables)):
            check_flag("Minibatches", name, flag)
        to_device(np.empty(0), device)  # an unknown device, or a GPU that is not there: said now
        self.arrays = arrays
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.variables = variables
        self.device = device
        self.rng = _generator(seed, "Minibatches")

    @property
    def n_samples(self) -> int:
        """The number of rows."""
        return len(self.arrays[0])

    def __len__(self) -> int:
        if self.drop_last:
            return self.n_samples // self.batch_size
        return math.ceil(self.n_samples / self.batch_size)

    def __iter__(self) -> Iterator[tuple]:
        n = self.n_samples
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        for batch in range(len(self)):
            index = order[batch * self.batch_size : (batch + 1) * self.batch_size]
            yield tuple(self._wrap(array[index]) for array in self.arrays)

    def _wrap(self, array: np.ndarray) -> Any:
        array = to_device(array, self.device)
        return Variable(array, requires_grad=False) if self.variables else array

    def __repr__(self) -> str:
        shapes = ", ".join(str(a.shape) for a in self.arrays)
        settings = f"batch_size={self.batch_size}, shuffle={self.shuffle}, batches={len(self)}"
        return f"Minibatches({shapes}, {settings})"


def _checked_arrays(arrays: tuple, who: str, keyword: str) -> tuple:
    """The arrays, each with rows, all with the same number of them; else a clear error."""
    arrays = as_arrays(arrays)
    for index, array in enumerate(arrays):
        if array.ndim == 0 and array.dtype.kind in "biuf":  # Minibatches(X, y, 32): a forgotten keyword
            raise TypeError(
                f"{who}: argument {index} is the scalar {array.item()!r}, not an array; {keyword} is a "
                f"keyword argument: {who}(X, y, {keyword}={array.item()!r})"
            )
        if array.ndim == 0 or array.dtype.kind not in "biuf":
            raise TypeError(
                f"{who}: argument {index} is not an array of numbers (got {array.dtype}); pass X, y"
            )
    for index, array in enumerate(arrays):
        if len(array) != len(arrays[0]):
            raise ShapeError(
                f"{who}: array {index} has shape {array.shape} but array 0 has {len(arrays[0])} rows; "
                "every array needs one row per sample"
            )
    return arrays


def _generator(seed: Any, who: str) -> np.random.Generator:
    """A NumPy Generator from seed (an int, None, or a Generator, used as it is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"{who}: seed must be an int, None or a np.random.Generator, got {seed!r}")
    return np.random.default_rng(seed)


def minibatches(
    *arrays: Any, batch_size: int = 32, shuffle: bool = True, seed: Any = 0, **kwargs: Any
) -> Minibatches:
    """Minibatches(*arrays, batch_size=..., shuffle=..., seed=...)."""
    return Minibatches(*arrays, batch_size=batch_size, shuffle=shuffle, seed=seed, **kwargs)


def train_test_split(*arrays: Any, test_fraction: float = 0.25, seed: Any = 0) -> tuple:
    """Shuffle rows once and split each array: (a_train, a_test, b_train, b_test, ...).

    The test part gets ``n * test_fraction`` rows, half rounded up, and at least one row (as does the
    training part). Variables are split as their arrays (``.data``).
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, numbers.Real):  # np.float32 too
        raise TypeError(f"train_test_split: test_fraction must be a number in (0, 1), got {test_fraction!r}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"train_test_split: test_fraction must be in (0, 1), got {test_fraction}")
    if not arrays:
        raise ValueError("train_test_split: pass the arrays to split, e.g. train_test_split(X, y)")
    arrays = _checked_arrays(arrays, "train_test_split", "test_fraction")
    n = len(arrays[0])
    if n < 2:
        raise ValueError(f"train_test_split: needs at least 2 samples to make two parts, got {n}")
    order = _generator(seed, "train_test_split").permutation(n)
    # Half rounds up (2.5 rows -> 3); round(..., 9) first, so that 25 * 0.58 = 14.499999999999998 is 14.5.
    n_test = math.floor(round(n * test_fraction, 9) + 0.5)
    n_test = min(n - 1, max(1, n_test))  # neither part may be empty
    test, train = order[:n_test], order[n_test:]
    out = []
    for array in arrays:
        out += [array[train], array[test]]
    return tuple(out)
