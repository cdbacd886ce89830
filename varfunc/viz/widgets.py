"""JupyterLab controls: a Play button and a slider that step through a Recording's frames.

ipywidgets is imported only when a stepper is made, so ``import varfunc.viz`` needs only NumPy.
"""

from __future__ import annotations

import html
from typing import Any


def stepper(frames: list, interval: int = 900) -> Any:
    """A VBox: [Play, IntSlider] over the log line (``<pre>``) and the frame's picture.

    The picture is inline SVG when a renderer is installed, else the frame's DOT text with the line
    that says how to get pictures. ``.children[0].children`` are the Play and the IntSlider.
    """
    try:
        import ipywidgets as widgets  # optional
    except ImportError as error:
        raise ImportError("stepper() needs ipywidgets: pip install ipywidgets (the `lab` extra)") from error
    if not frames:
        return widgets.HTML("<pre>(no engine events recorded)</pre>")
    last = len(frames) - 1
    play = widgets.Play(value=0, min=0, max=last, step=1, interval=interval, description="play")
    slider = widgets.IntSlider(value=0, min=0, max=last, step=1, description="step", continuous_update=True)
    widgets.link((play, "value"), (slider, "value"))  # a kernel-side link: the picture follows either
    caption = widgets.HTML()
    picture = widgets.HTML()

    def show(change: Any = None) -> None:
        frame = frames[slider.value]
        caption.value = f"<pre>{html.escape(frame.line)}</pre>"
        picture.value = frame.html()

    slider.observe(show, names="value")
    show()
    box = widgets.VBox([widgets.HBox([play, slider]), caption, picture])
    box.play, box.slider, box.caption, box.picture = play, slider, caption, picture
    return box
