"""A Recording's frames (``Frame``: the graph at one engine event) written out: one file per frame, or
one animated GIF.

A GIF holds every page in full, each as large as the largest frame, so ``save_gif`` keeps it small:
Graphviz draws each frame at most ``MAX_GIF_SIDE`` pixels wide and high (a larger drawing is scaled
down to fit), the PNGs are kept compressed until the page size is known, and each page is turned
into palette mode (one byte a pixel) as soon as it is made. All pages share one palette, made once
from a few of them: a palette per page cost more than drawing the frame, and stops the GIF from
storing only what changed since the previous page. Graphs of more than ``MAX_GIF_NODES`` nodes, or
traces of more than ``MAX_GIF_FRAMES`` events, are refused: their frames would be too small to read.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from pathlib import Path
from typing import Any

from .graph import check_max_nodes, too_large
from .render import GraphTooLarge, Picture, RendererUnavailable, available_renderers, render, saved_format

MAX_GIF_SIDE = 1536  # pixels: the most a GIF page is wide or high (16 inches at Graphviz's 96 dpi)
MAX_GIF_NODES = 60  # nodes drawn: a chain of 29 ops (60 nodes) is drawn at a third of its size to fit
MAX_GIF_FRAMES = 250  # about 4 minutes at 900 ms a frame; many-output Functions make many frames
RED = (255, 0, 0)  # the edge the last gradient was sent along (dot.py draws it color=red)


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


def save_frames(frames: list[Picture], directory: str, format: str = "svg", prefix: str = "frame") -> list:
    """Write one file per frame (``frame_000.svg`` ...; format ``svg``, ``png`` or ``dot``)."""
    format = saved_format(f"{prefix}.{format}", None, "save_frames")  # refused before the folder is made
    os.makedirs(directory, exist_ok=True)
    paths = []
    for step, frame in enumerate(frames):
        path = os.path.join(directory, f"{prefix}_{step:03d}.{format}")
        frame.save(path, format)
        paths.append(path)
    return paths


def check_gif_size(nodes: int, frames: int, max_nodes: int | None) -> None:
    """GraphTooLarge, before anything is drawn, for a GIF too big to be of use (max_nodes None: never)."""
    check_max_nodes("save_gif", max_nodes)
    if max_nodes is None:
        return
    if nodes > max_nodes:
        why = f"{too_large(nodes, max_nodes)}: its frames would be too small to read"
    elif frames > MAX_GIF_FRAMES:
        why = f"this trace has {frames:,} frames (one per engine event), more than {MAX_GIF_FRAMES}"
        why += ": too long to watch"
    else:
        return
    raise GraphTooLarge(
        f"save_gif: {why}, and slow to make. Step through the frames with recording.stepper(), write "
        "them with recording.save_frames(directory, 'svg'), or pass save_gif(..., max_nodes=None) to "
        "make the GIF anyway"
    )


def save_gif(
    frames: list[Picture],
    path: str,
    duration: int = 900,
    last_duration: int = 2500,
    scale: float = 1.0,
    colors: int = 64,
) -> str:
    """An animated GIF of the frames (needs Pillow and a PNG renderer: ``dot`` or pygraphviz)."""
    try:
        from PIL import Image  # Pillow comes with matplotlib
    except ImportError as error:
        raise ImportError("save_gif needs Pillow: pip install pillow (matplotlib brings it)") from error
    Path(path).parent.mkdir(parents=True, exist_ok=True)  # before rendering every frame, as save_frames
    pngs = [_png(frame.source) for frame in frames]  # compressed: a few kB each
    sizes = [Image.open(io.BytesIO(png)).size for png in pngs]  # reads the header only
    size = (max(w for w, _ in sizes), max(h for _, h in sizes))
    palette = _palette(Image, pngs, colors)
    pages = (_page(Image, png, size, scale, palette) for png in pngs)  # one at a time: Pillow copies each
    durations = [duration] * (len(pngs) - 1) + [last_duration]
    next(pages).save(path, save_all=True, append_images=pages, duration=durations, loop=0, optimize=True)
    return str(path)


def _png(source: str) -> bytes:
    """One frame as PNG, drawn at most MAX_GIF_SIDE pixels wide and high."""
    inches = MAX_GIF_SIDE // 96
    head, _, body = source.partition("{\n")  # Graphviz scales a larger drawing down to fit, never up
    try:
        return render(f'{head}{{\n\tgraph [size="{inches},{inches}"]\n{body}', "png")
    except RendererUnavailable as error:
        instead = (
            "save the frames as SVG with save_frames(directory, 'svg') instead"
            if available_renderers("svg")
            else "save their DOT text with save_frames(directory, 'dot')"
        )
        raise RendererUnavailable(f"save_gif needs PNG frames: {error}; {instead}") from None


def _palette(Image: Any, pngs: list, colors: int) -> Any:
    """A palette image: red, the colour of the edge a gradient was just sent along (a thin line, so never
    among the most used), and the colours that cover the most pixels in 8 frames spread over the replay."""
    used: Counter = Counter()
    for i in sorted({round(i * (len(pngs) - 1) / 7) for i in range(8)}):  # the first, the last, between
        with Image.open(io.BytesIO(pngs[i])) as frame:
            used.update({rgb: n for n, rgb in frame.convert("RGB").getcolors(frame.width * frame.height)})
    chosen = [RED]
    for rgb, _ in used.most_common():
        if len(chosen) == colors:
            break
        if all(_far(rgb, other) for other in chosen):  # Pillow matches colours only to within 8 levels
            chosen.append(rgb)
    palette = Image.new("P", (1, 1))
    palette.putpalette([value for rgb in chosen for value in rgb])
    return palette


def _far(a: tuple, b: tuple) -> bool:
    """Whether two colours differ by more than 8 levels in some channel."""
    return max(abs(x - y) for x, y in zip(a, b)) > 8


def _page(Image: Any, png: bytes, size: tuple, scale: float, palette: Any) -> Any:
    """A frame centred at the top of a white page of the given size, in the palette's colours."""
    page = Image.new("RGB", size, "white")
    with Image.open(io.BytesIO(png)) as frame:
        page.paste(frame.convert("RGB"), ((size[0] - frame.width) // 2, 0))
    if scale != 1.0:
        page = page.resize((int(size[0] * scale), int(size[1] * scale)), Image.LANCZOS)
    return page.quantize(palette=palette, dither=Image.NONE)  # each pixel to its nearest colour
