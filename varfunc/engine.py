"""ExecutionEngine: runs backward through the graph, v0.1.3's way.

1. Count, for every Function backward will reach, how many consumers will send a gradient to each
   of its outputs (``_compute_dependencies``).
2. Start from the root's creator with the seed gradient. Pop a ready Function, call its backward,
   and hand each input gradient to the Function that produced that input. Gradients that meet in
   one output slot are summed in a not-ready buffer. A Function whose counts have all reached zero
   is ready and is pushed.
3. A Leaf adds its summed gradient into its Variable's ``.grad``; the first one it keeps as is, so
   the engine hands a Leaf only arrays nobody else holds, copying a borrowed one on its way there.

v0.1.3 used a stack (last pushed, first run); v0.1.4 switched to a FIFO queue. Both are here.
"""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

from .leaf import Leaf

ORDERS = ("stack", "fifo")


class ExecutionEngine:
    """Dependency counts, a ready stack (or queue) and not-ready buffers, as in v0.1.3."""

    def __init__(self, order: str = "stack") -> None:
        if order not in ORDERS:
            raise ValueError(f"ExecutionEngine: order must be one of {ORDERS}, got {order!r}")
        self.order = order

    def _compute_dependencies(self, function: Any) -> dict:
        """{Function: [consumers still to send a gradient, one count per output]} for the graph."""
        dependencies = {function: [0] * len(function.output_ids)}
        to_visit = [function]
        while to_visit:
            fn = to_visit.pop()
            for (prev_fn, arg_id), needed in zip(fn.previous_functions, fn.needs_input_grad):
                if not needed:  # no gradient will flow along this edge: do not wait for it
                    continue
                counts = dependencies.get(prev_fn)
                if counts is None:
                    counts = dependencies[prev_fn] = [0] * len(prev_fn.output_ids)
                    to_visit.append(prev_fn)
                counts[prev_fn.output_ids[arg_id]] += 1
        return dependencies

    def _free_backward_dependency(self, dependencies: dict, prev_fn: Any, fn: Any, arg_id: int) -> int:
        """fn has sent its gradient to prev_fn: count it off and return which output it was for.

        fn is not used: v0.1.3 counted each consumer by name (a Counter per output, keyed by fn), the
        kit counts with integers, and the signature stays v0.1.3's (docs/differences.md, row 19).
        """
        output_nr = prev_fn.output_ids[arg_id]
        dependencies[prev_fn][output_nr] -= 1
        return output_nr

    def _is_ready_for_backward(self, dependencies: dict, function: Any) -> bool:
        """True once every consumer of every output of function has sent its gradient."""
        return not any(dependencies[function])

    def _add_grad(self, need_copy: set, buffer: list, output_nr: int, grad: Any) -> None:
        """Sum grad into buffer[output_nr], copying a borrowed array before the first in-place add."""
        slot = (id(buffer), output_nr)  # one mark per slot; v0.1.3 marked the array, see docs
        if buffer[output_nr] is None:
            # Stored as is, not copied: it may be the caller's seed or the very array another slot
            # holds too (Add.backward returns one array twice), so it must not be added into.
            buffer[output_nr] = grad
            need_copy.add(slot)
            return
        if slot in need_copy:
            buffer[output_nr] = buffer[output_nr].copy()
            need_copy.discard(slot)
        buffer[output_nr] += grad

    def _is_new_array(self, d: Any, grad_input: tuple, grad_output: tuple) -> bool:
        """True if d, from a backward that promised new arrays, is held by nobody else: a Leaf may keep it.

        The promise (``backward_makes_new_arrays``: the matrix products) is checked before backward
        runs, and only if no hook will see the arrays. Then d must own its memory, not be a gradient
        backward was handed, and not be returned twice (or as a view) for another input.
        """
        if d.base is not None or any(g is d for g in grad_output):
            return False
        return sum(g is d or getattr(g, "base", None) is d for g in grad_input) == 1

    def run_backward(self, variable: Any, grad: Any, recorder: Any = None) -> None:
        """Backpropagate grad from variable to every leaf that requires grad.

        recorder.record(kind, function, **details) is called at every step. The arrays in details
        stay the engine's: later sums go into them and a Leaf may keep one as .grad, so a recorder
        copies what it keeps (EventLog does). No event lists the whole ready stack, which would make
        recording grow as the square of a wide graph: "popped" takes one off it, "became_ready" puts
        one on, and the root with the seed is on it before the first pop.
        """
        root = variable.creator
        dependencies = self._compute_dependencies(root)
        root_buffer = [None] * len(root.output_ids)
        if isinstance(root, Leaf):  # backward on a leaf itself: the seed is the caller's array
            grad = grad.copy()
        root_buffer[root.output_ids[id(variable)]] = grad  # v0.1.3 always used slot 0
        ready = deque([(root, root_buffer)])
        take_next = ready.pop if self.order == "stack" else ready.popleft
        not_ready: dict = {}
        need_copy: set = set()
        if recorder is not None:
            recorder.record("dependencies", root, counts={f: list(c) for f, c in dependencies.items()})
        while ready:
            fn, grad_output = take_next()
            if recorder is not None:
                recorder.record("popped", fn, grad_output=tuple(grad_output))
            # promised: may a Leaf keep fn's gradients as .grad without a copy (_is_new_array, below)?
            # Read before backward runs: a hook that saw the arrays may have kept them, and it may have
            # removed itself by the time backward returns.
            promised = fn.backward_makes_new_arrays and not fn.backward_hooks
            try:
                grad_input = fn._do_backward(*grad_output)
            except BaseException as error:  # the pass stops here: say which leaves it already changed
                _note_leaves_reached(error, dependencies, ready, fn)
                if recorder is not None:
                    recorder.record("failed", fn, error=repr(error))
                raise
            if recorder is not None:
                kind = "accumulated" if isinstance(fn, Leaf) else "called_backward"
                recorder.record(kind, fn, grad_output=tuple(grad_output), grad_input=grad_input)
            for (prev_fn, arg_id), needed, d in zip(fn.previous_functions, fn.needs_input_grad, grad_input):
                if not needed:
                    continue
                output_nr = self._free_backward_dependency(dependencies, prev_fn, fn, arg_id)
                buffer = not_ready.pop(prev_fn, None)  # put back below unless prev_fn is ready
                if buffer is None:
                    buffer = [None] * len(prev_fn.output_ids)
                if buffer[output_nr] is None and dependencies[prev_fn][output_nr] == 0:
                    # The slot's only gradient: nothing to sum, no mark needed. A Leaf will keep it
                    # as .grad, so it must be an array nobody else holds.
                    if isinstance(prev_fn, Leaf) and not (
                        promised and self._is_new_array(d, grad_input, grad_output)
                    ):
                        d = d.copy()
                    buffer[output_nr] = d
                else:
                    self._add_grad(need_copy, buffer, output_nr, d)
                is_ready = self._is_ready_for_backward(dependencies, prev_fn)
                if is_ready:
                    ready.append((prev_fn, buffer))
                else:
                    not_ready[prev_fn] = buffer
                if recorder is not None:
                    _report_hand_over(recorder, fn, prev_fn, output_nr, d, buffer, dependencies, is_ready)


def _report_hand_over(recorder, fn, prev_fn, output_nr, grad, buffer, dependencies, is_ready) -> None:
    """Tell the recorder that fn sent grad to output output_nr of prev_fn, and what that slot holds now.

    Only the slot that changed is reported, not all k of prev_fn's: k sends would copy k^2 arrays.
    """
    recorder.record("sent_gradient", fn, to=prev_fn, output_nr=output_nr, grad=grad)
    recorder.record(
        "became_ready" if is_ready else "buffered",
        prev_fn,
        output_nr=output_nr,
        grad_so_far=buffer[output_nr],
        remaining=dependencies[prev_fn][output_nr],
    )


def _note_leaves_reached(error: BaseException, dependencies: dict, ready: deque, failed: Any) -> None:
    """Add a note to error naming the leaves that this stopped pass has already added into .grad.

    A Leaf has accumulated when it has been popped: all its counts are zero, it is no longer on the
    ready stack, and it is not the Function that failed. (Python 3.10 has no notes: nothing is added.)
    """
    waiting = {id(fn) for fn, _ in ready}
    reached = [
        fn
        for fn, counts in dependencies.items()
        if isinstance(fn, Leaf)
        and fn is not failed
        and id(fn) not in waiting
        and not any(counts)
        and fn.requires_grad
        and fn.variable is not None
    ]
    if reached and hasattr(error, "add_note"):
        shapes = [str(tuple(fn.variable.shape)) for fn in reached[:5]] + ["..."] * (len(reached) > 5)
        which = f"{len(reached)} leaf Variable{'s' * (len(reached) > 1)} (shape {', '.join(shapes)})"
        error.add_note(
            f"backward stopped part-way, after {which} had added this pass's gradient into .grad: zero "
            "their .grad (optimizer.zero_grad()) before calling backward again, or it counts twice"
        )


class EngineEvent(NamedTuple):
    """One thing the engine did: its step number, kind, the Function it concerns, and details."""

    step: int
    kind: str
    function: Any
    details: dict


class EventLog:
    """A recorder that keeps every engine event, with gradients copied (buffers are summed in place).

    The gradients are those the engine handles: a Function's hooks run inside its ``_do_backward``,
    after the ``popped`` event, so an ``accumulated`` event shows a Leaf's gradient before its hooks
    changed it. ``viz.trace`` also records each hook that ran and each ``.grad`` after it.
    """

    def __init__(self) -> None:
        self.events: list[EngineEvent] = []

    def record(self, kind: str, function: Any, **details: Any) -> None:
        """Called by the engine at every step."""
        snapshot = {key: _copy_arrays(value) for key, value in details.items()}
        self.events.append(EngineEvent(len(self.events), kind, function, snapshot))

    def visit_order(self) -> list:
        """The Functions in the order the engine popped them."""
        return [event.function for event in self.events if event.kind == "popped"]


def _copy_arrays(value: Any) -> Any:
    if hasattr(value, "copy") and hasattr(value, "shape"):
        return value.copy()
    if type(value) is tuple:
        return tuple(_copy_arrays(v) for v in value)
    return value
