"""Engine replay: the exact log of a small backward, frames that follow the engine, stepper, export."""

import numpy as np
import pytest

import varfunc as vf
from varfunc.engine import EventLog, ExecutionEngine
from varfunc.viz import RendererUnavailable, available_renderers, replay_order, trace
from varfunc.viz.graph import GraphView
from varfunc.viz.replay import Recording


def small():
    x = vf.Variable(np.array([1.0, 2.0]))
    return x, (x * 2 + x).sum()  # Leaf#0, MulConstant#1, Add#2, Sum#3


def test_log_exact():
    """Sum sends [1, 1] to Add; Add sends to MulConstant (ready, pushed) and then to x (1 of 2 grads:
    waits); MulConstant runs, its [2, 2] is summed into x's buffer [1, 1] -> [3, 3]; x accumulates."""
    x, loss = small()
    recording = trace(loss, params={"x": x})
    assert recording.lines == [
        "  0 dependencies: Sum#3 [0], Add#2 [1], MulConstant#1 [1], x [2]",
        "  1 pop Sum#3 with grad_output 1; deps [0]; ready: -",
        "  2 Sum#3.backward(1) -> [1, 1]",
        "  3 Sum#3 sends [1, 1] to Add#2",
        "  4 Add#2: stored in buffer slot 0, buffer ([1, 1]), deps [0] -> ready; ready: Add#2",
        "  5 pop Add#2 with grad_output [1, 1]; deps [0]; ready: -",
        "  6 Add#2.backward([1, 1]) -> [1, 1], [1, 1]",
        "  7 Add#2 sends [1, 1] to MulConstant#1",
        "  8 MulConstant#1: stored in buffer slot 0, buffer ([1, 1]), deps [0] -> ready; "
        "ready: MulConstant#1",
        "  9 Add#2 sends [1, 1] to x",
        " 10 x: stored in buffer slot 0, buffer ([1, 1]), deps [1] -> waits; ready: MulConstant#1",
        " 11 pop MulConstant#1 with grad_output [1, 1]; deps [0]; ready: -",
        " 12 MulConstant#1.backward([1, 1]) -> [2, 2]",
        " 13 MulConstant#1 sends [2, 2] to x",
        " 14 x: summed into buffer slot 0, buffer ([3, 3]), deps [0] -> ready; ready: x",
        " 15 pop x with grad_output [3, 3]; deps [0]; ready: -",
        " 16 x: .grad += [3, 3]",
    ]
    assert str(recording) == "\n".join(recording.lines)
    assert np.array_equal(x.grad, [3.0, 3.0])  # trace is a real backward


def test_unnamed_leaves_are_numbered():
    x, loss = small()
    assert trace(loss).lines[-1] == " 16 Leaf#0: .grad += [3, 3]"


def chain():
    """x; a = x*2 (#1); b = a*3 (#2); c = b*4 (#3); d = a + c (#4); e = x + 1 (#5); (d*e).sum()."""
    x = vf.Variable(np.array([1.0, 2.0]))
    a = x * 2
    d = a + (a * 3) * 4
    return x, (d * (x + 1)).sum()


@pytest.mark.parametrize(
    "order, expected",
    [
        (
            "stack",
            [
                "Sum#7",
                "Mul#6",
                "AddConstant#5",
                "Add#4",
                "MulConstant#3",
                "MulConstant#2",
                "MulConstant#1",
                "x",
            ],
        ),
        (
            "fifo",
            [
                "Sum#7",
                "Mul#6",
                "Add#4",
                "AddConstant#5",
                "MulConstant#3",
                "MulConstant#2",
                "MulConstant#1",
                "x",
            ],
        ),
    ],
)
def test_frames_follow_the_engines_real_visit_order(order, expected):
    x, loss = chain()
    recording = trace(loss, order=order, params={"x": x})
    assert recording.visit_order == expected
    # the same graph again, run by the engine alone: the same Functions in the same order
    x2, loss2 = chain()
    log = EventLog()
    loss2.backward(engine=ExecutionEngine(order), recorder=log)
    assert [type(f).__name__ for f in log.visit_order()] == [
        n.split("#")[0] if "#" in n else "Leaf" for n in expected
    ]
    popped = [f for f in recording.frames if f.event.kind == "popped"]
    assert [recording.view.name(f.function) for f in popped] == expected
    for frame in popped:  # the popped Function is the one drawn in gold
        k = recording.view.index[frame.function]
        assert f"\tf{k} [label=" in frame.source
        line = next(s for s in frame.source.splitlines() if s.startswith(f"\tf{k} ["))
        assert line.endswith("fillcolor=gold]")
    x3, loss3 = chain()
    assert replay_order(loss3, order, params={"x": x3}).visits == expected  # the replays agree
    assert np.array_equal(x.grad, [78.0, 130.0])  # d(26x(x+1))/dx = 26(2x+1)


def test_frame_shows_ready_stack_waiting_buffers_and_counts():
    x, loss = small()
    frame = trace(loss, params={"x": x}).frames[10]  # x waits with [1, 1]; MulConstant#1 is ready
    source = frame.source
    assert 'ready [label="ready stack (next first)\\nMulConstant#1" fillcolor=white shape=note]' in source
    assert '\tf1 [label="MulConstant#1\\n(2)\\ndeps [0]" fillcolor=palegreen]\n' in source
    assert '\tf0 [label="Leaf#0\\ndeps [1]" fillcolor=gold]\n' in source
    assert '\tv0 [label="x\\nbuffer [1, 1]" fillcolor=lightblue shape=ellipse]\n' in source
    assert "\tv0 -> f2 [color=red penwidth=2]\n" in source  # the edge the gradient came along
    assert '\tf2 [label="Add#2\\ndeps [0]" fillcolor=white color=grey70 fontcolor=grey45]\n' in source  # done
    assert 'label="10 x: stored in buffer slot 0' in source


def test_a_frame_drawn_alone_is_the_frame_of_the_whole_replay():
    x, loss = small()
    alone = trace(loss, params={"x": x})
    sources = [alone.frame_source(step) for step in (0, 10, -1)]  # each replays up to its event
    x, loss = small()
    whole = trace(loss, params={"x": x})
    assert sources == [whole.frames[step].source for step in (0, 10, -1)]
    assert len(sources) == len(set(sources))
    with pytest.raises(IndexError, match=f"step {len(whole.events)} is out of range"):
        whole.frame_source(len(whole.events))


def test_tracing_keeps_no_picture_per_event():
    """A trace keeps the events and the log, not one copy of every count and gradient per event:
    that made tracing quadratic (4.6 s for a 1,000-op chain) and its memory too."""
    import tracemalloc

    x = vf.Variable(np.array([1.0]))
    y = x
    for _ in range(600):
        y = y * 1.0001
    tracemalloc.start()
    recording = trace(y, params={"x": x})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(recording.lines) == len(recording.events) > 3 * 600
    assert peak < 20e6, f"tracing 600 ops peaked at {peak / 1e6:.0f} MB"


def test_stepper_moves_through_frames(monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.setenv("VARFUNC_VIZ_RENDERER", "none")
    x, loss = small()
    recording = trace(loss, params={"x": x})
    box = recording.stepper()
    assert box.slider.max == len(recording.frames) - 1 == 16
    assert "  0 dependencies" in box.caption.value
    box.slider.value = 5
    assert "pop Add#2" in box.caption.value and box.picture.value.startswith("<pre>digraph")
    box.play.value = 16  # the Play button drives the slider
    assert box.slider.value == 16 and ".grad += [3, 3]" in box.caption.value


def test_save_frames_as_dot(tmp_path):
    x, loss = small()
    recording = trace(loss)
    paths = recording.save_frames(str(tmp_path), "dot")
    assert len(paths) == 17 and paths[0].endswith("frame_000.dot")
    assert open(paths[4]).read() == recording.frames[4].source


def test_gif(tmp_path):
    if not available_renderers("png"):
        pytest.skip("no PNG renderer (dot or pygraphviz)")
    Image = pytest.importorskip("PIL.Image")
    x, loss = small()
    path = trace(loss).save_gif(str(tmp_path / "replay.gif"))
    with Image.open(path) as im:
        assert im.n_frames == 17


def test_gif_without_png_renderer_says_why(monkeypatch, tmp_path):
    pytest.importorskip("PIL")
    monkeypatch.setenv("VARFUNC_VIZ_RENDERER", "none")
    with pytest.raises(RendererUnavailable, match="save_gif needs PNG frames"):
        trace(small()[1]).save_gif(str(tmp_path / "x.gif"))


@pytest.mark.parametrize("format", ["svg", "png"])
def test_save_frames_as_pictures(tmp_path, format):
    if not available_renderers(format):
        pytest.skip(f"no {format.upper()} renderer")
    recording = trace(small()[1])
    paths = recording.save_frames(str(tmp_path), format)
    assert [p.rsplit("/", 1)[-1] for p in paths] == [f"frame_{i:03d}.{format}" for i in range(17)]
    first = open(paths[0], "rb").read()
    if format == "svg":
        assert first.startswith(b"<svg") and b"0 dependencies" in first and b"Sum#3" in first
    else:
        assert first[:8] == b"\x89PNG\r\n\x1a\n"
    assert open(paths[16], "rb").read() != first  # the frames differ from step to step


@pytest.mark.parametrize("order", ["stack", "fifo"])
def test_a_wide_graphs_ready_list_is_rebuilt_from_pushes_and_pops(order):
    xs = {f"a{i}": vf.Variable(np.ones(1)) for i in range(10)}
    recording = trace(vf.cat(list(xs.values()), 0).sum(), order=order, params=xs)
    ready_at_pops = [line.split("; ready: ")[1] for line in recording.lines if " pop " in line]
    assert ready_at_pops[:2] == ["-", "-"]  # Sum, then Concat: nothing else is ready yet
    if order == "stack":  # the last leaf pushed runs first
        assert recording.visit_order[2:] == [f"a{i}" for i in range(9, -1, -1)]
        assert ready_at_pops[2] == "a8, a7, a6, a5, a4, a3, a2, a1, (+1 more)"
        assert ready_at_pops[3] == "a7, a6, a5, a4, a3, a2, a1, a0"
    else:
        assert recording.visit_order[2:] == [f"a{i}" for i in range(10)]
        assert ready_at_pops[2] == "a1, a2, a3, a4, a5, a6, a7, a8, (+1 more)"
        assert ready_at_pops[3] == "a2, a3, a4, a5, a6, a7, a8, a9"
    assert ready_at_pops[-1] == "-"
    box = next(s for s in recording.frame_source(-1).splitlines() if s.startswith("\tready ["))
    assert "(empty)" in box


def test_events_replayed_in_another_engines_order_are_refused():
    x = vf.Variable(np.array([2.0]))
    y = vf.Variable(np.array([3.0]))
    loss = (x * 2) * 3 + (y + 1) * 4  # stack and queue visit it in different orders
    view = GraphView(loss)
    log = EventLog()
    loss.backward(engine=ExecutionEngine("fifo"), recorder=log)
    with pytest.raises(ValueError, match="pass the order of the engine that recorded these events"):
        Recording(view, log.events, "stack")
    assert Recording(view, log.events, "fifo").visit_order == [
        "Add#6",
        "MulConstant#2",
        "MulConstant#5",
        "MulConstant#1",
        "AddConstant#4",
        "Leaf#0",
        "Leaf#3",
    ]


@pytest.mark.parametrize(
    "setting, error, words",
    [
        ({"max_nodes": "abc"}, TypeError, "max_nodes must be a number of nodes"),
        ({"max_nodes": 2.5}, TypeError, "max_nodes must be a number of nodes"),
        ({"max_nodes": True}, TypeError, "max_nodes must be a number of nodes"),
        ({"max_nodes": -1}, ValueError, "max_nodes must be 0 or more"),
        ({"show_shapes": "yes"}, vf.DTypeError, "show_shapes must be True or False"),
        ({"legend": 3}, vf.DTypeError, "legend must be True or False"),
    ],
)
def test_a_bad_setting_is_refused_before_backward_runs(setting, error, words):
    """trace refuses it up front, so no gradient is added (a retry would have added a second one)."""
    from varfunc.viz import draw

    x = vf.Variable(np.array([1.0, 2.0]))
    loss = (x * 3.0).sum()
    with pytest.raises(error, match=f"trace: {words}"):
        trace(loss, **setting)
    assert x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(error, match=f"draw: {words}"):
        draw(loss, **setting)
    recording = trace(loss)
    assert x.grad.tolist() == [3.0, 3.0]
    if "max_nodes" in setting:  # set by hand on a Recording: refused when frames are asked for
        recording.max_nodes = setting["max_nodes"]
        with pytest.raises(error, match=f"frames: {words}"):
            recording.frames()
