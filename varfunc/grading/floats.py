"""NumPy's default floating-point error handling, for the checks.

A notebook may call ``np.seterr(all="raise")`` (to find where a NaN comes from): the checks then run
under NumPy's defaults all the same, so that the checks' own comparisons (``np.isclose`` of an inf, an
expected value that underflows) cannot fail a right answer with a FloatingPointError.
"""

from __future__ import annotations

import numpy as np

NUMPY_DEFAULTS = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}  # np.geterr()


def numpy_defaults() -> np.errstate:
    """A ``with`` block in which NumPy handles floating-point errors as it does by default."""
    return np.errstate(**NUMPY_DEFAULTS)
