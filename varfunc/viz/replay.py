"""``trace(loss)``: run backward with the engine's recorder on and replay what it did, step by step.

The engine (varfunc/engine.py) reports every event to a recorder: the dependency counts, each Function
it popped, each backward call, each gradient sent, each buffer that got it (stored or summed) and
whether that made a Function ready, each Leaf that accumulated into ``.grad``. A Recording turns
those events into a text log (one line per event, names from ``GraphView``: ``MulConstant#1``, a
leaf by its ``params`` name or ``Leaf#k``) and one frame per event: the graph with the current
Function in gold, ready ones green, waiting ones (a buffer not yet full) khaki, finished ones grey,
dependency counts in the boxes, gradients on the Variables, the ready stack beside the graph and the
log line on top. On a Variable, ``buffer`` is the gradient summed so far for it, ``grad_output`` what
its creator's backward was handed (after the hooks, when one changed it) and, on a leaf once it
accumulated, ``.grad`` the leaf's gradient after this backward. Hooks that ran have a log line each
(see recorder.py). Frames are written out by export.py.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from ..engine import EventLog, ExecutionEngine
from ..variable import Variable
from .dot import COLORS, DotOptions, Overlay, build_dot
from .export import MAX_GIF_NODES, Frame, check_gif_size, save_frames, save_gif
from .fmt import array_text
from .graph import GraphView, too_large
from .orders import checked_seed
from .recorder import grads_after, hooks_recorded, same, same_grads
from .render import GraphTooLarge

# Frames are refused for graphs of more nodes than this unless max_nodes says otherwise: one frame
# per event (about 4 per node), each a picture of the whole graph, so the cost grows as the square
# (a 500-node chain: 2,007 frames, 17 s of DOT text before any rendering).
MAX_FRAME_NODES = 100
READY_SHOWN = 8  # names listed from the ready stack in a log line or a frame
WIDE = 8  # a Function with more outputs than this gets a short buffer line: the changed slot only


def _join(grads: Any) -> str:
    return ", ".join(array_text(g) for g in grads) if grads else "-"


@dataclass
class _State:
    """The picture after one event of a replay; live: the next event changes it."""

    current: Any = None  # the Function the event concerns (gold)
    edge: tuple | None = None  # (source, target, input_nr) the last gradient was sent along (red)
    deps: dict = field(default_factory=dict)
    open_slots: dict = field(default_factory=dict)  # Function -> how many of its counts are not 0 yet
    buffers: dict = field(default_factory=dict)  # Function -> its not-ready buffer, rebuilt slot by slot
    labels: dict = field(default_factory=dict)  # (Function, slot) -> "buffer [1, 1]" or "grad_output ..."
    grads_after: dict = field(default_factory=dict)  # (Leaf, 0) -> ".grad = [3, 3]" once it accumulated
    waiting: set = field(default_factory=set)  # Functions whose buffer is not full yet
    ready: deque = field(default_factory=deque)  # the ready stack, rebuilt as the engine pushed and popped
    ready_fns: set = field(default_factory=set)  # the Functions on it, for colouring
    done: set = field(default_factory=set)
    sends_left: deque = field(default_factory=deque)  # needed edges of the running Function, in order
    received: list = field(default_factory=list)  # its grad_output, as its hooks left it
    backward_gave: tuple | None = None  # what backward returned, when a Function hook replaced it
    next_event: Any = None  # the event after this backward's dependencies: the root's pop, with the seed


class Recording:
    """The engine's story for one backward: ``.events``, ``.lines``/``str()``, ``.frames``, ``.stepper()``.

    ``max_nodes``: frames are refused for a graph of more nodes (None: no limit); the log never is.
    ``grads_after``: {Leaf: its .grad after this backward}, shown in the frames once it accumulated.
    """

    def __init__(
        self,
        view: GraphView,
        events: list,
        order: str,
        options: DotOptions | None = None,
        max_nodes: int | None = MAX_FRAME_NODES,
        grads_after: dict | None = None,
    ) -> None:
        self.view = view
        self.events = events
        self.order = order
        self.options = options or DotOptions()
        self.max_nodes = max_nodes
        self.grads_after = grads_after or {}
        self.lines: list[str] = [line for line, _ in self._replay()]
        self._frames: list | None = None

    # --- the story ------------------------------------------------------------------------------

    def name(self, fn: Any) -> str:
        """fn's name in the log, in the recording's style (``MulConstant#1`` or ``MulBackward0#1``)."""
        return self.view.name(fn, self.options.style)

    def _ready_names(self, s: _State) -> list:
        """The names on the ready stack or queue, next first; past READY_SHOWN, how many more."""
        fns = reversed(s.ready) if self.order == "stack" else iter(s.ready)
        names = [self.name(fn) for fn in islice(fns, READY_SHOWN)]
        if len(s.ready) > READY_SHOWN:  # a wide graph: listing all would make the log grow as the square
            names.append(f"(+{len(s.ready) - READY_SHOWN} more)")
        return names

    def _ready_text(self, s: _State) -> str:
        return f"ready: {', '.join(self._ready_names(s)) or '-'}"

    def _take_ready(self, s: _State, fn: Any) -> None:
        """The engine popped fn: take it off the rebuilt stack (its top) or queue (its front)."""
        taken = s.ready.pop() if self.order == "stack" else s.ready.popleft()
        if taken is not fn:  # the events do not come from one run of a self.order engine
            raise ValueError(
                f"Recording: the engine popped {self.name(fn)} where a {self.order} engine pops "
                f"{self.name(taken)}; pass the order of the engine that recorded these events"
            )
        s.ready_fns.discard(fn)

    def _replay(self) -> Iterator[tuple[str, _State]]:
        """Replay the events: yield each one's log line and the picture's state just after it.

        The state is live (the next event changes it): use it before asking for the next one. No
        copy per event keeps a trace linear in the number of events; a frame is drawn on demand.
        """
        state = _State()
        for index, event in enumerate(self.events):
            if event.kind == "dependencies":  # a backward starts (a log may hold several): a new picture
                following = self.events[index + 1] if index + 1 < len(self.events) else None
                state = _State(next_event=following)
            state.current = event.function
            tell = getattr(self, f"_on_{event.kind}", None)
            if tell is None:  # an event kind this replay does not know: still one line
                text = f"{event.kind} {self.name(event.function)} {event.details}"
            else:
                text = tell(state, event.function, event.details)
            yield f"{event.step:3d} {text}", state
            if event.kind not in ("sent_gradient", "buffered", "became_ready"):
                state.edge = None

    def _on_dependencies(self, s: _State, fn: Any, d: dict) -> str:
        if fn not in self.view.index:
            raise ValueError(
                f"Recording: the events hold a backward from {type(fn).__name__}, which is not in the "
                "view's graph; make the GraphView from the loss that backward ran from"
            )
        s.deps = {f: list(c) for f, c in d["counts"].items()}
        s.open_slots = {f: len(c) - c.count(0) for f, c in s.deps.items()}
        self._seed_is_ready(s)
        return "dependencies: " + ", ".join(self._counts_text(s))

    def _counts_text(self, s: _State, shown: int | None = None) -> list:
        """``Sum#5 [0]`` for each Function the engine counted, output first; past shown, how many more."""
        listed = [f for f in reversed(self.view.functions) if f in s.deps]
        texts = [f"{self.name(f)} {s.deps[f]}" for f in listed[:shown]]
        if len(texts) < len(listed):
            texts.append(f"(+{len(listed) - len(texts)} more)")
        return texts

    def _seed_is_ready(self, s: _State) -> None:
        """Before the first pop the engine's ready deque holds the root with the seed (the pop shows it)."""
        first = s.next_event  # the engine pops the root right after it counted the dependencies
        if first is None or first.kind != "popped":
            return
        root = first.function
        s.ready, s.ready_fns = deque([root]), {root}
        for j, g in enumerate(first.details["grad_output"]):
            if g is not None:
                s.labels[(root, j)] = f"buffer {array_text(g)}"

    def _on_popped(self, s: _State, fn: Any, d: dict) -> str:
        s.backward_gave = None
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

    def _on_hook(self, s: _State, fn: Any, d: dict) -> str:
        where = f"hook {d['name']!r} on {self.name(fn)}"
        if d["output_nr"] is None:  # a function hook: it sees both sides, and may replace grad_input
            grad_input, grad_output = _join(d["grad_input"]), _join(d["grad_output"])
            line = f"{where} saw grad_input {grad_input} and grad_output {grad_output}"
            if d["replacement"] is None:
                return line
            if same_grads(d["replacement"], d["grad_input"]):  # handed back as they were
                return f"{line}; it returned them unchanged"
            if s.backward_gave is None:  # the first hook to replace it saw what backward returned
                s.backward_gave = d["grad_input"]
            return f"{line}; it returned {_join(d['replacement'])} in its place"
        j, before, after = d["output_nr"], d["grad"], d["grad_after"]
        if same(before, after):
            return f"{where} output {j}: {array_text(before)} (unchanged)"
        s.received[j] = after
        s.labels[(fn, j)] = f"grad_output {array_text(after)} (hooked)"
        return f"{where} output {j}: {array_text(before)} -> {array_text(after)}"

    def _on_called_backward(self, s: _State, fn: Any, d: dict) -> str:
        s.done.add(fn)
        s.sends_left = deque(e for e in self.view.inputs.get(fn, []) if e.needed)
        gave, s.backward_gave = s.backward_gave, None
        line = f"{self.name(fn)}.backward({_join(s.received)}) -> "
        if gave is None:
            return line + _join(d["grad_input"])
        return line + f"{_join(gave)}, replaced by its hook with {_join(d['grad_input'])}"

    def _on_accumulated(self, s: _State, fn: Any, d: dict) -> str:
        s.done.add(fn)
        s.sends_left = deque()
        if fn in self.grads_after:
            s.grads_after[(fn, 0)] = f".grad = {array_text(self.grads_after[fn])}"
        if not fn.requires_grad:  # frozen after forward: the Leaf keeps nothing
            return f"{self.name(fn)}: requires_grad is False now, so .grad stays as it was"
        if fn.variable is None:
            return f"{self.name(fn)}: its Variable no longer exists, so no .grad gets {_join(s.received)}"
        return f"{self.name(fn)}: .grad += {_join(s.received)}"

    def _on_sent_gradient(self, s: _State, fn: Any, d: dict) -> str:
        edge = s.sends_left.popleft() if s.sends_left else None
        s.edge = (edge.source, edge.target, edge.input_nr) if edge is not None else None
        target = self.name(d["to"])
        if len(d["to"].output_ids or ()) > 1:
            target += f" output {d['output_nr']}"
        return f"{self.name(fn)} sends {array_text(d['grad'])} to {target}"

    def _on_buffered(self, s: _State, fn: Any, d: dict) -> str:
        return self._buffer(s, fn, d, ready=False)

    def _on_became_ready(self, s: _State, fn: Any, d: dict) -> str:
        return self._buffer(s, fn, d, ready=True)

    def _buffer(self, s: _State, fn: Any, d: dict, ready: bool) -> str:
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

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def __repr__(self) -> str:
        return str(self)

    @property
    def text(self) -> str:
        """The log, one line per engine event."""
        return str(self)

    @property
    def visit_order(self) -> list:
        """Names of the Functions in the order the engine popped them."""
        return [self.name(e.function) for e in self.events if e.kind == "popped"]

    # --- frames ---------------------------------------------------------------------------------

    def frame_source(self, step: int) -> str:
        """The DOT text of the frame after event ``step``."""
        self._check_size()
        count = len(self.events)
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
            raise TypeError(
                f"frame_source: step is an event's number (an int, negative from the end), got {step!r}"
            )
        if not -count <= step < count:
            raise IndexError(f"frame_source: step {step} is out of range: the trace has {count} events")
        step %= count
        if self._frames is not None:
            return self._frames[step].source
        _, state = next(islice(self._replay(), step, None))  # replay up to that event
        return self._frame_dot(step, state)

    def _frame_dot(self, step: int, state: _State) -> str:
        overlay = Overlay(caption=self.lines[step])
        if self.events[step].kind == "dependencies":  # one count per Function: a caption as wide as a wall
            overlay.caption = f"{self.events[step].step:3d} dependencies: " + ", ".join(
                self._counts_text(state, READY_SHOWN)
            )
        overlay.ready_title = f"ready {'stack' if self.order == 'stack' else 'queue'} (next first)"
        overlay.ready_lines = self._ready_names(state)
        for fn in self.view.functions:
            if fn in state.done:
                overlay.fill[fn] = COLORS["done"]
            elif fn in state.ready_fns:
                overlay.fill[fn] = COLORS["ready"]
            elif fn in state.waiting:
                overlay.fill[fn] = COLORS["waiting"]
            if fn in state.deps:
                overlay.function_lines[fn] = [f"deps {state.deps[fn]}"]
        overlay.fill[state.current] = COLORS["current"]
        for slot, label in state.labels.items():
            overlay.variable_lines[slot] = [label]
        for slot, label in state.grads_after.items():
            overlay.variable_lines.setdefault(slot, []).append(label)
        overlay.edge = state.edge
        return build_dot(self.view, self.options, overlay)

    def _check_size(self) -> None:
        refused = too_large(self.view, self.max_nodes)
        if refused:
            raise GraphTooLarge(
                f"frames: {refused}; a trace has one frame per engine event ({len(self.events):,} here), "
                f"each a picture of the whole graph. Set recording.max_nodes = {len(self.view.functions)} "
                "(or None) to make them anyway; the log, print(recording), needs no frames"
            )

    @property
    def frames(self) -> list:
        """One Frame per event (built on first use, in one replay)."""
        if self._frames is None:
            self._check_size()
            self._frames = [
                Frame(self._frame_dot(i, state), i, self.lines[i], self.events[i])
                for i, (_, state) in enumerate(self._replay())
            ]
        return self._frames

    def stepper(self, interval: int = 900) -> Any:
        """An ipywidgets Play + IntSlider that step through the frames (needs ipywidgets)."""
        from .widgets import stepper  # ipywidgets is optional

        return stepper(self.frames, interval=interval)

    # --- export ---------------------------------------------------------------------------------

    def save_frames(self, directory: str, format: str = "svg", prefix: str = "frame") -> list:
        """Write one file per frame (``frame_000.svg`` ...; format ``svg``, ``png`` or ``dot``)."""
        return save_frames(self.frames, directory, format, prefix)  # GraphTooLarge before any write

    def save_gif(
        self,
        path: str,
        duration: int = 900,
        last_duration: int = 2500,
        scale: float = 1.0,
        colors: int = 64,
        max_nodes: int | None = MAX_GIF_NODES,
    ) -> str:
        """An animated GIF of the frames (needs Pillow and a PNG renderer: ``dot`` or pygraphviz).

        Refused (GraphTooLarge) for a graph of more than max_nodes nodes (30 by default; None: no
        limit) or a trace of more than 250 frames: a frame of it would be too small to read.
        """
        check_gif_size(len(self.view.functions), len(self.events), max_nodes)
        return save_gif(self.frames, path, duration, last_duration, scale, colors)


def trace(
    loss: Any,
    order: str = "stack",
    gradient: Any = None,
    params: dict | None = None,
    style: str = "v0.1",
    show_shapes: bool = False,
    legend: bool = False,
    max_nodes: int | None = MAX_FRAME_NODES,
) -> Recording:
    """Run ``loss.backward(gradient)`` with an EventLog recorder and return the Recording.

    order: ``"stack"`` (v0.1.3) or ``"fifo"`` (v0.1.4). Gradients accumulate into the leaves'
    ``.grad`` as with any backward, and hooks run (each one gets a log line). params:
    ``{name: Variable}`` names leaves in the log and frames. style: names and pictures, ``"v0.1"`` or
    ``"modern"``. max_nodes: frames of a graph with more nodes (100 by default; None: no limit) are
    refused; the log is always there.
    """
    if not isinstance(loss, Variable):
        raise TypeError(f"trace: loss must be one Variable to run backward from, got {type(loss).__name__}")
    options = DotOptions(style=style, show_shapes=show_shapes, legend=legend)  # checked before backward
    engine = ExecutionEngine(order)
    view = GraphView(loss, params)
    checked_seed("trace", loss, gradient)  # backward's refusals, named for trace, before any hook is wrapped
    log = EventLog()
    with hooks_recorded(view.functions, log):
        loss.backward(gradient, engine=engine, recorder=log)
    return Recording(view, log.events, order, options, max_nodes, grads_after(log.events))
