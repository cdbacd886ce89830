"""What ``trace`` adds to the engine's events: each hook that ran, and each leaf's ``.grad`` after.

The engine records what it hands a Function (``popped``, ``called_backward``, ``accumulated``); the
Function's hooks run after that, inside ``_do_backward``, and may replace the gradient. So ``trace``
runs backward inside ``hooks_reported_to(log)`` (hooks.py): each hook call that backward makes adds a
``hook`` event to the same log, with the Function, the output index (None for a Function hook), what
the hook was ``given`` (its arguments) and what it ``returned``. A backward that a hook itself runs
reports nothing there. Nothing in the graph is changed.

In ``_do_backward`` a Function's hooks on an output run, then its backward, then its Function hooks
(which see backward's result); the engine records ``called_backward`` only once all that is over.
``in_call_order`` puts those Function hooks back after the backward whose result they saw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import to_device
from ..engine import EngineEvent
from ..leaf import Leaf


def accumulated_grads(events: list) -> dict:
    """{Leaf: a copy of its Variable's .grad now} for every Leaf that accumulated in these events."""
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


def in_call_order(events: list) -> list:
    """The events in the order things happened: each Function hook after the backward it saw.

    The ``called_backward`` event gets ``backward_returned``: backward's own result, which the first
    of those hooks was given (the event's ``grad_input`` is what the hooks left). Moved events take
    the step numbers of the places they move to, so the numbers still count up. A Leaf's hooks run
    before it accumulates, and a hook's return that the engine refused comes before ``failed``:
    those stay where they are.
    """
    ordered, held, popped = [], [], None
    for event in events:
        if event.kind == "popped":
            popped = event.function
        if _is_function_hook_of(event, popped):
            held.append(event)  # until the called_backward of popped, recorded after its hooks ran
        elif event.kind == "called_backward" and held:
            ordered += [_with_backward_result(event, held[0]), *held]
            held = []
        else:
            ordered += [*held, event]
            held = []
    ordered += held
    return [
        new if new is old else EngineEvent(old.step, new.kind, new.function, new.details)
        for new, old in zip(ordered, events)
    ]


def _is_function_hook_of(event: Any, popped: Any) -> bool:
    """Whether event is a Function hook of popped (not a Leaf), which runs after popped's backward."""
    return (
        event.kind == "hook"
        and event.details["output_nr"] is None
        and event.function is popped
        and not isinstance(popped, Leaf)
    )


def _with_backward_result(event: Any, first_hook: Any) -> EngineEvent:
    """The called_backward event, with what backward returned: the grad_input its first hook saw."""
    details = {**event.details, "backward_returned": first_hook.details["given"][0]}
    return EngineEvent(event.step, event.kind, event.function, details)
