"""A Recording's GIF stays small: short captions, pages of at most MAX_GIF_SIDE pixels, palette pages
only, one palette that keeps the red edge, and a refusal for graphs too big to read in a GIF."""

import gc
import re

import numpy as np
import pytest

import varfunc as vf
from varfunc.viz import GraphTooLarge, available_renderers, export, trace
from varfunc.viz.dot import node_count


def chain(nodes: int):
    """A chain of MulConstants from one leaf, summed: nodes Functions and Leaf nodes in all."""
    y = vf.Variable(np.ones(2))
    for _ in range(nodes - 2):
        y = y * 2.0
    return y.sum()


def small():
    x = vf.Variable(np.array([1.0, 2.0]))
    return (x * 2 + x).sum()  # Leaf#0, MulConstant#1, Add#2, Sum#3: 17 events


def caption(source: str) -> str:
    return re.search(r'^\tgraph \[fontname=monospace fontsize=11 label="(.*)" labelloc=t\]$', source, re.M)[1]


def needs_png():
    if not available_renderers("png"):
        pytest.skip("no PNG renderer (dot or pygraphviz)")
    return pytest.importorskip("PIL.Image")


def test_the_first_frame_lists_a_few_dependency_counts():
    """Before: one entry per Function on one line; frame 0 of a 50-node graph was 8,933 pixels wide."""
    recording = trace(chain(20))
    shown = caption(recording.frame_source(0))
    assert shown == (
        "0 dependencies: Sum#19 [0], MulConstant#18 [1], MulConstant#17 [1], MulConstant#16 [1], "
        "MulConstant#15 [1], MulConstant#14 [1], MulConstant#13 [1], MulConstant#12 [1], (+12 more)"
    )
    assert recording.lines[0].count(" [") == 20  # the log still has them all
    assert recording.frames[0].line == recording.lines[0]


def test_a_small_graphs_first_caption_is_its_log_line():
    recording = trace(small())
    assert caption(recording.frame_source(0)) == recording.lines[0].strip()


def refuse_to_render(source, format="svg", renderer=None):
    raise AssertionError("rendered a frame of a GIF that should have been refused")


def test_a_gif_of_a_large_graph_is_refused_before_any_frame_is_drawn(monkeypatch, tmp_path):
    """Before: a 100-node graph's GIF was started, and its first page was a 268-megapixel PNG."""
    # chain(31): 31 Functions and Leaf nodes, each a box with its Variable: 62 nodes to draw
    pytest.importorskip("PIL")
    monkeypatch.setattr(export, "render", refuse_to_render)
    with pytest.raises(GraphTooLarge) as refused:
        trace(chain(31)).save_gif(str(tmp_path / "big.gif"))
    message = str(refused.value)
    assert message.startswith(
        "save_gif: a picture of this graph has 62 nodes (Function and Leaf boxes, Variables, saved "
        "tensors), more than max_nodes=60"
    )
    assert "recording.stepper()" in message and "save_frames(directory, 'svg')" in message
    assert "save_gif(..., max_nodes=None)" in message
    assert not (tmp_path / "big.gif").exists()


def test_a_gif_of_too_many_frames_is_refused(monkeypatch, tmp_path):
    """Six nodes in modern style, but a Function of 130 outputs: 130 sends, 130 buffer events, more."""
    from test_viz_scaling import split_loss

    pytest.importorskip("PIL")
    monkeypatch.setattr(export, "render", refuse_to_render)
    recording = trace(split_loss(130)[0], style="modern")  # no ellipse for each of Split's outputs
    assert len(recording.view.functions) == 4 and node_count(recording.view, recording.options) == 6
    with pytest.raises(GraphTooLarge, match=r"save_gif: this trace has 273 frames \(one per engine event\)"):
        recording.save_gif(str(tmp_path / "wide.gif"))


def test_max_nodes_none_makes_the_gif_anyway(monkeypatch, tmp_path):
    pytest.importorskip("PIL")
    monkeypatch.setattr(export, "render", refuse_to_render)
    with pytest.raises(AssertionError, match="rendered a frame"):
        trace(chain(31)).save_gif(str(tmp_path / "big.gif"), max_nodes=None)


def test_gif_pages_are_at_most_max_gif_side_pixels(monkeypatch, tmp_path):
    """Before: every page was as wide as the widest frame and as high as the highest, in full."""
    Image = needs_png()
    monkeypatch.setattr(export, "MAX_GIF_SIDE", 192, raising=False)  # 2 inches: smaller than any frame
    path = trace(small()).save_gif(str(tmp_path / "small.gif"))
    with Image.open(path) as gif:
        assert gif.n_frames == 17 and max(gif.size) <= 192


def test_no_rgb_copy_of_a_frame_is_kept_while_the_gif_is_written(monkeypatch, tmp_path):
    """Before: every frame was kept as an RGB image, and every page in a list, until the GIF was saved."""
    Image = needs_png()
    held = []
    save = Image.Image.save

    def counting_save(self, *args, **kwargs):
        alive = [o for o in gc.get_objects() if issubclass(type(o), Image.Image) and o.size == self.size]
        held.append((sum(o.mode == "RGB" for o in alive), sum(o.mode == "P" for o in alive)))
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "save", counting_save)
    trace(small()).save_gif(str(tmp_path / "small.gif"))
    assert held == [(0, 1)]  # the first page alone; the others are made one by one as Pillow asks


def test_the_red_edge_and_the_white_page_keep_their_colours(tmp_path):
    """Before: a palette per page, of the 64 most used colours, had no room for the thin red edge."""
    Image = needs_png()
    recording = trace(small())
    path = recording.save_gif(str(tmp_path / "small.gif"))
    sent = next(i for i, line in enumerate(recording.lines) if " sends " in line)
    with Image.open(path) as gif:
        gif.seek(sent)
        colours = {rgb for _, rgb in gif.convert("RGB").getcolors(1 << 20)}
    assert (255, 0, 0) in colours and (255, 255, 255) in colours
