"""``draw(var_or_vars, ...)``: the graph behind Variables as a picture, its DOT text and a summary."""

from __future__ import annotations

from typing import Any

from .dot import DotOptions, build_dot, node_count
from .graph import MAX_NODES, GraphView, check_max_nodes, too_large
from .render import Picture
from .summary import summary


def draw(
    var_or_vars: Any,
    style: str = "v0.1",
    show_shapes: bool = False,
    show_values: bool = False,
    show_grads: bool = False,
    show_saved: bool = False,
    params: dict | None = None,
    legend: bool = False,
    max_nodes: int | None = MAX_NODES,
) -> Picture:
    """Draw the graph that produced one Variable or a list of them.

    style: ``"v0.1"`` (Variables, creator Functions, Leaf nodes, previous_functions edges) or
    ``"modern"`` (grad_fn names such as ``MulBackward0``, AccumulateGrad, next_functions).
    show_shapes / show_values / show_grads: shapes, data and (leaf) gradients inside the nodes.
    show_saved: the tensors each Function saved for backward (orange). params: ``{name: Variable}``
    names leaves, outputs or intermediates. legend: add a legend of the colours. max_nodes: a picture
    of more nodes than this (boxes, Variables and saved tensors; 1,000 by default; None: no limit) is
    not rendered: the Picture says so and shows the summary instead (``.source`` is still the DOT).

    Returns a Picture: it displays as SVG in JupyterLab (or as DOT text when nothing can render),
    ``.source`` is the DOT text, ``str()`` / ``.summary()`` describe the graph in words.
    """
    check_max_nodes("draw", max_nodes)
    view = GraphView(var_or_vars, params)
    options = DotOptions(style, show_shapes, show_values, show_grads, show_saved, legend)
    nodes = node_count(view, options)
    refused = too_large(nodes, max_nodes)
    if refused:
        refused = (
            f"draw: {refused}: too big a picture to read, and slow to render. "
            f"Pass draw(..., max_nodes={nodes}) or max_nodes=None to draw it anyway"
        )
    return Picture(build_dot(view, options), summary(view, style), refused)
