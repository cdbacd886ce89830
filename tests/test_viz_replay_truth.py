"""The replay tells what the engine really did, at the edges: hooks called by other backwards or
registered late, NaN gradients, graphs changed after the trace, a backward that raised, and pictures
that must not mislead (the red edge, a leaf as root, the colours, the size of a large graph's log)."""

import sys

import numpy as np
import pytest
from graphs import chain

import varfunc as vf
from varfunc import Function, viz
from varfunc.engine import EventLog
from varfunc.viz import COLORS, DotOptions, GraphTooLarge, trace


def node_line(source, node):
    """The line of one node of a frame's DOT text."""
    return next(line for line in source.splitlines() if line.startswith(f"\t{node} ["))


def red_edges(source):
    return [line.strip() for line in source.splitlines() if "color=red" in line]


# --- A1, A2, B1: the hooks that the traced backward called, and only those -------------------------


def test_a_backward_that_a_hook_runs_writes_nothing_into_the_trace():
    """Before: the side backward's call of 'leafh' was logged as this one's, and MulConstant#1's
    backward was said to be handed [6, 6] (the side backward's gradient) instead of [3, 3]."""
    x = vf.Variable(np.array([1.0, 2.0]))
    x.register_hook("leafh", lambda g: g + 1)
    y = x * 2
    y.register_hook("nested", lambda g: (x * 5).sum().backward())
    recording = trace((y * 3).sum(), params={"x": x})
    assert recording.lines[9:] == [
        "  9 pop MulConstant#1 with grad_output [3, 3]; deps [0]; ready: -",
        " 10 hook 'nested' on MulConstant#1 output 0: [3, 3] (unchanged)",
        " 11 MulConstant#1.backward([3, 3]) -> [6, 6]",
        " 12 MulConstant#1 sends [6, 6] to x",
        " 13 x: stored in buffer slot 0, buffer ([6, 6]), deps [0] -> ready; ready: x",
        " 14 pop x with grad_output [6, 6]; deps [0]; ready: -",
        " 15 hook 'leafh' on x output 0: [6, 6] -> [7, 7]",
        " 16 x: .grad += [7, 7]",
    ]
    assert np.array_equal(x.grad, [13.0, 13.0])  # 6 from the side backward, 7 from this one


def test_a_trace_inside_a_hook_and_the_trace_around_it_each_log_their_own_hook_calls():
    """Before: both traces wrapped x's hook, so the inner backward's call was logged by both."""
    x = vf.Variable(np.array([1.0, 2.0]))
    x.register_hook("leafh", lambda g: g + 1)
    y = x * 2
    inner = []
    y.register_hook("nested", lambda g: inner.append(trace((x * 5).sum(), params={"x": x})))
    outer = trace((y * 3).sum(), params={"x": x})
    assert [line for line in outer.lines if "'leafh'" in line] == [
        " 15 hook 'leafh' on x output 0: [6, 6] -> [7, 7]"
    ]
    assert inner[0].lines[-2:] == [
        " 10 hook 'leafh' on x output 0: [5, 5] -> [6, 6]",
        " 11 x: .grad += [6, 6]",
    ]


def test_a_hook_called_by_a_backward_inside_a_functions_backward_is_labelled_not_replayed():
    x = vf.Variable(np.array([1.0, 2.0]))
    x.register_hook("leafh", lambda g: g + 1)

    class Side(Function):
        def forward(self, a):
            return a * 2

        def backward(self, g):
            (x * 5).sum().backward()  # runs x's hook, inside the traced backward
            return g * 2

    recording = trace((Side()(x) * 3).sum(), params={"x": x})
    assert recording.lines[10:12] == [
        " 10 hook 'leafh' on x ran in another backward, started inside this one: not part of this replay",
        " 11 Side#1.backward([3, 3]) -> [6, 6]",
    ]
    frame = recording.frame_source(10)
    assert node_line(frame, "f1").endswith("fillcolor=gold]")  # Side#1 is still the current step
    assert node_line(frame, "v0") == '\tv0 [label="x" fillcolor=lightblue shape=ellipse]'


def test_a_hook_registered_while_the_trace_runs_is_recorded():
    """Before: the log and the frame said x got [6, 6], while x.grad was [600, 600]."""
    x = vf.Variable(np.array([1.0, 2.0]))
    y = x * 2
    y.register_hook("adder", lambda g: x.register_hook("late", lambda h: h * 100))
    recording = trace((y * 3).sum(), params={"x": x})
    assert recording.lines[-2:] == [
        " 15 hook 'late' on x output 0: [6, 6] -> [600, 600]",
        " 16 x: .grad += [600, 600]",
    ]
    assert np.array_equal(x.grad, [600.0, 600.0])
    label = 'label="x\\ngrad_output [600, 600] (hooked)\\n.grad = [600, 600]"'
    assert label in node_line(recording.frame_source(-1), "v0")


@pytest.mark.parametrize("kind", ["variable", "function"])
def test_a_hook_of_the_wrong_signature_is_explained_under_trace_as_under_backward(kind):
    """Before: trace's recording wrapper added a frame, and the kit took the TypeError for one raised
    inside the hook: a bare TypeError."""
    messages = []
    for run in (lambda loss: loss.backward(), trace):
        x = vf.Variable(np.array([1.0, 2.0]))
        y = x * 2
        if kind == "variable":
            y.register_hook("h", lambda grad_input, grad_output: None)
        else:
            y.creator.register_hook("h", lambda grad: None)
        with pytest.raises(vf.VarfuncError, match="could not be called") as caught:
            run(y.sum())
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


# --- A3: NaN ---------------------------------------------------------------------------------------


def test_a_hook_that_hands_back_a_nan_gradient_changed_nothing():
    """Before: NaN != NaN, so a hook that only looked was logged as replacing [nan, 0] with [nan, 0]."""
    x = vf.Variable(np.array([0.0, 1.0]))
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, then -inf * 0 = nan
        y = x.log()
        x.register_hook("peek", lambda g: None)
        y.creator.register_hook("fpeek", lambda grad_input, grad_output: grad_input)
        recording = trace((y * 0).sum(), params={"x": x})
    hooks = [line for line in recording.lines if "hook" in line or ".backward" in line]
    assert hooks[-3:] == [
        " 10 Log#1.backward([0, 0]) -> [nan, 0]",
        " 11 hook 'fpeek' on Log#1 saw grad_input [nan, 0] and grad_output [0, 0]; it returned them "
        "unchanged",
        " 15 hook 'peek' on x output 0: [nan, 0] (unchanged)",
    ]
    assert "hooked" not in recording.frame_source(-1)


# --- A4: frames drawn later ------------------------------------------------------------------------


def test_frames_show_the_graph_as_it_was_when_the_recording_was_made():
    """Before: a leaf frozen after the trace was drawn 'leaf, no grad' in the frame where it accumulated,
    and values were read when the frame was drawn."""
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([3.0, 4.0]))
    recording = trace((x * w).sum(), params={"x": x, "w": w})
    before = recording.frame_source(12)
    w.requires_grad = False  # later: a layer frozen for fine-tuning
    assert recording.lines[12] == " 12 w: .grad += [1, 2]"
    assert recording.frame_source(12) == before
    assert node_line(before, "v1") == (
        '\tv1 [label="w\\ngrad_output [1, 2]\\n.grad = [1, 2]" fillcolor=lightblue shape=ellipse]'
    )
    log = EventLog()
    loss = (x * 2).sum()
    loss.backward(recorder=log)
    shown = viz.Recording(viz.GraphView(loss, {"x": x}), log.events, "stack", DotOptions(show_values=True))
    x.data[:] = 9.0  # an optimizer step, in place
    assert "x\\ndata [1, 2]" in node_line(shown.frame_source(-1), "v0")


# --- C1: a backward that raised ----------------------------------------------------------------------


class Bad(Function):
    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        raise ValueError("student bug")


def failing():
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([1.0, 2.0]))
    return x, w, (Bad()(x) * 3 + x * w).sum()


def test_a_failed_backward_is_the_last_step_of_its_replay():
    """Before: the replay ended on the pop of Bad#1, drawn gold, and nothing said that it raised."""
    x, w, loss = failing()
    log = EventLog()
    with pytest.raises(ValueError, match="student bug"):
        loss.backward(recorder=log)
    assert log.events[-1].kind == "failed"
    recording = viz.Recording(viz.GraphView(loss, {"x": x, "w": w}), log.events, "stack")
    assert recording.lines[-2:] == [
        " 23 pop Bad#1 with grad_output [3, 3]; deps [0]; ready: -",
        " 24 Bad#1 raised ValueError('student bug') (in its backward or a hook on it): the pass stopped "
        "here; w had already added this pass's gradient into .grad",
    ]
    last = recording.frame_source(-1)
    assert node_line(last, "f1") == f'\tf1 [label="Bad#1\\ndeps [0]" fillcolor={COLORS["failed"]}]'
    assert 'label="raised: the pass stopped"' in last  # in the legend, on this frame only
    assert 'label="raised: the pass stopped"' not in recording.frame_source(-2)


def test_trace_hangs_the_steps_up_to_the_failure_on_the_error():
    """Before: trace() raised and the recorded events were lost."""
    x, w, loss = failing()
    with pytest.raises(ValueError, match="student bug") as caught:
        trace(loss, params={"x": x, "w": w})
    recording = caught.value.recording
    assert recording.lines[-1].startswith(" 24 Bad#1 raised ValueError('student bug')")
    assert len(recording.frames) == 25
    if sys.version_info >= (3, 11):  # exception notes are Python 3.11+
        assert any("error.recording.stepper()" in note for note in caught.value.__notes__)


def test_a_hooks_mistake_under_trace_keeps_the_kits_message():
    """The replay of the steps before the failure must not replace the error backward raised."""
    messages = []
    for run in (lambda loss: loss.backward(), trace):
        x = vf.Variable(np.array([1.0, 2.0]))
        y = x * 2
        y.register_hook("h", lambda g: vf.Variable(np.ones(2)))
        with pytest.raises(vf.ShapeError, match="returned a Variable") as caught:
            run(y.sum())
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert (
        "  6 hook 'h' on MulConstant#1 output 0: [1, 1]; it returned a Variable"
        in caught.value.recording.lines
    )


# --- D1 to D4: pictures that must not mislead --------------------------------------------------------


def test_the_red_edge_shows_one_gradients_journey_only():
    """Before: the edge into MulConstant#3 stayed red on the frame where MulConstant#1 was popped."""
    x, y = vf.Variable(np.array([1.0])), vf.Variable(np.array([2.0]))
    recording = trace((x * 2 + y * 3).sum(), order="fifo", params={"x": x, "y": y})
    assert recording.lines[11].startswith(" 11 pop MulConstant#1")
    assert red_edges(recording.frame_source(9)) == red_edges(recording.frame_source(10)) != []
    assert red_edges(recording.frame_source(11)) == []


def test_a_leaf_traced_in_modern_style_draws_the_accumulate_grad_the_engine_pops():
    x = vf.Variable(np.array([1.0, 2.0]))
    recording = trace(x, gradient=np.ones(2), params={"x": x}, style="modern")
    assert recording.lines[1] == "  1 pop x with grad_output [1, 1]; deps [0]; ready: -"
    frame = recording.frame_source(1)
    assert node_line(frame, "f0") == '\tf0 [label="AccumulateGrad#0\\ndeps [0]" fillcolor=gold]'
    assert "\tv0 -> f0\n" in frame
    assert "f0" not in viz.build_dot(viz.GraphView(x), DotOptions(style="modern"))  # no grad_fn in draw()


def test_done_differs_from_not_reached_and_the_legend_names_the_output():
    x, y = vf.Variable(np.array([1.0])), vf.Variable(np.array([2.0]))
    frame = trace((x * 2 + y * 3).sum(), params={"x": x, "y": y}).frame_source(6)  # Sum, Add done
    done, not_reached = node_line(frame, "f5"), node_line(frame, "f0")
    assert f"fillcolor={COLORS['done']} color=grey70 fontcolor=grey45" in done  # faded
    assert not_reached.endswith(f"fillcolor={COLORS['function']}]")
    assert COLORS["done"] != COLORS["function"] and COLORS["done"] not in ("grey92", "lightgrey")
    assert '\t\tlegend_output [label="output" fillcolor=darkolivegreen1 shape=ellipse]' in frame


def test_a_large_graphs_first_line_is_short_and_its_frames_are_advised_against():
    """Before: a 5,000-op chain's first line was 108,930 characters, and GraphTooLarge said
    'Set recording.max_nodes = 5002' (20,007 frames of a 5,002-node picture)."""
    x, y = chain(600)
    recording = trace(y, params={"x": x})
    assert recording.lines[0].endswith("MulConstant#581 [1], (+581 more)")
    assert len(recording.lines[0]) < 500
    with pytest.raises(GraphTooLarge, match="too large to read: trace a smaller graph") as caught:
        recording.frame_source(0)
    assert "max_nodes = 601" not in str(caught.value)
