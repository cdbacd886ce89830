"""``trace(loss)``: run backward with the engine's recorder on and replay what it did, step by step.

The engine (varfunc/engine.py) reports every event to a recorder: the dependency counts, each
Function it popped, each backward call, each gradient sent, each buffer that got it (stored or
summed) and whether that made a Function ready, each Leaf that accumulated into ``.grad``, and a
backward that raised. A Recording turns those events into a text log (story.py: one line per event,
names from ``GraphView``: ``MulConstant#1``, a leaf by its ``params`` name or ``Leaf#k``) and one
frame per event: the graph with the current Function in gold, ready ones green, waiting ones (a
buffer not yet full) khaki, finished ones faded to white, one that raised red, dependency counts in
the boxes, gradients on the Variables, the ready stack beside the graph and the log line on top. On
a Variable, ``buffer`` is the gradient summed so far for it, ``grad_output`` what its creator's
backward was handed (after the hooks, when one changed it) and, on a leaf once it accumulated,
``.grad`` the leaf's gradient after this backward (with ``show_grads``, its ``grad`` before that).
Hooks that ran have a log line each (see recorder.py). The frames show the graph as it was when the
Recording was made (snapshot.py), however late they are drawn. Frames are written out by export.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from itertools import islice
from typing import Any

import numpy as np

from ..engine import EventLog, ExecutionEngine
from ..hooks import hooks_reported_to
from ..variable import Variable
from .dot import COLORS, DotOptions, Overlay, build_dot, grad_line, node_count
from .export import MAX_GIF_NODES, Frame, check_gif_size, save_frames, save_gif
from .graph import MAX_NODES, GraphView, check_max_nodes, too_large
from .orders import checked_seed
from .recorder import accumulated_grads, in_call_order, same
from .render import GraphTooLarge
from .snapshot import FrozenView
from .story import READY_SHOWN, State, Story

# Frames are refused for graphs whose picture has more nodes than this (dot.node_count: boxes,
# Variables, saved tensors) unless max_nodes says otherwise: one frame per event (about 4 per
# Function), each a picture of the whole graph, so the cost grows as the square (a 500-op chain,
# 1,002 nodes: 2,007 frames, 17 s of DOT text before any rendering). A chain of 99 ops draws 200.
MAX_FRAME_NODES = 200
NOT_RECORDED = "grad before this pass: not recorded"


class Recording:
    """The engine's story for one backward: ``.events``, ``.lines``/``str()``, ``.frames``, ``.stepper()``.

    ``max_nodes``: frames are refused when a picture of the graph has more nodes (None: no limit);
    the log never is. ``grads_after``: {Leaf: its .grad after this backward}, shown in the frames
    once it accumulated; left out, it is read from the leaves now if ``options.show_grads`` is set.
    The frames show the graph as it is when the Recording is made, however late they are drawn.
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
        self.options = options or DotOptions()
        o = self.options
        self.view = FrozenView(view, values=o.show_values, grads=o.show_grads, saved=o.show_saved)
        self.events = in_call_order(events)  # a Function hook after the backward it saw (recorder.py)
        self.order = order
        self.max_nodes = max_nodes
        if grads_after is None:
            grads_after = accumulated_grads(self.events) if o.show_grads else {}
        self.grads_after = grads_after
        self.story = Story(self.view, self.events, order, self.options.style, self.grads_after)
        self._frame_options = replace(o, show_grads=False)  # a frame shows .grad as it was at its step
        self._still_grads = self._grads_left_alone() if o.show_grads else {}
        self._grads_before = self._grads_before_accumulating() if o.show_grads else {}
        self._nodes = node_count(self.view, self._frame_options, replay=True)
        self.lines: list[str] = [line for line, _ in self._replay()]
        self._frames: list | None = None

    def _grads_left_alone(self) -> dict:
        """{(Leaf, 0): ``grad [..]``} for the leaves shown that these events never accumulated into:
        their .grad is now what it was at every step. The others show ``.grad =`` once they did."""
        accumulated = {e.function for e in self.events if e.kind == "accumulated"}
        lines = {}
        for fn in self.view.functions:
            facts = self.view.facts((fn, 0)) if self.view.is_leaf(fn) else None
            if facts is not None and facts.exists and facts.requires_grad and fn not in accumulated:
                lines[(fn, 0)] = grad_line(facts)
        return lines

    def _grads_before_accumulating(self) -> dict:
        """{(Leaf, 0): its grad line} for the leaves these events accumulated into, shown until they do:
        ``grad [0, 0]`` when .grad is now exactly what this pass added (it started empty, or zeros), else
        a line that says the value it had is not recorded (the events hold what was added, not what
        was there: an earlier backward's gradient, or a hook changed what was added)."""
        lines = {}
        for event in self.events:
            fn = event.function
            facts = self.view.facts((fn, 0)) if event.kind == "accumulated" else None
            if facts is None or not (facts.exists and facts.requires_grad) or fn not in self.grads_after:
                continue
            started_empty = same(event.details["grad_output"][0], self.grads_after[fn])
            lines[(fn, 0)] = grad_line(facts._replace(grad=None)) if started_empty else NOT_RECORDED
        return lines

    def name(self, fn: Any) -> str:
        """fn's name in the log, in the recording's style (``MulConstant#1`` or ``MulBackward0#1``)."""
        return self.story.name(fn)

    def _replay(self) -> Iterator[tuple[str, State]]:
        """Each event's log line and the (live) state of the picture just after it (story.py)."""
        return self.story.replay()

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

    def _frame_dot(self, step: int, state: State) -> str:
        overlay = Overlay(caption=self.lines[step])
        if self.events[step].kind == "dependencies":  # one count per Function: a caption as wide as a wall
            overlay.caption = f"{self.events[step].step:3d} dependencies: " + ", ".join(
                self.story.counts_text(state, READY_SHOWN)
            )
        overlay.ready_title = f"ready {'stack' if self.order == 'stack' else 'queue'} (next first)"
        overlay.ready_lines = self.story.ready_names(state)
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
        if state.failed is not None:
            overlay.fill[state.failed] = COLORS["failed"]
        before = {slot: line for slot, line in self._grads_before.items() if slot not in state.grads_after}
        for labels in (self._still_grads, before, state.labels, state.grads_after):
            for slot, label in labels.items():
                overlay.variable_lines.setdefault(slot, []).append(label)
        overlay.edge = state.edge
        return build_dot(self.view, self._frame_options, overlay)

    def _check_size(self) -> None:
        check_max_nodes("frames", self.max_nodes)  # recording.max_nodes may have been set by hand
        refused = too_large(self._nodes, self.max_nodes)
        if not refused:
            return
        nodes = self._nodes
        if nodes <= MAX_NODES:
            advice = f"Set recording.max_nodes = {nodes} (or None) to make them anyway"
        else:  # thousands of frames, each too large to draw (draw() refuses past MAX_NODES)
            advice = (
                f"Each would be a picture of {nodes:,} nodes, too large to read: trace a smaller graph "
                "of the same shape to watch it"
            )
        raise GraphTooLarge(
            f"frames: {refused}; a trace has one frame per engine event ({len(self.events):,} here), "
            f"each a picture of the whole graph. {advice}; the log, print(recording), needs no frames"
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

        Refused (GraphTooLarge) for a graph whose picture has more than max_nodes nodes (60 by default;
        None: no limit) or a trace of more than 250 frames: a frame of it would be too small to read.
        """
        check_gif_size(self._nodes, len(self.events), max_nodes)
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
    ``"modern"``. max_nodes: frames of a graph whose picture has more nodes (boxes, Variables; 200
    by default; None: no limit) are refused; the log is always there. If backward raises, the error
    goes on with the Recording of the steps up to it as ``error.recording``.
    """
    if not isinstance(loss, Variable):
        raise TypeError(f"trace: loss must be one Variable to run backward from, got {type(loss).__name__}")
    # The settings are checked before backward runs: a retry after an error would add a second gradient.
    options = DotOptions(style=style, show_shapes=show_shapes, legend=legend, where="trace")
    check_max_nodes("trace", max_nodes)
    engine = ExecutionEngine(order)
    view = GraphView(loss, params)
    checked_seed("trace", loss, gradient)  # backward's refusals, named for trace, before backward runs
    log = EventLog()

    def recording() -> Recording:
        return Recording(view, log.events, order, options, max_nodes, accumulated_grads(log.events))

    try:
        with hooks_reported_to(log):
            loss.backward(gradient, engine=engine, recorder=log)
    except Exception as error:
        if log.events:  # the steps up to the failure: what a student wants to look at now
            _attach(error, recording)
        raise
    return recording()


def _attach(error: Exception, recording: Callable[[], Recording]) -> None:
    """Hang the Recording of a failed backward on its error, with a note that says how to look at it."""
    try:
        error.recording = recording()
        note = (
            f"viz.trace recorded the {len(error.recording.events)} engine events up to the failure: "
            "catch the error (except Exception as error:) and print(error.recording), or "
            "error.recording.stepper() to step through them"
        )
    except Exception as replay_error:  # noqa: BLE001 - never hide the error backward raised
        note = f"(viz.trace could not replay the steps up to the failure: {replay_error!r})"
    if hasattr(error, "add_note"):  # Python 3.11+
        error.add_note(note)
