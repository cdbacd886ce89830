"""Chapter 04 checks: predicted dependency counts and visit order, readiness, gradient summation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine import ExecutionEngine
from ..function import Function
from ..variable import Variable
from ..viz import GraphView, trace
from .core import (
    SECRET,
    CheckFailed,
    exercise,
    expect_close,
    expect_equal,
    kit_code_refused,
    require,
    running,
)
from .predictions import expect_written_by_hand

_OWN_CODE = "write it with your own code: the exercise asks for what the engine's method does"


def exercise_graph() -> tuple:
    """The graph of the prediction exercise: a = x*y; b = a + x; c = b*a; loss = c.sum()."""
    x = Variable(np.array([2.0]))
    y = Variable(np.array([3.0]))
    a = x * y
    b = a + x
    c = b * a
    return c.sum(), {"x": x, "y": y}


def _as_counts(name: str, value: Any) -> Any:
    """A count, or a list of counts, as a list of ints; anything else as it is; True or False, which
    equal 1 and 0 ([True] == [1]), a CheckFailed."""
    items = [value] if isinstance(value, (int, float, np.integer, np.floating)) else value
    try:
        items = list(items)
    except TypeError:
        return value
    if any(isinstance(n, (bool, np.bool_)) for n in items):
        raise CheckFailed(
            f"dependency count of {name}",
            "whole numbers, one per output",
            value,
            "True == 1 in Python, but a count is a number, not a yes or no: write 1 or 0, not True or False",
        )
    try:
        counts = [int(n) for n in items]
    except (TypeError, ValueError):
        return value
    return counts if counts == items else value  # 2.5 is not a count: int() would make it 2


def _no_leaves(names: Any, params: dict) -> bool:
    """True when names left out every leaf's name (params' keys)."""
    return not any(name in names for name in params)


@exercise(
    "ch04.dependencies",
    title="Predict the dependency counts and the order the engine pops",
    points=2,
)
def check_dependencies(namespace: dict) -> None:
    """The predicted counts equal _compute_dependencies'; the predicted order equals the stack engine's."""
    require(namespace, "predicted_counts", "predicted_order")
    expect_written_by_hand(namespace, "predicted_counts", "predicted_order")
    loss, params = exercise_graph()
    view = GraphView(loss, params)
    counts = ExecutionEngine()._compute_dependencies(loss.creator)
    expected = {view.name(fn): list(c) for fn, c in counts.items()}
    predicted = namespace["predicted_counts"]
    if not isinstance(predicted, dict):
        raise CheckFailed("predicted_counts is not a dict", "a dict", type(predicted).__name__)
    got = {str(k): _as_counts(str(k), v) for k, v in predicted.items()}
    expect_equal(
        "the nodes in predicted_counts",
        sorted(got),
        sorted(expected),
        f"one entry per Function the engine reaches ({len(expected)} of them"
        f"{', the Leaf nodes too' if _no_leaves(got, params) else ''}), "
        "named as in the drawing",
        secret=True,
    )
    for name in expected:
        expect_equal(
            f"dependency count of {name}",
            got[name],
            expected[name],
            "count every consumer that will send a gradient to that output, once per use; the root has none",
            secret=True,
        )
    order = trace(loss, params=params).visit_order
    if isinstance(namespace["predicted_order"], str):  # list() of it would give single characters
        raise CheckFailed(
            "predicted_order", "a list of names", "a str", 'list the names: ["Sum#5", ...], one string each'
        )
    predicted_order = list(namespace["predicted_order"])
    if len(predicted_order) != len(order):
        raise CheckFailed(
            "predicted_order (v0.1.3's ready stack)",
            SECRET,
            predicted_order,
            f"your list has {len(predicted_order)} names; the engine pops {len(order)}"
            f"{' (the Leaf nodes too)' if _no_leaves(predicted_order, params) else ''}: one name per pop",
        )
    expect_equal(
        "predicted_order (v0.1.3's ready stack)",
        predicted_order,
        order,
        "the ready list is a stack: the Function pushed last is popped first",
        secret=True,
    )


class _Split(Function):
    """Two outputs, the first and the second half of a vector (for a multi-output graph)."""

    def forward(self, a):
        half = a.shape[0] // 2
        return a[:half].copy(), a[half:].copy()

    def backward(self, grad_first, grad_second):
        parts = [np.zeros(1) if g is None else g for g in (grad_first, grad_second)]
        return np.concatenate(parts)


class _Node:
    """A stand-in Function: only its name matters (in verdicts)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _engine_with(name: str, student: Callable) -> ExecutionEngine:
    engine = ExecutionEngine()
    setattr(engine, name, student)  # an instance attribute: called without self
    return engine


@exercise(
    "ch04.is_ready",
    title="is_ready_for_backward(dependencies, function)",
    points=2,
    needs=("is_ready_for_backward",),
)
def check_is_ready(namespace: dict) -> None:
    """Readiness on one- and two-output counts, no change to the dict, and a real backward with it."""
    is_ready = namespace["is_ready_for_backward"]
    with kit_code_refused("is_ready_for_backward", _OWN_CODE, (ExecutionEngine, "_is_ready_for_backward")):
        _check_is_ready(is_ready)


def _check_is_ready(is_ready: Callable) -> None:
    f, g = _Node("f"), _Node("g")
    cases = [
        ([0], True),
        ([2], False),
        ([0, 0], True),
        ([0, 1], False),
        ([1, 0], False),
        ([3, 2], False),
        ([0, 1, 0], False),  # three outputs: the middle one still waits
        ([0, 0, 1], False),  # and the last one (not only the first two are looked at)
    ]
    for counts, expected in cases:
        dependencies = {f: list(counts), g: [5]}
        with running(f"dependencies[function] == {counts}"):
            got = is_ready(dependencies, f)
        if not isinstance(got, (bool, np.bool_)):
            raise CheckFailed(f"dependencies[function] == {counts}", "True or False", got, "return a bool")
        expect_equal(
            f"dependencies[function] == {counts}",
            bool(got),
            expected,
            "ready means every consumer of every output has sent its gradient: all counts are 0",
        )
        expect_equal(
            f"dependencies[function] == {counts}: the dict is unchanged",
            dependencies,
            {f: counts, g: [5]},
            "only read the counts: the engine keeps using this dict after it asks",
        )
    x = Variable(np.array([1.0, 2.0, 3.0, 4.0]))
    first, second = _Split()(x)
    loss = (first * 3 + second * second).sum()
    case = "backward through a two-output Function, with your function deciding readiness"
    with running(case):
        loss.backward(engine=_engine_with("_is_ready_for_backward", is_ready))
    expect_close(
        case,
        x.grad,
        [3.0, 3.0, 6.0, 8.0],
        "a Function with two outputs is ready only when both outputs have all their gradients",
    )


@exercise(
    "ch04.add_grad",
    title="add_grad(need_copy, buffer, output_nr, grad): sum gradients without changing borrowed arrays",
    points=3,
    needs=("add_grad",),
)
def check_add_grad(namespace: dict) -> None:
    """Sums are right, no array that arrived is ever changed, and backward keeps the caller's seed."""
    add_grad = namespace["add_grad"]
    with kit_code_refused("add_grad", _OWN_CODE, (ExecutionEngine, "_add_grad")):
        _check_add_grad(add_grad)


def _check_add_grad(add_grad: Callable) -> None:
    hint = "store the first array as is but remember it is borrowed; copy it before the first in-place sum"
    # a set of its own for each scenario, as each backward call starts one: a mark a scenario leaves
    # could otherwise name a freed buffer whose id a later scenario's buffer takes over
    for scenario in (_check_shared_array, _check_two_slots_of_one_buffer, _check_three_gradients):
        scenario(add_grad, set(), hint)
    setup = "r = x*y + (x+y), backward(seed [1]) with your add_grad"
    x, y = Variable(np.array([2.0])), Variable(np.array([3.0]))
    seed = np.array([1.0])
    with running(setup):
        (x * y + (x + y)).backward(seed, engine=_engine_with("_add_grad", add_grad))
    expect_close(f"{setup}: x.grad", x.grad, [4.0], hint)
    expect_close(f"{setup}: y.grad", y.grad, [3.0], hint)
    expect_close(f"{setup}: the seed the caller passed to backward", seed, [1.0], hint)


def _slot_hint(got: Any, first: list, last: list, hint: str) -> str:
    """hint, unless the slot holds only the gradient that arrived last (it was replaced) or only the
    first (the sum never reached the slot)."""
    got = np.asarray(got.data if isinstance(got, Variable) else got)
    if got.dtype.kind not in "fiu" or got.shape != np.shape(last):
        return hint
    if np.allclose(got, last):
        return (
            "the slot holds only the gradient that arrived last: gradients that meet in one slot are "
            "added to what it holds, not put in its place"
        )
    if np.allclose(got, first):
        return (
            "the slot still holds only the first gradient: the sum never reached it. A copy of a borrowed "
            "array is a new array: put it in buffer[output_nr], then add into it"
        )
    return hint


def _check_shared_array(add_grad: Callable, need_copy: set, hint: str) -> None:
    """One array into two empty slots (Add.backward hands the same array to both), then each summed."""
    shared = np.array([1.0, 2.0])
    first, second = [None], [None]
    start = "the array [1, 2] into empty slot 1"
    with running(start):
        add_grad(need_copy, first, 0, shared)
    if first[0] is None:
        raise CheckFailed(
            f"{start}: slot 1",
            "the array grad",
            "None: the slot was left empty",
            "write into the list you are given: buffer[output_nr] = grad (a new list would be lost)",
        )
    expect_equal(
        f"{start}: slot 1 is that very array",
        first[0] is shared,
        True,
        "store the first array as it is (no copy): most slots never get a second gradient",
    )
    setup = "the array [1, 2] into empty slots 1 and 2, then [10, 20] into slot 1"
    with running(setup):
        add_grad(need_copy, second, 0, shared)
        add_grad(need_copy, first, 0, np.array([10.0, 20.0]))
    expect_close(
        f"{setup}: slot 1", first[0], [11.0, 22.0], _slot_hint(first[0], [1.0, 2.0], [10.0, 20.0], hint)
    )
    expect_close(f"{setup}: the array [1, 2] itself", shared, [1.0, 2.0], hint)
    expect_close(f"{setup}: slot 2", second[0], [1.0, 2.0], hint)
    setup += ", then [100, 200] into slot 2"
    with running(setup):
        add_grad(need_copy, second, 0, np.array([100.0, 200.0]))
    expect_close(
        f"{setup}: slot 2", second[0], [101.0, 202.0], _slot_hint(second[0], [1.0, 2.0], [100.0, 200.0], hint)
    )
    expect_close(f"{setup}: the array [1, 2] itself", shared, [1.0, 2.0], hint)
    expect_close(f"{setup}: slot 1", first[0], [11.0, 22.0], hint)


def _check_two_slots_of_one_buffer(add_grad: Callable, need_copy: set, hint: str) -> None:
    """Two borrowed arrays in slots 0 and 1 of one buffer, then a sum into each."""
    left, right = np.array([1.0]), np.array([2.0])
    pair = [None, None]
    setup = "[1] into slot 0 and [2] into slot 1 of one buffer, then [10] into slot 0 and [20] into slot 1"
    with running(setup):
        add_grad(need_copy, pair, 0, left)
        add_grad(need_copy, pair, 1, right)
        add_grad(need_copy, pair, 0, np.array([10.0]))
        add_grad(need_copy, pair, 1, np.array([20.0]))
    if _holds(pair[0], [22.0]) and _holds(pair[1], [11.0]):
        raise CheckFailed(
            f"{setup}: slot 0",
            np.array([11.0]),
            pair[0],
            "slot 0 got the gradients meant for slot 1, and slot 1 those for slot 0: write to "
            "buffer[output_nr], the slot output_nr names (Python counts from 0), not another index",
        )
    expect_close(f"{setup}: slot 0", pair[0], [11.0], _slot_hint(pair[0], [1.0], [10.0], hint))
    expect_close(f"{setup}: slot 1", pair[1], [22.0], _slot_hint(pair[1], [2.0], [20.0], hint))
    expect_close(f"{setup}: the array [1] itself", left, [1.0], hint)
    expect_close(f"{setup}: the array [2] itself", right, [2.0], hint)


def _holds(got: Any, values: list) -> bool:
    """True when got is an array of these values."""
    return isinstance(got, np.ndarray) and got.shape == np.shape(values) and np.allclose(got, values)


def _check_three_gradients(add_grad: Callable, need_copy: set, hint: str) -> None:
    """Three gradients into slot 1 of a two-slot buffer: the second sum goes in place into the copy."""
    arrived = [np.array([1.0]), np.array([2.0]), np.array([4.0])]
    two = [None, None]
    setup = "[1] into slot 1 of an empty two-slot buffer"
    with running(setup):
        add_grad(need_copy, two, 1, arrived[0])
    expect_equal(f"{setup}: slot 0", two[0], None, "add_grad changes only the slot output_nr names")
    setup = "[1], [2], then [4] into slot 1 of a two-slot buffer"
    with running(setup):
        add_grad(need_copy, two, 1, arrived[1])  # the first sum: the borrowed array is copied
        summed = two[1]
        add_grad(need_copy, two, 1, arrived[2])
    expect_close(
        f"{setup}: slot 1", two[1], [7.0], _slot_hint(two[1], [1.0], [4.0], "add every gradient that arrives")
    )
    expect_close(f"{setup}: the arrays [1], [2] and [4]", np.concatenate(arrived), [1.0, 2.0, 4.0], hint)
    expect_equal(
        f"{setup}: the [4] is summed in place into the slot's own copy (the same array as after [2])",
        two[1] is summed,
        True,
        "once the slot holds its own copy it is no longer borrowed: sum into it in place (+=), "
        "not into a new array at every sum",
    )
