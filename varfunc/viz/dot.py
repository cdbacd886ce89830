"""DOT text for a graph, in two styles, with torchviz's colours; written by hand, so no package is needed.

``style="v0.1"``: what a v0.1.x user had: Variables (ellipses) made by their ``creator`` Function
(boxes), a ``Leaf`` Function at every user-created Variable, one edge per entry of
``previous_functions`` (dashed where ``needs_input_grad`` is False). ``style="modern"``: what
``torchviz`` draws today: ``grad_fn`` nodes named as PyTorch names them (``MulBackward0``), an
``AccumulateGrad`` below every leaf that requires grad, one edge per entry of ``next_functions``.

Ids: Function k is ``f{k}``, its output j is ``v{k}`` (``v{k}_{j}`` for multi-output Functions),
saved tensor i of Function k is ``s{k}_{i}``; k is the post-order number from ``GraphView``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backend import check_flag
from .fmt import array_text
from .graph import GraphView

STYLES = ("v0.1", "modern")

# torchviz's vocabulary, plus the colours of the engine replay.
COLORS = {
    "function": "lightgrey",
    "leaf": "lightblue",  # a leaf that requires grad
    "constant": "white",  # a leaf that does not require grad
    "variable": "white",  # an intermediate Variable (v0.1 style)
    "saved": "orange",
    "output": "darkolivegreen1",
    "current": "gold",
    "ready": "palegreen",
    "waiting": "khaki",
    "done": "white",  # drawn faded (FADED): out of play, unlike the light grey of one not reached yet
    "failed": "tomato",
}
FADED = {"color": "grey70", "fontcolor": "grey45"}  # the outline and text of a finished Function

LEGEND = (
    ("function", "Function"),
    ("leaf", "leaf, requires grad"),
    ("constant", "leaf, no grad"),
    ("saved", "saved tensor"),
    ("output", "output"),
)
REPLAY_LEGEND = (
    ("current", "current step"),
    ("ready", "ready (pushed)"),
    ("waiting", "waiting: buffer not full"),
    ("done", "done"),
    ("output", "output"),
)
FAILED_LEGEND = ("failed", "raised: the pass stopped")

HEADER = (
    "\tgraph [nodesep=0.25 rankdir=TB ranksep=0.3]\n"
    "\tnode [fontname=monospace fontsize=10 height=0.3 shape=box style=filled]\n"
    "\tedge [arrowsize=0.7 fontname=monospace fontsize=9]\n"
)


def quote(text: str) -> str:
    """A DOT string literal; newlines become centred line breaks."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass
class DotOptions:
    """How a graph is drawn: its names (``style``) and what each node shows."""

    style: str = "v0.1"
    show_shapes: bool = False
    show_values: bool = False
    show_grads: bool = False
    show_saved: bool = False
    legend: bool = False
    where: str = field(default="draw", repr=False, compare=False)  # the call to name in an error

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"{self.where}: style must be one of {STYLES}, got {self.style!r}")
        for name in ("show_shapes", "show_values", "show_grads", "show_saved", "legend"):
            check_flag(self.where, name, getattr(self, name))  # "no" would count as True


@dataclass
class Overlay:
    """What an engine-replay frame adds to the picture (colours, extra label lines, a caption)."""

    fill: dict = field(default_factory=dict)  # Function -> colour
    function_lines: dict = field(default_factory=dict)  # Function -> [extra label lines]
    variable_lines: dict = field(default_factory=dict)  # (Function, output_nr) -> [extra lines]
    edge: tuple | None = None  # (source Function, target Function, input_nr) drawn in red
    caption: str = ""
    ready_title: str = ""
    ready_lines: list = field(default_factory=list)


def variable_id(view: GraphView, fn: Any, output_nr: int) -> str:
    """The DOT id of one output Variable: ``v3``, or ``v3_1`` for output 1 of a multi-output Function."""
    k = view.index[fn]
    return f"v{k}" if len(fn.output_ids or ()) <= 1 else f"v{k}_{output_nr}"


def grad_line(facts: Any) -> str:
    """``grad [1, 1]``: a leaf's gradient, zeros before its first backward (as ``.grad`` would give)."""
    return f"grad {array_text(np.zeros(facts.shape) if facts.grad is None else facts.grad)}"


def used_outputs(view: GraphView, fn: Any) -> list:
    """The output indices of fn that a v0.1 picture draws: those read by a consumer or a root."""
    return sorted({e.output_nr for e in view.consumers(fn)} | set(view.root_outputs(fn)))


def _node(node_id: str, label: str, fill: str, **attrs: str) -> str:
    extra = "".join(f" {key}={value}" for key, value in attrs.items())
    return f"\t{node_id} [label={quote(label)} fillcolor={fill}{extra}]\n"


class _Builder:
    def __init__(self, view: GraphView, options: DotOptions, overlay: Overlay | None) -> None:
        self.view = view
        self.o = options
        self.overlay = overlay or Overlay()
        self.nodes: list[str] = []
        self.edges: list[str] = []
        self._output_lines: dict | None = None  # Function -> [(output_nr, lines)], made on first use

    # --- labels ---------------------------------------------------------------------------------

    def function_label(self, fn: Any) -> str:
        lines = [self.view.label_name(fn, self.o.style)]
        if self.o.style == "v0.1" and not self.view.is_leaf(fn) and fn.extra_repr():
            lines.append(f"({_settings_text(fn.extra_repr())})")
        merged = fn.merged_nodes() if self.o.style == "modern" else ()
        if merged:  # one node here, several in PyTorch's graph: say which, so the pictures compare
            lines.append(f"(torch: also {', '.join(merged)})")
        lines += self.overlay.function_lines.get(fn, [])
        if self.o.style == "modern" and not self.view.is_leaf(fn):
            lines += self.output_lines(fn)
        return "\n".join(lines)

    def output_lines(self, fn: Any) -> list:
        """A replay's lines for fn's outputs (their buffers), which modern style draws no ellipse for
        (but for a root): on fn's own box, as torchviz shows only the grad_fn nodes."""
        if self._output_lines is None:  # grouped once: a scan of all lines per Function is quadratic
            self._output_lines = {}
            for (owner, j), extra in self.overlay.variable_lines.items():
                if not self.view.is_root((owner, j)):
                    self._output_lines.setdefault(owner, []).append((j, extra))
        several = len(fn.output_ids or ()) > 1
        return [
            f"output {j}: {line}" if several else line
            for j, extra in self._output_lines.get(fn, ())
            for line in extra
        ]

    def variable_label(self, slot: tuple) -> str:
        view = self.view
        lines = [view.variable_label(slot)]
        facts = view.facts(slot)
        if self.o.show_shapes and facts.shape is not None:
            lines.append(str(facts.shape))
        if facts.exists and self.o.show_values:
            lines.append("overwritten in place" if facts.overwritten else f"data {array_text(facts.data)}")
        if facts.exists and self.o.show_grads and view.is_leaf(slot[0]) and facts.requires_grad:
            lines.append(grad_line(facts))
        lines += self.overlay.variable_lines.get(slot, [])
        return "\n".join(lines)

    def variable_fill(self, slot: tuple, is_root: bool) -> tuple[str, dict]:
        fn = slot[0]
        if is_root:
            return COLORS["output"], {}
        if self.view.is_leaf(fn):
            if self.view.facts(slot).requires_grad:
                return COLORS["leaf"], {}
            return COLORS["constant"], {"style": '"filled,dashed"'}
        return COLORS["variable"], {}

    def function_node(self, fn: Any) -> str:
        """fn's box: its label, and its fill (a replay's colour, faded once done)."""
        fill = self.overlay.fill.get(fn, COLORS["function"])
        attrs = FADED if fill == COLORS["done"] else {}
        return _node(f"f{self.view.index[fn]}", self.function_label(fn), fill, **attrs)

    def edge(self, source: str, target: str, needed: bool = True, highlight: bool = False) -> None:
        attrs = []
        if not needed:
            attrs.append("color=grey style=dashed")
        if highlight:
            attrs.append("color=red penwidth=2")
        self.edges.append(f"\t{source} -> {target}" + (f" [{' '.join(attrs)}]" if attrs else "") + "\n")

    def is_highlighted(self, edge: Any) -> bool:
        target = self.overlay.edge
        return target is not None and target == (edge.source, edge.target, edge.input_nr)

    # --- the two styles ---------------------------------------------------------------------------

    def saved(self, fn: Any) -> None:
        if not self.o.show_saved or self.view.is_leaf(fn):
            return
        k = self.view.index[fn]
        tensors = self.view.saved_tensors(fn)
        if tensors is None:  # changed in place since forward: say so, never fail a picture
            self.nodes.append(_node(f"s{k}", "saved tensors\nchanged in place", COLORS["saved"]))
            self.edges.append(f"\ts{k} -> f{k} [arrowhead=none style=dotted]\n")
            return
        for i, tensor in enumerate(tensors):
            lines = [f"saved {i}", "None" if tensor is None else str(tuple(tensor.shape))]
            if tensor is not None and self.o.show_values:
                lines.append(array_text(tensor))
            self.nodes.append(_node(f"s{k}_{i}", "\n".join(lines), COLORS["saved"]))
            self.edges.append(f"\ts{k}_{i} -> f{k} [arrowhead=none style=dotted]\n")

    def build_v01(self) -> None:
        view = self.view
        for fn in view.functions:
            k = view.index[fn]
            self.nodes.append(self.function_node(fn))
            used = used_outputs(view, fn)
            for j in used:
                slot = (fn, j)
                fill, attrs = self.variable_fill(slot, view.is_root(slot))
                self.nodes.append(
                    _node(variable_id(view, fn, j), self.variable_label(slot), fill, shape="ellipse", **attrs)
                )
            self.saved(fn)
            for e in view.inputs[fn]:
                self.edge(variable_id(view, e.source, e.output_nr), f"f{k}", e.needed, self.is_highlighted(e))
            for j in used:
                self.edge(f"f{k}", variable_id(view, fn, j))

    def build_modern(self) -> None:
        view = self.view
        functions = view.modern_functions()
        drawn = set(functions)
        for fn in functions:
            k = view.index[fn]
            if view.is_leaf(fn):
                fill, attrs = self.variable_fill((fn, 0), view.is_root((fn, 0)))
                self.nodes.append(_node(f"v{k}", self.variable_label((fn, 0)), fill, **attrs))
                self.edge(f"v{k}", f"f{k}")
            self.nodes.append(self.function_node(fn))
            self.saved(fn)
            for e in view.inputs[fn]:
                if e.needed:
                    self.edge(f"f{view.index[e.source]}", f"f{k}", True, self.is_highlighted(e))
            if not view.is_leaf(fn):
                self.modern_roots(fn)
        for slot in view.root_slots():  # an output that requires no grad has no grad_fn: drawn alone
            if slot[0] not in drawn:
                vid = variable_id(view, *slot)
                self.nodes.append(_node(vid, self.variable_label(slot), COLORS["output"]))
                if view.is_leaf(slot[0]) and self.is_replay():  # the engine pops its AccumulateGrad
                    self.nodes.append(self.function_node(slot[0]))
                    self.edge(vid, f"f{view.index[slot[0]]}")

    def modern_roots(self, fn: Any) -> None:
        """The root Variables fn made: output ellipses below its box."""
        for j in self.view.root_outputs(fn):
            slot, vid = (fn, j), variable_id(self.view, fn, j)
            self.nodes.append(_node(vid, self.variable_label(slot), COLORS["output"]))
            if self.view.facts(slot).requires_grad:  # indices have no grad_fn in PyTorch
                self.edge(f"f{self.view.index[fn]}", vid)

    def is_replay(self) -> bool:
        """Whether this is a frame of an engine replay (it has a caption or a ready stack)."""
        return bool(self.overlay.caption or self.overlay.ready_title)

    def legend(self) -> str:
        items = list(LEGEND) if self.o.legend else []
        if self.is_replay():
            items += [item for item in REPLAY_LEGEND if item not in items]
            if COLORS["failed"] in self.overlay.fill.values():
                items.append(FAILED_LEGEND)
        if not items:
            return ""
        lines = ["\tsubgraph cluster_legend {\n", "\t\tfontname=monospace fontsize=10 label=legend\n"]
        for key, text in items:
            attrs = {"style": '"filled,dashed"'} if key == "constant" else {}
            if key == "done":
                attrs.update(FADED)
            if self.o.style == "v0.1" and key in ("leaf", "constant", "output"):
                attrs["shape"] = "ellipse"  # the Variables of a v0.1 picture, as drawn there
            lines.append("\t" + _node(f"legend_{key}", text, COLORS[key], **attrs))
        lines.append("\t}\n")
        return "".join(lines)

    def replay_parts(self) -> str:
        overlay = self.overlay
        text = ""
        if overlay.caption:
            caption = quote(overlay.caption.strip())
            text += f"\tgraph [fontname=monospace fontsize=11 label={caption} labelloc=t]\n"
        if overlay.ready_title:
            body = "\n".join([overlay.ready_title] + (overlay.ready_lines or ["(empty)"]))
            text += f"\tready [label={quote(body)} fillcolor=white shape=note]\n"
        return text

    def build(self) -> str:
        if self.o.style == "v0.1":
            self.build_v01()
        else:
            self.build_modern()
        # roots with no graph at all (volatile Variables): draw them alone
        for i in self.view.graphless_roots():
            self.nodes.append(_node(f"r{i}", "volatile Variable", COLORS["output"]))
        return (
            "digraph varfunc {\n"
            + HEADER
            + self.replay_parts()
            + "".join(self.nodes)
            + "".join(self.edges)
            + self.legend()
            + "}\n"
        )


def build_dot(view: GraphView, options: DotOptions | None = None, overlay: Overlay | None = None) -> str:
    """The DOT text of the graph in ``view``: same graph and options, same text, on every run."""
    return _Builder(view, options or DotOptions(), overlay).build()


def node_count(view: GraphView, options: DotOptions, replay: bool = False) -> int:
    """How many nodes build_dot draws for view: boxes, Variables, saved tensors (no legend, no notes).

    What a picture costs to lay out and to read grows with these, so size limits count them. replay:
    a replay's frame (a leaf traced as the root gets its AccumulateGrad box in modern style).
    """
    if options.style == "v0.1":
        functions = view.functions
        count = sum(1 + len(used_outputs(view, fn)) for fn in functions)
    else:
        functions = view.modern_functions()
        count = sum(2 if view.is_leaf(fn) else 1 + len(view.root_outputs(fn)) for fn in functions)
        drawn = set(functions)
        for fn, _ in view.root_slots():  # a root that has no grad_fn, drawn alone
            if fn not in drawn:
                count += 2 if view.is_leaf(fn) and replay else 1
    if options.show_saved:
        count += sum(_saved_nodes(view, fn) for fn in functions)
    return count + len(view.graphless_roots())


def _saved_nodes(view: GraphView, fn: Any) -> int:
    """How many saved-tensor nodes fn gets: one per tensor, or one saying they changed in place."""
    if view.is_leaf(fn):
        return 0
    tensors = view.saved_tensors(fn)
    return 1 if tensors is None else len(tensors)


_NUMPY_SCALAR = re.compile(r"np\.\w+\(([^()]*)\)")  # np.int64(3) since NumPy 2, 3 before


def _settings_text(text: str, limit: int = 50) -> str:
    """An op's settings for its label: NumPy scalars as plain numbers, cut at limit characters as
    torchviz cuts them (a long index array would fill the picture), on one line."""
    text = _NUMPY_SCALAR.sub(r"\1", " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
