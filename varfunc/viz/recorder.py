"""What ``trace`` adds to the engine's events: each hook that ran, and each leaf's ``.grad`` after.

The engine records what it hands a Function (``popped``, ``called_backward``, ``accumulated``); the
Function's hooks run after that, inside ``_do_backward``, and may replace the gradient. So ``trace``
runs backward inside ``hooks_reported_to(log)`` (hooks.py): each hook call that backward makes adds a
``hook`` event to the same log, with the Function, the output index (None for a Function hook), what
the hook was ``given`` (its arguments) and what it ``returned``. A backward that a hook itself runs
reports nothing there. Nothing in the graph is changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import to_device


def grads_after(events: list) -> dict:
    """{Leaf: a copy of its Variable's .grad} for every Leaf that accumulated in these events."""
    grads = {}
    for event in events:
        variable = event.function.variable if event.kind == "accumulated" else None
        if variable is not None and variable._grad is not None:  # _grad: the getter would store zeros
            grads[event.function] = variable._grad.copy()
    return grads


def same(a: Any, b: Any) -> bool:
    """Whether two gradients hold the same values, NaN equal to NaN (on any device): did a hook change it?"""
    if a is b:
        return True
    a, b = np.asarray(to_device(a, "cpu")), np.asarray(to_device(b, "cpu"))
    floating = a.dtype.kind in "fc" and b.dtype.kind in "fc"  # isnan is defined for these only
    return np.array_equal(a, b, equal_nan=floating)


def same_grads(a: Any, b: Any) -> bool:
    """Whether two tuples of gradients (None where there is none) hold the same values."""
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and all(
        x is y or (x is not None and y is not None and same(x, y)) for x, y in zip(a, b)
    )
