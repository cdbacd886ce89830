"""Plain-text formatting of arrays and shapes for labels and logs: short, and the same on every machine."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import to_device

MAX_ELEMENTS = 6  # arrays with more elements are shown by their shape only


def _number(x: np.ndarray) -> str:
    if x.dtype.kind in "biu":  # indices, labels, masks: exact (123456, not 1.235e+05)
        return str(x.item())
    value = float(x)
    if value == 0.0:
        return "0"  # also for -0.0
    return f"{value:.4g}"


def _nested(a: np.ndarray) -> str:
    if a.ndim == 0:
        return _number(a)
    return "[" + ", ".join(_nested(row) for row in a) + "]"


def shape_text(shape: tuple) -> str:
    """``(2, 3)`` as ``2x3``; a 0-d shape as ``scalar``."""
    return "x".join(str(n) for n in shape) if len(shape) else "scalar"


def array_text(array: Any, max_elements: int = MAX_ELEMENTS) -> str:
    """Small arrays as values (``[1, 2.5]``: 4 significant digits, integers exact), else ``<2x3 array>``."""
    if array is None:
        return "None"
    a = np.asarray(to_device(array, "cpu")) if hasattr(array, "shape") else np.asarray(array)
    if a.size > max_elements:
        return f"<{shape_text(a.shape)} array>"
    return _nested(a)


def grads_text(grads: tuple) -> str:
    """A tuple of gradients, one per slot: ``([1, 1])`` or ``([1], None)``."""
    return "(" + ", ".join(array_text(g) for g in grads) + ")"
