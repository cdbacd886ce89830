"""One graph, four backward orders: the same gradients, different visits; and the order that breaks.

- ``stack``: v0.1.3's ExecutionEngine: dependency counts, not-ready buffers, a ready *stack*.
- ``fifo``: v0.1.4's engine: the same counts, a FIFO *queue*.
- ``generation``: DeZero: a list of pending Functions re-sorted by generation after every insertion,
  the highest generation popped (ties: the one inserted last); here a heap, which pops the same.
- ``topo``: micrograd: a depth-first topological sort (micrograd recurses; this walks the same order
  with a stack, see ``graph.post_order``), then every node in reverse.

Each replay calls every Function's backward as the engine does (the gradients it returns checked, a
Function written outside the kit given read-only views) and sums gradients out of place into its own
buffers: nothing in the graph and no ``.grad`` changes (hooks do not run). Like ``backward``,
they refuse a loss that is volatile or requires no grad, and a seed of the wrong shape. ``Leaf``
nodes appear in the visit orders where the ordering reaches them. ``naive_recursive_backward``
replays the recursion proposed in micrograd PR #64 (backward, then recurse into every input, per
use, with no topological order); a reused intermediate sends its gradient more than once and is
counted twice.
"""

from __future__ import annotations

import heapq
import sys
from collections import deque
from typing import Any

import numpy as np

from ..backend import to_device
from ..errors import VarfuncError
from .fmt import array_text
from .graph import GraphView, post_order

ORDERINGS = {
    "stack": "v0.1.3 engine: dependency counts, ready stack (last in, first out)",
    "fifo": "v0.1.4 engine: dependency counts, ready queue (first in, first out)",
    "generation": "DeZero: pending list sorted by generation, highest first",
    "topo": "micrograd: recursive depth-first topological sort, run in reverse",
}


class OrderResult:
    """What one ordering did: the nodes in the order their backward ran, and each leaf's gradient."""

    def __init__(self, order: str, visits: list, leaf_grads: dict, hooks_skipped: bool = False) -> None:
        self.order = order
        self.description = ORDERINGS.get(order, order)
        self.visits = visits  # names, e.g. ["Sum#3", "Add#2", "x"]
        self.leaf_grads = leaf_grads  # name -> array
        self.hooks_skipped = hooks_skipped  # the graph has hooks, which backward() would have run

    def __repr__(self) -> str:
        grads = ", ".join(f"{k}={array_text(v)}" for k, v in self.leaf_grads.items())
        return f"OrderResult({self.order}: {' > '.join(self.visits)} | {grads})"


class _SeedOnly:
    """An engine that runs nothing: ``backward`` checks the loss and the seed, then hands it the seed."""

    seed: Any = None

    def run_backward(self, variable: Any, grad: Any, recorder: Any = None) -> None:
        self.seed = grad


def checked_seed(op: str, loss: Any, gradient: Any) -> Any:
    """The seed backward would start from, or the error backward would raise, named for op."""
    seed_only = _SeedOnly()
    try:
        loss.backward(gradient, engine=seed_only)
    except VarfuncError as error:  # backward's own refusal, reworded for the function the student called
        message = str(error).replace("backward: ", f"{op}: ", 1)
        raise type(error)(message.replace("backward(np.ones(", f"{op}(loss, gradient=np.ones(")) from None
    return seed_only.seed


class _Replay:
    """Buffers per output slot, filled out of place; shared by the orderings."""

    def __init__(self, loss: Any, gradient: Any, params: dict | None, op: str) -> None:
        self.view = GraphView(loss, params)  # a TypeError for anything but Variables
        seed = checked_seed(op, loss, gradient)
        self.root = loss.creator
        self.buffers: dict = {(self.root, self.root.output_ids[id(loss)]): seed}
        self.visits: list = []
        self.hooks_skipped = False

    def needed_edges(self, fn: Any) -> list:
        return [e for e in self.view.inputs[fn] if e.needed]

    def run(self, fn: Any) -> list:
        """Call fn's backward on its buffered gradients and send each input gradient on."""
        self.visits.append(fn)
        self.hooks_skipped = self.hooks_skipped or bool(fn.backward_hooks)
        if self.view.is_leaf(fn):
            return []
        grad_output = tuple(self.buffers.get((fn, j)) for j in range(len(fn.output_ids)))
        hooks, fn.backward_hooks = fn.backward_hooks, None  # backward as the engine runs it, but no hooks
        try:
            grad_input = fn._do_backward(*grad_output)
        finally:
            fn.backward_hooks = hooks
        sent = []
        for e in self.needed_edges(fn):
            slot = (e.source, e.output_nr)
            grad = grad_input[e.input_nr]
            self.buffers[slot] = grad if slot not in self.buffers else self.buffers[slot] + grad
            sent.append(e)
        return sent

    def result(self, order: str) -> OrderResult:
        names = [self.view.name(fn) for fn in self.visits]
        grads = {}
        for fn in self.view.functions:
            # a leaf frozen after forward (requires_grad set to False) gets no .grad from backward either
            if self.view.is_leaf(fn) and fn.requires_grad and (fn, 0) in self.buffers:
                grads[self.view.name(fn)] = self.buffers[(fn, 0)]
        return OrderResult(order, names, grads, self.hooks_skipped)

    def reachable(self) -> list:
        """Functions a gradient reaches, in the post-order of the graph."""
        reached = {self.root}
        for fn in reversed(self.view.functions):
            if fn in reached:
                reached.update(e.source for e in self.needed_edges(fn))
        return [fn for fn in self.view.functions if fn in reached]


def _engine(replay: _Replay, fifo: bool) -> None:
    deps = {fn: [0] * len(fn.output_ids) for fn in replay.reachable()}
    for fn in deps:
        for e in replay.needed_edges(fn):
            deps[e.source][e.output_nr] += 1
    ready = deque([replay.root])
    while ready:
        fn = ready.popleft() if fifo else ready.pop()
        for e in replay.run(fn):
            deps[e.source][e.output_nr] -= 1
            if not any(deps[e.source]):
                ready.append(e.source)


def _generation(replay: _Replay) -> None:
    generation: dict = {}
    for fn in replay.view.functions:  # post-order: inputs first
        inputs = [generation[e.source] for e in replay.view.inputs[fn]]
        generation[fn] = 1 + max(inputs) if inputs else 0
    # DeZero sorts its list after every insertion and pops the end: the highest generation, and of
    # those the last inserted. A heap gives the same order without the sort: each entry is
    # (-generation, -insertion number, Function), so the smallest entry is the one DeZero pops.
    pending, seen = [(-generation[replay.root], 0, replay.root)], {replay.root}
    while pending:
        fn = heapq.heappop(pending)[2]
        for e in replay.run(fn):
            if e.source not in seen:
                seen.add(e.source)
                heapq.heappush(pending, (-generation[e.source], -len(seen), e.source))  # len: its number


def _topo(replay: _Replay) -> None:
    """micrograd's order: Functions in reverse depth-first post-order from the root."""
    topo = post_order(replay.root, lambda fn: [e.source for e in replay.needed_edges(fn)], set())
    for fn in reversed(topo):
        replay.run(fn)


_RUNNERS = {
    "stack": lambda r: _engine(r, fifo=False),
    "fifo": lambda r: _engine(r, fifo=True),
    "generation": _generation,
    "topo": _topo,
}


def _loss_and_params(loss_or_fn: Any, params: dict | None) -> tuple:
    if callable(loss_or_fn) and not hasattr(loss_or_fn, "creator"):
        made = loss_or_fn()
        loss, names = (made[0], made[1]) if isinstance(made, tuple) and len(made) == 2 else (made, params)
    else:
        loss, names = loss_or_fn, params
    if not hasattr(loss, "creator"):
        raise TypeError(
            f"compare_orders: needs a loss Variable, a function that returns one, or (loss, params); "
            f"got {type(loss).__name__}"
        )
    return loss, names


def replay_order(
    loss: Any, order: str = "stack", gradient: Any = None, params: dict | None = None
) -> OrderResult:
    """Replay backward from ``loss`` in one of ORDERINGS, without changing anything (hooks do not run)."""
    if order not in _RUNNERS:
        raise ValueError(f"order must be one of {tuple(ORDERINGS)}, got {order!r}")
    replay = _Replay(loss, gradient, params, "replay_order")
    _RUNNERS[order](replay)
    return replay.result(order)


def naive_recursive_backward(
    loss: Any, gradient: Any = None, params: dict | None = None, max_visits: int = 10_000
) -> OrderResult:
    """micrograd PR #64's recursion: backward now, then recurse into each input, per use.

    A node reached twice runs its backward twice with everything it has accumulated so far, so a
    reused intermediate is counted more than once (``b = a + a; c = b + b`` gives a gradient of 8
    for ``a`` instead of 4). Raises RecursionError after ``max_visits`` visits (the number of visits
    can grow exponentially), or when a path is deeper than Python's recursion limit allows (one
    Python call per node on it: about 1,000 by default).
    """
    replay = _Replay(loss, gradient, params, "naive_recursive_backward")

    def backward_bad(fn: Any) -> None:
        if len(replay.visits) >= max_visits:
            raise RecursionError(f"naive recursion: more than {max_visits} visits (it is exponential)")
        replay.run(fn)
        for e in replay.needed_edges(fn):
            backward_bad(e.source)

    try:
        backward_bad(replay.root)
    except RecursionError:
        if len(replay.visits) >= max_visits:  # our own error: it says so already
            raise
        raise RecursionError(
            f"naive recursion: the graph is deeper than Python's recursion limit "
            f"({sys.getrecursionlimit()}) allows, after {len(replay.visits)} visits; this replay makes "
            "one Python call per node on a path: use a shallower graph (compare_orders replays any depth)"
        ) from None
    return replay.result("naive recursion")


def _close(a: Any, b: Any) -> bool:
    return np.allclose(to_device(a, "cpu"), to_device(b, "cpu"))


class OrderComparison:
    """Per ordering, the visit order and the leaf gradients; ``agree`` and ``orders_differ`` sum it up."""

    def __init__(self, results: dict) -> None:
        self.results = results  # order -> OrderResult

    def __getitem__(self, order: str) -> OrderResult:
        return self.results[order]

    @property
    def agree(self) -> bool:
        """True when every ordering gives the same gradient for every leaf."""
        first, *rest = self.results.values()
        return all(
            r.leaf_grads.keys() == first.leaf_grads.keys()
            and all(_close(r.leaf_grads[k], first.leaf_grads[k]) for k in first.leaf_grads)
            for r in rest
        )

    @property
    def orders_differ(self) -> bool:
        """True when at least two orderings visited the nodes in a different order."""
        return len({tuple(r.visits) for r in self.results.values()}) > 1

    def __str__(self) -> str:
        width = max(len(k) for k in self.results)
        lines = []
        for order, r in self.results.items():
            lines.append(f"{order:<{width}}  visits: {', '.join(r.visits)}")
        first = next(iter(self.results.values()))
        for name in first.leaf_grads:
            values = {array_text(r.leaf_grads.get(name)) for r in self.results.values()}
            lines.append(f"{'':<{width}}  grad {name} = {' | '.join(sorted(values))}")
        lines.append(
            f"gradients agree: {'yes' if self.agree else 'NO'}; "
            f"visit orders differ: {'yes' if self.orders_differ else 'no'}"
        )
        if first.hooks_skipped:
            lines.append("the graph has hooks, which these replays do not run: backward() runs them")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def compare_orders(
    loss_or_fn: Any, orders: tuple = tuple(ORDERINGS), gradient: Any = None, params: dict | None = None
) -> OrderComparison:
    """Replay one graph under each ordering (``loss_or_fn``: a loss Variable, or a function that
    builds one, or ``(loss, params)``, afresh for each ordering)."""
    if isinstance(orders, str) or not orders:
        raise ValueError(
            f"compare_orders: orders is a tuple of names from {tuple(ORDERINGS)} (at least one), "
            f"got {orders!r}; for one ordering: orders=({orders!r},) or replay_order"
        )
    results = {}
    for order in orders:
        loss, names = _loss_and_params(loss_or_fn, params)
        results[order] = replay_order(loss, order, gradient, names)
    return OrderComparison(results)
