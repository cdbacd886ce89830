"""varfunc.viz: see the graph and watch the engine.

``draw(loss)`` draws the graph (``style="v0.1"`` or ``"modern"``), ``trace(loss)`` runs backward
while recording the engine and returns a Recording (text log, one frame per event, ``.stepper()``,
GIF/SVG/PNG export), ``compare_orders(...)`` replays one graph under four orderings. Reads the graph,
never changes it; needs only NumPy to import (Graphviz, ipywidgets and Pillow are used when present).
Pictures of more than ``MAX_NODES`` nodes (what they draw: boxes, Variables, saved tensors) are not
drawn, nor frames made past ``MAX_FRAME_NODES``, nor GIFs past ``export.MAX_GIF_NODES``, unless
``max_nodes=`` says otherwise (``GraphTooLarge``).
"""

from .dot import COLORS, DotOptions, build_dot
from .drawing import draw
from .export import Frame
from .graph import MAX_NODES, GraphView
from .orders import ORDERINGS, compare_orders, naive_recursive_backward, replay_order
from .render import GraphTooLarge, Picture, RendererUnavailable, available_renderers, render
from .replay import MAX_FRAME_NODES, Recording, trace

__all__ = [
    "COLORS",
    "MAX_FRAME_NODES",
    "MAX_NODES",
    "ORDERINGS",
    "DotOptions",
    "Frame",
    "GraphTooLarge",
    "GraphView",
    "Picture",
    "Recording",
    "RendererUnavailable",
    "available_renderers",
    "build_dot",
    "compare_orders",
    "draw",
    "naive_recursive_backward",
    "render",
    "replay_order",
    "trace",
]
