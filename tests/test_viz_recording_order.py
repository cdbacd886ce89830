"""A Recording tells the truth step by step: .grad only once it was there, hooks in the order the engine
called them, and size limits that count every node a frame draws."""

import re

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, viz
from varfunc.engine import EventLog
from varfunc.viz import DotOptions, GraphTooLarge, trace


def label_of(source: str, node: str) -> str:
    """The label of one node of a frame's DOT text, e.g. 'x\\ngrad [0, 0]'."""
    line = next(s for s in source.splitlines() if s.startswith(f"\t{node} [label="))
    return line.split('label="', 1)[1].split('" ', 1)[0]


def hand_built(loss, params: dict, options: DotOptions) -> viz.Recording:
    """A Recording made as a student makes one: their own EventLog passed to backward."""
    log = EventLog()
    loss.backward(recorder=log)
    return viz.Recording(viz.GraphView(loss, params), log.events, "stack", options)


# --- 1. show_grads on a hand-built Recording --------------------------------------------------------


def test_a_hand_built_recording_shows_grad_only_from_the_step_it_accumulated():
    """Before: every frame, step 0 included, showed 'grad [4, 4]', the .grad after this backward."""
    b = vf.Variable(np.array([1.0, 2.0]))
    (b * 2).sum().backward()  # b.grad is [2, 2] before the recorded backward
    recording = hand_built((b * 2).sum(), {"b": b}, DotOptions(show_grads=True))
    accumulated = recording.lines.index(" 10 b: .grad += [2, 2]")
    for step in range(accumulated):
        assert "[4, 4]" not in label_of(recording.frame_source(step), "v0"), recording.lines[step]
    # b held [2, 2] from the first backward; the events hold only what this pass added
    assert label_of(recording.frame_source(0), "v0") == "b\\ngrad before this pass: not recorded"
    assert label_of(recording.frame_source(-1), "v0") == "b\\ngrad_output [2, 2]\\n.grad = [4, 4]"
    assert np.array_equal(b.grad, [4.0, 4.0])


class Bad(Function):
    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        raise ValueError("student bug")


def test_a_leaf_the_pass_never_reached_shows_its_unchanged_grad_on_every_frame():
    """x's gradient never arrived (Bad#1 raised first): its .grad, [5, 5], was true at every step."""
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([1.0, 2.0]))
    (x * 5).sum().backward()
    loss = (Bad()(x) * 3 + w * 2).sum()
    log = EventLog()
    with pytest.raises(ValueError, match="student bug"):
        loss.backward(recorder=log)
    recording = viz.Recording(
        viz.GraphView(loss, {"x": x, "w": w}), log.events, "stack", DotOptions(show_grads=True)
    )
    x_node, w_node = "v0", "v3"  # Leaf#0 and Leaf#3
    assert {label_of(frame.source, x_node) for frame in recording.frames} == {"x\\ngrad [5, 5]"}
    assert label_of(recording.frame_source(0), w_node) == "w\\ngrad [0, 0]"  # empty until it accumulates
    assert label_of(recording.frame_source(-1), w_node).endswith(".grad = [2, 2]")


def test_a_hand_built_recording_shows_every_leafs_grad_on_every_frame():
    """Before: a leaf that the pass accumulated into had no grad line until it did, while one it never
    reached had one from step 0; now each shows what .grad was at that step."""
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([3.0, 4.0]))
    recording = hand_built((x * w).sum(), {"x": x, "w": w}, DotOptions(show_grads=True))
    for node, name, grad in (("v0", "x", "[3, 4]"), ("v1", "w", "[1, 2]")):
        accumulated = next(i for i, line in enumerate(recording.lines) if f"{name}: .grad +=" in line)
        for step in range(accumulated):
            assert label_of(recording.frame_source(step), node).startswith(f"{name}\\ngrad [0, 0]")
        for step in range(accumulated, len(recording.lines)):
            label = label_of(recording.frame_source(step), node)
            assert "grad [0, 0]" not in label and label.endswith(f".grad = {grad}")


def test_a_leaf_whose_hook_changed_what_it_added_shows_its_earlier_grad_as_not_recorded():
    """The events hold the gradient before the hook: .grad [20, 20] is not it, so .grad may not have
    been empty before the pass, and no zeros are claimed."""
    x = vf.Variable(np.array([1.0, 2.0]))
    x.register_hook("times_ten", lambda grad: grad * 10)
    recording = hand_built((x * 2).sum(), {"x": x}, DotOptions(show_grads=True))
    assert label_of(recording.frame_source(0), "v0") == "x\\ngrad before this pass: not recorded"
    assert label_of(recording.frame_source(-1), "v0").endswith(".grad = [20, 20]")


def test_a_leaf_frozen_before_the_recording_is_made_gets_no_grad_before_line():
    """The Recording shows the graph as it is when made: b no longer requires grad, so no frame claims
    a .grad it had before the pass (the last frame shows the .grad it has now)."""
    b = vf.Variable(np.array([1.0, 2.0]))
    loss = (b * 2).sum()
    log = EventLog()
    loss.backward(recorder=log)
    b.requires_grad = False
    recording = viz.Recording(viz.GraphView(loss, {"b": b}), log.events, "stack", DotOptions(show_grads=True))
    assert recording.lines[-1] == " 10 b: requires_grad is False now, so .grad stays as it was"
    for step in range(8):  # before its buffer fills
        assert label_of(recording.frame_source(step), "v0") == "b", recording.lines[step]
    assert label_of(recording.frame_source(-1), "v0") == "b\\ngrad_output [2, 2]\\n.grad = [2, 2]"


def test_without_show_grads_a_hand_built_recording_shows_no_grad():
    x = vf.Variable(np.array([1.0, 2.0]))
    recording = hand_built((x * 2).sum(), {"x": x}, DotOptions())
    assert label_of(recording.frame_source(-1), "v0") == "x\\ngrad_output [2, 2]"


# --- 2. hooks in the engine's order -----------------------------------------------------------------


def twice(calls: list):
    """A Function class for y = 2 x whose backward notes in calls when it runs."""

    class Twice(Function):
        def forward(self, a):
            return a * 2

        def backward(self, grad_output):
            calls.append("backward")
            return grad_output * 2

    return Twice


def told_order(lines: list) -> list:
    """What the log says happened, in its order: hook names, 'backward', 'accumulate'."""
    told = []
    for line in lines:
        hook = re.search(r" hook '(\w+)' ", line)
        if hook:
            told.append(hook[1])
        elif "Twice#1.backward(" in line:
            told.append("backward")
        elif ".grad +=" in line:
            told.append("accumulate")
    return told


def test_the_log_tells_the_hooks_and_backward_in_the_order_the_engine_called_them():
    """Before: 'after', which saw backward's result, was logged before the backward that made it."""
    calls, grad_when_called = [], []
    x = vf.Variable(np.array([1.0, 2.0]))
    y = twice(calls)()(x)
    y.register_hook("before", lambda grad: calls.append("before"))
    y.creator.register_hook("after", lambda grad_input, grad_output: calls.append("after"))
    x.creator.register_hook(
        "leafhook",
        lambda grad_input, grad_output: calls.append("leafhook") or grad_when_called.append(x._grad),
    )
    recording = trace(y.sum(), params={"x": x})
    assert calls == ["before", "backward", "after", "leafhook"]
    assert grad_when_called == [None]  # x's Function hook ran before x accumulated
    assert told_order(recording.lines) == [*calls, "accumulate"]


def test_a_function_hook_after_backward_keeps_the_steps_and_frames_in_line():
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([3.0, 4.0]))
    y = x * w
    y.creator.register_hook("fh", lambda grad_input, grad_output: (grad_input[0] * 0 + 99, grad_input[1]))
    recording = trace(y.sum(), params={"x": x, "w": w})
    assert [int(line.split()[0]) for line in recording.lines] == list(range(len(recording.lines)))
    assert [event.step for event in recording.events] == list(range(len(recording.events)))
    assert recording.lines[6:8] == [
        "  6 Mul#2.backward([1, 1]) -> [3, 4], [1, 2]",
        "  7 hook 'fh' on Mul#2 saw grad_input [3, 4], [1, 2] and grad_output [1, 1]; it returned "
        "[99, 99], [1, 2] in its place",
    ]
    hook_frame = recording.frames[7]
    assert hook_frame.line == recording.lines[7] and hook_frame.event.kind == "hook"
    assert re.search(r"\tf2 \[label=\"Mul#2[^\"]*\" fillcolor=gold\]", hook_frame.source)


# --- 3. size limits count the nodes drawn ------------------------------------------------------------


def node_lines(source: str) -> int:
    """How many nodes of the graph a DOT text draws (not the ready note, not the legend)."""
    return len([name for name in re.findall(r"^\t(\w+) \[label=", source, re.M) if name != "ready"])


def many_leaves(count: int):
    """count leaves, concatenated and summed: count + 2 Functions and Leaf nodes, each with a Variable."""
    return vf.cat([vf.Variable(np.array([float(i)])) for i in range(count)], 0).sum()


def test_frames_of_a_graph_of_many_leaves_count_each_leafs_variable():
    """Before: 60 leaves made 62 'nodes', so max_nodes=100 let through frames of 124 nodes each."""
    recording = trace(many_leaves(60), max_nodes=100)
    with pytest.raises(GraphTooLarge, match=r"has 124 nodes .* more than max_nodes=100") as refused:
        recording.frames  # noqa: B018 - the property makes them
    assert "Set recording.max_nodes = 124 (or None)" in str(refused.value)
    recording.max_nodes = 124  # what the message advises is just enough
    assert {node_lines(frame.source) for frame in recording.frames} == {124}
    recording.max_nodes = 123
    with pytest.raises(GraphTooLarge):
        recording.frame_source(0)


def test_frames_that_show_saved_tensors_count_them():
    """Before: 40 products made 83 'nodes' (under 100), while each frame drew 246."""
    w = vf.Variable(np.array([2.0]))
    loss = vf.cat([vf.Variable(np.array([float(i)])) * w for i in range(40)], 0).sum()
    log = EventLog()
    loss.backward(recorder=log)
    options = DotOptions(show_saved=True)
    recording = viz.Recording(viz.GraphView(loss), log.events, "stack", options)
    with pytest.raises(GraphTooLarge, match=r"has 246 nodes .* more than max_nodes=200"):
        recording.frame_source(0)
    recording.max_nodes = None
    assert node_lines(recording.frame_source(0)) == 246
    assert "has 246 nodes" in viz.draw(loss, show_saved=True, max_nodes=200).refused  # the same count


@pytest.mark.parametrize("style", ["v0.1", "modern"])
@pytest.mark.parametrize("show_saved", [False, True])
def test_the_node_count_is_the_number_of_nodes_drawn(style, show_saved):
    from varfunc.viz.dot import build_dot, node_count

    m = vf.Variable(np.array([[1.0, 5.0], [7.0, 3.0]]))
    values, indices = m.max(dim=1)
    x = vf.Variable(np.array([1.0, 2.0]))
    volatile = vf.Variable(np.ones(1), volatile=True) * 2
    graphs = [
        many_leaves(5),
        [values, indices],
        x,
        [(x * x).sum(), x * 3, volatile],
        (vf.Variable(np.ones(2)) * 2).sum(),  # its leaf's Variable is freed
    ]
    options = DotOptions(style=style, show_saved=show_saved)
    for roots in graphs:
        view = viz.GraphView(roots)
        assert node_count(view, options) == node_lines(build_dot(view, options))
    leaf_root = trace(x, gradient=np.ones(2), style=style)  # modern: its AccumulateGrad, in frames only
    assert node_count(leaf_root.view, options, replay=True) == node_lines(leaf_root.frame_source(-1))
