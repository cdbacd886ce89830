"""A Recording's frames written out: one file per frame, or one animated GIF."""

from __future__ import annotations

import io
import os
from pathlib import Path

from .render import Picture, RendererUnavailable, available_renderers, render, saved_format


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
    try:
        images = [Image.open(io.BytesIO(render(f.source, "png"))).convert("RGB") for f in frames]
    except RendererUnavailable as error:
        instead = (
            "save the frames as SVG with save_frames(directory, 'svg') instead"
            if available_renderers("svg")
            else "save their DOT text with save_frames(directory, 'dot')"
        )
        raise RendererUnavailable(f"save_gif needs PNG frames: {error}; {instead}") from None
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
    canvas[0].save(path, save_all=True, append_images=canvas[1:], duration=durations, loop=0, optimize=True)
    return str(path)
