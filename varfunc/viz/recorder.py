"""What ``trace`` adds to the engine's events: each hook that ran, and each leaf's ``.grad`` after.

The engine records what it hands a Function (``popped``, ``called_backward``, ``accumulated``); the
Function's hooks run after that, inside ``_do_backward``, and may replace the gradient. So while
``trace`` runs backward, ``hooks_recorded`` wraps every hook of the graph: the wrapper calls the
hook and records a ``hook`` event (the Function, the output index, the gradient before, the
replacement or None) into the same log. The original hooks are put back afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..backend import to_device
from ..engine import EventLog


@contextlib.contextmanager
def hooks_recorded(functions: list, log: EventLog) -> Iterator[None]:
    """Wrap every hook of these Functions so that it also records a ``hook`` event; unwrap after."""
    wrapped = []
    for fn in functions:
        for name, (hook, index) in list((fn.backward_hooks or {}).items()):
            wrapper = _recording_hook(fn, name, hook, index, log)
            fn.backward_hooks[name] = (wrapper, index)  # same key: the hooks keep their order
            wrapped.append((fn, name, hook, wrapper))
    try:
        yield
    finally:
        for fn, name, hook, wrapper in wrapped:
            entry = (fn.backward_hooks or {}).get(name)
            if entry is not None and entry[0] is wrapper:  # a hook may have removed itself
                fn.backward_hooks[name] = (hook, entry[1])


def _recording_hook(fn: Any, name: str, hook: Callable, index: int | None, log: EventLog) -> Callable:
    """hook, with a ``hook`` event recorded each time it runs."""
    if (
        index is None
    ):  # a function hook: hook(grad_input, grad_output); a tuple it returns replaces grad_input

        def function_hook(grad_input: tuple, grad_output: tuple) -> Any:
            replacement = hook(grad_input, grad_output)
            log.record(
                "hook",
                fn,
                name=name,
                output_nr=None,
                grad_input=grad_input,
                grad_output=grad_output,
                replacement=replacement,
            )
            return replacement

        return function_hook

    def variable_hook(grad: Any) -> Any:
        before = grad.copy()  # a CuPy gradient is not read-only: the hook may change it in place
        replacement = hook(grad)
        after = grad if replacement is None else replacement  # what backward will be given
        log.record(
            "hook", fn, name=name, output_nr=index, grad=before, replacement=replacement, grad_after=after
        )
        return replacement

    return variable_hook


def grads_after(events: list) -> dict:
    """{Leaf: a copy of its Variable's .grad} for every Leaf that accumulated in these events."""
    grads = {}
    for event in events:
        variable = event.function.variable if event.kind == "accumulated" else None
        if variable is not None and variable._grad is not None:  # _grad: the getter would store zeros
            grads[event.function] = variable._grad.copy()
    return grads


def same(a: Any, b: Any) -> bool:
    """Whether two gradients hold the same values (on any device): did a hook change it?"""
    return np.array_equal(to_device(a, "cpu"), to_device(b, "cpu"))


def same_grads(a: Any, b: Any) -> bool:
    """Whether two tuples of gradients (None where there is none) hold the same values."""
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and all(
        x is y or (x is not None and y is not None and same(x, y)) for x, y in zip(a, b)
    )
