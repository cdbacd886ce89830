"""The README's pictures, regenerated from code: ``python -m varfunc.viz.figures [directory]``.

Writes, into ``figures/`` by default:

- ``graph_v01.svg`` / ``graph_modern.svg`` (+ ``.dot``): ``(x * w + x).sum()`` in both styles;
- ``engine_replay.gif`` (+ ``engine_replay.txt``, the log): v0.1.3's engine running backward on it;
- ``orders.txt``: a larger graph under four orderings, and micrograd PR #64's double count.

Needs a renderer (the ``dot`` program or pygraphviz); without one it writes the DOT and text files
and exits with status 1, saying what is missing. pygraphviz is preferred when installed: its wheel
bundles one Graphviz version, so the SVG and GIF come out the same on every machine (a system
``dot`` lays out differently from version to version). ``VARFUNC_VIZ_RENDERER`` still decides.
"""

from __future__ import annotations

import contextlib
import os
import sys

import numpy as np

from ..variable import Variable
from .drawing import draw
from .orders import compare_orders, naive_recursive_backward
from .render import RendererUnavailable, available_renderers, is_available
from .replay import trace


def example() -> tuple:
    """The README's graph: ``loss = (x * w + x).sum()`` (x reused); returns (loss, params)."""
    x = Variable(np.array([1.0, 2.0]))
    w = Variable(np.array([0.5, -1.0]))
    loss = (x * w + x).sum()
    return loss, {"x": x, "w": w, "loss": loss}


def orders_example() -> tuple:
    """A graph whose orderings differ: ``loss = (x*w*2 + (x*w + 1)*(x + 3)).sum()``."""
    x = Variable(np.array([1.0, 2.0]))
    w = Variable(np.array([3.0, 4.0]))
    h = x * w
    loss = (h * 2 + (h + 1) * (x + 3)).sum()
    return loss, {"x": x, "w": w, "loss": loss}


def reused_intermediate() -> tuple:
    """micrograd PR #64's case: ``b = a + a; c = b + b``."""
    a = Variable(1.0)
    b = a + a
    c = b + b
    return c, {"a": a, "b": b, "c": c}


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


@contextlib.contextmanager
def _reproducible_renderer():
    """Render with pygraphviz's bundled Graphviz when present, unless VARFUNC_VIZ_RENDERER is set."""
    choose = "VARFUNC_VIZ_RENDERER" not in os.environ and is_available("pygraphviz")
    if choose:
        os.environ["VARFUNC_VIZ_RENDERER"] = "pygraphviz"
    try:
        yield
    finally:
        if choose:
            del os.environ["VARFUNC_VIZ_RENDERER"]


def main(directory: str = "figures") -> int:
    """Write the figures into directory; 0 when every file was written, 1 when a renderer was missing."""
    with _reproducible_renderer():
        return _write_figures(directory)


def _write_figures(directory: str) -> int:
    os.makedirs(directory, exist_ok=True)
    written, missing = [], []
    loss, params = example()
    for style in ("v0.1", "modern"):
        stem = os.path.join(directory, "graph_" + style.replace(".", ""))
        picture = draw(loss, style=style, show_shapes=True, show_saved=True, params=params, legend=True)
        _write(stem + ".dot", picture.source)
        written.append(stem + ".dot")
        try:
            written.append(picture.save(stem + ".svg"))
        except RendererUnavailable as error:
            missing.append(f"{stem}.svg: {error}")
    recording = trace(loss, params=params)
    _write(os.path.join(directory, "engine_replay.txt"), recording.text + "\n")
    written.append(os.path.join(directory, "engine_replay.txt"))
    try:
        written.append(
            recording.save_gif(os.path.join(directory, "engine_replay.gif"), duration=1100, scale=0.8)
        )
    except (RendererUnavailable, ImportError) as error:
        missing.append(f"engine_replay.gif: {error}")
    c, c_params = reused_intermediate()
    naive = naive_recursive_backward(c, params=c_params)
    orders_text = (
        "loss = (x*w*2 + (x*w + 1)*(x + 3)).sum()\n"
        f"{compare_orders(orders_example)}\n\n"
        "b = a + a; c = b + b\n"
        f"{compare_orders(reused_intermediate)}\n"
        f"naive recursion (micrograd PR #64) visits: {', '.join(naive.visits)}\n"
        f"naive recursion gives grad a = {naive.leaf_grads['a'].item():g} (right: 4)\n"
    )
    _write(os.path.join(directory, "orders.txt"), orders_text)
    written.append(os.path.join(directory, "orders.txt"))
    print(f"renderers: {', '.join(available_renderers('png')) or 'none for PNG'}")
    for path in written:
        print(f"wrote {path}")
    for line in missing:
        print(f"MISSING {line}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
