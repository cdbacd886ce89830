"""The engine's events told one by one: a log line for each, and the picture's state after it.

``Story`` replays the events that a recorder got from ``ExecutionEngine.run_backward`` (and, under
``trace``, from the hooks): it rebuilds the ready stack (or queue), the dependency counts, the
not-ready buffers and the gradients each Variable holds, event by event, and says in words what the
engine did. replay.py draws a frame from each state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from ..backend import is_array
from .fmt import array_text
from .graph import GraphView
from .recorder import same, same_grads

READY_SHOWN = 8  # names listed from the ready stack in a log line or a frame
DEPS_SHOWN = 20  # Functions listed in the log's first line, the dependency counts
ERROR_SHOWN = 120  # characters of a failed backward's error in its log line (the error says the rest)
WIDE = 8  # a Function with more outputs than this gets a short buffer line: the changed slot only
SENDS = ("sent_gradient", "buffered", "became_ready")  # the events of one gradient's journey (red edge)


def _join(grads: Any) -> str:
    return ", ".join(array_text(g) for g in grads) if grads else "-"


def _is_gradient(value: Any) -> bool:
    """Whether a hook returned an array (or a NumPy number), not a Variable, a list or the like."""
    return is_array(value) or isinstance(value, np.generic)


def _described(value: Any) -> str:
    """``a Variable``, ``a tuple of 2 (Variable, ndarray)``: what a hook returned instead of gradients."""
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} ({', '.join(type(v).__name__ for v in value)})"
    return f"a {type(value).__name__}"


def _function_hook_text(where: str, grad_input: tuple, grad_output: tuple, returned: Any) -> str:
    """A Function hook's line: what it saw (backward's result, or the hook before it's), what it returned."""
    line = f"{where} saw grad_input {_join(grad_input)} and grad_output {_join(grad_output)}"
    if returned is None:
        return line
    if not isinstance(returned, tuple) or not all(g is None or _is_gradient(g) for g in returned):
        return f"{line}; it returned {_described(returned)}"  # which the engine refuses next
    if same_grads(returned, grad_input):  # handed back as they were
        return f"{line}; it returned them unchanged"
    return f"{line}; it returned {_join(returned)} in its place"


@dataclass
class State:
    """The picture after one event of a replay; live: the next event changes it."""

    current: Any = None  # the Function the event concerns (gold)
    popped: Any = None  # the Function the engine popped last: the one whose hooks run now
    failed: Any = None  # the Function whose backward raised (red): the pass stopped there
    edge: tuple | None = None  # (source, target, input_nr) the last gradient was sent along (red)
    deps: dict = field(default_factory=dict)
    open_slots: dict = field(default_factory=dict)  # Function -> how many of its counts are not 0 yet
    buffers: dict = field(default_factory=dict)  # Function -> its not-ready buffer, rebuilt slot by slot
    labels: dict = field(default_factory=dict)  # (Function, slot) -> "buffer [1, 1]" or "grad_output ..."
    grads_after: dict = field(default_factory=dict)  # (Leaf, 0) -> ".grad = [3, 3]" once it accumulated
    accumulated: list = field(default_factory=list)  # the Leaves that added into .grad, in order
    waiting: set = field(default_factory=set)  # Functions whose buffer is not full yet
    ready: deque = field(default_factory=deque)  # the ready stack, rebuilt as the engine pushed and popped
    ready_fns: set = field(default_factory=set)  # the Functions on it, for colouring
    done: set = field(default_factory=set)
    sends_left: deque = field(default_factory=deque)  # needed edges of the running Function, in order
    received: list = field(default_factory=list)  # its grad_output, as its hooks left it
    next_event: Any = None  # the event after this backward's dependencies: the root's pop, with the seed


class Story:
    """The log of ``events`` (from one engine run, or several in a row), and the state after each.

    ``events``: in the order things happened (``recorder.in_call_order``, as Recording passes them).

    ``grads_after``: {Leaf: its .grad after this backward}, shown once the Leaf accumulated.
    """

    def __init__(self, view: GraphView, events: list, order: str, style: str, grads_after: dict) -> None:
        self.view = view
        self.events = events
        self.order = order
        self.style = style
        self.grads_after = grads_after

    def name(self, fn: Any) -> str:
        """fn's name in the log, in the story's style (``MulConstant#1`` or ``MulBackward0#1``)."""
        return self.view.name(fn, self.style)

    def ready_names(self, s: State) -> list:
        """The names on the ready stack or queue, next first; past READY_SHOWN, how many more."""
        fns = reversed(s.ready) if self.order == "stack" else iter(s.ready)
        return self._first_names(list(islice(fns, READY_SHOWN)), len(s.ready))

    def _first_names(self, fns: list, count: int) -> list:
        """The names of fns, then ``(+N more)`` if count is larger: a wide graph's lines stay short."""
        names = [self.name(fn) for fn in fns]
        if count > len(fns):
            names.append(f"(+{count - len(fns)} more)")
        return names

    def _ready_text(self, s: State) -> str:
        return f"ready: {', '.join(self.ready_names(s)) or '-'}"

    def _take_ready(self, s: State, fn: Any) -> None:
        """The engine popped fn: take it off the rebuilt stack (its top) or queue (its front)."""
        taken = s.ready.pop() if self.order == "stack" else s.ready.popleft()
        if taken is not fn:  # the events do not come from one run of a self.order engine
            raise ValueError(
                f"Recording: the engine popped {self.name(fn)} where a {self.order} engine pops "
                f"{self.name(taken)}; pass the order of the engine that recorded these events"
            )
        s.ready_fns.discard(fn)

    def replay(self) -> Iterator[tuple[str, State]]:
        """Replay the events: yield each one's log line and the picture's state just after it.

        The state is live (the next event changes it): use it before asking for the next one. No
        copy per event keeps a trace linear in the number of events; a frame is drawn on demand.
        """
        state = State()
        for index, event in enumerate(self.events):
            if event.kind == "dependencies":  # a backward starts (a log may hold several): a new picture
                following = self.events[index + 1] if index + 1 < len(self.events) else None
                state = State(next_event=following)
            state.current = event.function
            if event.kind not in SENDS:  # the red edge shows one gradient's journey only
                state.edge = None
            tell = getattr(self, f"_on_{event.kind}", None)
            if tell is None:  # an event kind this replay does not know: still one line
                text = f"{event.kind} {self.name(event.function)} {event.details}"
            else:
                text = tell(state, event.function, event.details)
            yield f"{event.step:3d} {text}", state

    def _on_dependencies(self, s: State, fn: Any, d: dict) -> str:
        if fn not in self.view.index:
            raise ValueError(
                f"Recording: the events hold a backward from {type(fn).__name__}, which is not in the "
                "view's graph; make the GraphView from the loss that backward ran from"
            )
        s.deps = {f: list(c) for f, c in d["counts"].items()}
        s.open_slots = {f: len(c) - c.count(0) for f, c in s.deps.items()}
        self._seed_is_ready(s)
        return "dependencies: " + ", ".join(self.counts_text(s, DEPS_SHOWN))

    def counts_text(self, s: State, shown: int) -> list:
        """``Sum#5 [0]`` for each Function the engine counted, output first; past shown, how many more."""
        listed = [f for f in reversed(self.view.functions) if f in s.deps]
        texts = [f"{self.name(f)} {s.deps[f]}" for f in listed[:shown]]
        if len(texts) < len(listed):
            texts.append(f"(+{len(listed) - len(texts)} more)")
        return texts

    def _seed_is_ready(self, s: State) -> None:
        """Before the first pop the engine's ready deque holds the root with the seed (the pop shows it)."""
        first = s.next_event  # the engine pops the root right after it counted the dependencies
        if first is None or first.kind != "popped":
            return
        root = first.function
        s.ready, s.ready_fns = deque([root]), {root}
        for j, g in enumerate(first.details["grad_output"]):
            if g is not None:
                s.labels[(root, j)] = f"buffer {array_text(g)}"

    def _on_popped(self, s: State, fn: Any, d: dict) -> str:
        s.popped = fn
        self._take_ready(s, fn)
        s.received = list(d["grad_output"])
        for j, g in enumerate(s.received):
            if g is not None:
                s.labels[(fn, j)] = f"grad_output {array_text(g)}"
        s.waiting.discard(fn)
        return (
            f"pop {self.name(fn)} with grad_output {_join(d['grad_output'])}; "
            f"deps {s.deps.get(fn)}; {self._ready_text(s)}"
        )

    def _on_hook(self, s: State, fn: Any, d: dict) -> str:
        where = f"hook {d['name']!r} on {self.name(fn)}"
        if fn is not s.popped:  # run by a backward that a Function's backward started: not this one
            s.current = s.popped
            return f"{where} ran in another backward, started inside this one: not part of this replay"
        if d["output_nr"] is None:  # a function hook: it sees both sides, and may replace grad_input
            grad_input, grad_output = d["given"]
            return _function_hook_text(where, grad_input, grad_output, d["returned"])
        return self._variable_hook(s, fn, where, d["output_nr"], d["given"][0], d["returned"])

    def _variable_hook(self, s: State, fn: Any, where: str, j: int, before: Any, returned: Any) -> str:
        if returned is not None and not _is_gradient(returned):  # the engine refuses it next
            return f"{where} output {j}: {array_text(before)}; it returned {_described(returned)}"
        after = before if returned is None else returned
        if same(before, after):
            return f"{where} output {j}: {array_text(before)} (unchanged)"
        s.received[j] = after
        s.labels[(fn, j)] = f"grad_output {array_text(after)} (hooked)"
        return f"{where} output {j}: {array_text(before)} -> {array_text(after)}"

    def _on_called_backward(self, s: State, fn: Any, d: dict) -> str:
        s.done.add(fn)
        s.sends_left = deque(e for e in self.view.inputs.get(fn, []) if e.needed)
        returned = d.get("backward_returned", d["grad_input"])  # Function hooks may replace it next
        return f"{self.name(fn)}.backward({_join(s.received)}) -> {_join(returned)}"

    def _on_accumulated(self, s: State, fn: Any, d: dict) -> str:
        s.done.add(fn)
        s.sends_left = deque()
        if fn in self.grads_after:
            s.grads_after[(fn, 0)] = f".grad = {array_text(self.grads_after[fn])}"
        facts = self.view.facts((fn, 0))
        if not facts.requires_grad:  # frozen after forward: the Leaf keeps nothing
            return f"{self.name(fn)}: requires_grad is False now, so .grad stays as it was"
        if not facts.exists:
            return f"{self.name(fn)}: its Variable no longer exists, so no .grad gets {_join(s.received)}"
        s.accumulated.append(fn)
        return f"{self.name(fn)}: .grad += {_join(s.received)}"

    def _on_failed(self, s: State, fn: Any, d: dict) -> str:
        s.failed = fn
        if s.accumulated:
            leaves = ", ".join(self._first_names(s.accumulated[:READY_SHOWN], len(s.accumulated)))
            changed = f"{leaves} had already added this pass's gradient into .grad"
        else:
            changed = "no leaf's .grad had changed yet"
        error = d["error"] if len(d["error"]) <= ERROR_SHOWN else d["error"][: ERROR_SHOWN - 1] + "…"
        where = "in its backward or a hook on it"
        return f"{self.name(fn)} raised {error} ({where}): the pass stopped here; {changed}"

    def _on_sent_gradient(self, s: State, fn: Any, d: dict) -> str:
        edge = s.sends_left.popleft() if s.sends_left else None
        s.edge = (edge.source, edge.target, edge.input_nr) if edge is not None else None
        target = self.name(d["to"])
        if len(d["to"].output_ids or ()) > 1:
            target += f" output {d['output_nr']}"
        return f"{self.name(fn)} sends {array_text(d['grad'])} to {target}"

    def _on_buffered(self, s: State, fn: Any, d: dict) -> str:
        return self._buffer(s, fn, d, ready=False)

    def _on_became_ready(self, s: State, fn: Any, d: dict) -> str:
        return self._buffer(s, fn, d, ready=True)

    def _buffer(self, s: State, fn: Any, d: dict, ready: bool) -> str:
        """The engine put a gradient in one slot of fn's buffer: the event names that slot only."""
        slot, counts = d["output_nr"], s.deps[fn]
        if counts[slot] and not d["remaining"]:
            s.open_slots[fn] -= 1
        counts[slot] = d["remaining"]
        buffer = s.buffers.setdefault(fn, [None] * len(counts))
        summed = buffer[slot] is not None  # a gradient was there already: the new one was added
        buffer[slot] = d["grad_so_far"]
        s.labels[(fn, slot)] = f"buffer {array_text(buffer[slot])}"
        if ready:
            s.ready.append(fn)
            s.ready_fns.add(fn)
            s.waiting.discard(fn)
        else:
            s.waiting.add(fn)
        line = f"{self.name(fn)}: {'summed into' if summed else 'stored in'} buffer slot {slot}, "
        if len(counts) > WIDE:  # all k slots on every line would make the log grow as k^2
            line += (
                f"now {array_text(buffer[slot])}, deps {counts[slot]} left for this slot, "
                f"{s.open_slots[fn]} of {len(counts)} outputs still wait"
            )
        else:
            line += f"buffer ({_join(buffer)}), deps {counts}"
        return f"{line} -> {'ready' if ready else 'waits'}; {self._ready_text(s)}"
