"""trace: hooks get a log line and their gradients show; frame labels say which gradient they show."""

import numpy as np
import pytest
from graphs import chain

import varfunc as vf
from varfunc.viz import GraphTooLarge, trace


def label_of(source, node):
    """The label of one node of a frame's DOT text, e.g. 'x\\nbuffer [1, 1]'."""
    line = next(s for s in source.splitlines() if s.startswith(f"\t{node} [label="))
    return line.split('label="', 1)[1].split('" ', 1)[0]


def hooked():
    """y = x * 3 doubles its gradient, x multiplies its own by ten: (y * y).sum()."""
    x = vf.Variable(np.array([1.0, 2.0]))
    y = x * 3
    y.register_hook("double", lambda g: g * 2)
    x.register_hook("ten", lambda g: g * 10)
    return x, y, (y * y).sum()


def test_hooks_have_log_lines_and_backward_shows_what_they_left():
    """MulConstant#1 is handed [6, 12]; 'double' makes it [12, 24], which is what backward gets; x is
    handed [36, 72]; 'ten' makes it [360, 720], which is what goes into .grad."""
    x, y, loss = hooked()
    recording = trace(loss, params={"x": x, "y": y})
    assert recording.lines[11:] == [
        " 11 pop MulConstant#1 with grad_output [6, 12]; deps [0]; ready: -",
        " 12 hook 'double' on MulConstant#1 output 0: [6, 12] -> [12, 24]",
        " 13 MulConstant#1.backward([12, 24]) -> [36, 72]",
        " 14 MulConstant#1 sends [36, 72] to x",
        " 15 x: stored in buffer slot 0, buffer ([36, 72]), deps [0] -> ready; ready: x",
        " 16 pop x with grad_output [36, 72]; deps [0]; ready: -",
        " 17 hook 'ten' on x output 0: [36, 72] -> [360, 720]",
        " 18 x: .grad += [360, 720]",
    ]
    assert np.array_equal(x.grad, [360.0, 720.0])
    last = recording.frames[-1].source
    assert label_of(last, "v0") == "x\\ngrad_output [360, 720] (hooked)\\n.grad = [360, 720]"
    assert label_of(last, "v1") == "y\\ngrad_output [12, 24] (hooked)"


def test_a_hook_that_returns_none_and_a_function_hook():
    x = vf.Variable(np.array([1.0, 2.0]))
    y = x * 3
    seen = []
    y.register_hook("look", seen.append)
    y.creator.register_hook("both", lambda grad_input, grad_output: seen.append(grad_input))
    recording = trace(y.sum(), params={"x": x, "y": y})
    assert recording.lines[6:9] == [
        "  6 hook 'look' on MulConstant#1 output 0: [1, 1] (unchanged)",
        "  7 MulConstant#1.backward([1, 1]) -> [3, 3]",
        "  8 hook 'both' on MulConstant#1 saw grad_input [3, 3] and grad_output [1, 1]",
    ]
    assert len(seen) == 2 and np.array_equal(x.grad, [3.0, 3.0])


def test_a_function_hook_that_replaces_grad_input_is_told_apart_from_backward():
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([3.0, 4.0]))
    y = x * w
    y.creator.register_hook("fh", lambda grad_input, grad_output: (grad_input[0] * 0 + 99, grad_input[1]))
    recording = trace(y.sum(), params={"x": x, "w": w})
    assert recording.lines[6:9] == [
        "  6 Mul#2.backward([1, 1]) -> [3, 4], [1, 2]",
        "  7 hook 'fh' on Mul#2 saw grad_input [3, 4], [1, 2] and grad_output [1, 1]; it returned "
        "[99, 99], [1, 2] in its place",
        "  8 Mul#2 sends [99, 99] to x",
    ]
    assert np.array_equal(x.grad, [99.0, 99.0])


def test_two_function_hooks_that_replace_grad_input_show_what_backward_returned():
    x = vf.Variable(np.array([1.0, 2.0]))
    h = x * 3
    h.creator.register_hook("plus1", lambda gi, go: (gi[0] + 1,))
    h.creator.register_hook("times10", lambda gi, go: (gi[0] * 10,))
    lines = trace(h.sum(), params={"x": x}).lines
    assert lines[6:9] == [
        "  6 MulConstant#1.backward([1, 1]) -> [3, 3]",
        "  7 hook 'plus1' on MulConstant#1 saw grad_input [3, 3] and grad_output [1, 1]; it returned "
        "[4, 4] in its place",
        "  8 hook 'times10' on MulConstant#1 saw grad_input [4, 4] and grad_output [1, 1]; it returned "
        "[40, 40] in its place",
    ]


def test_a_hook_that_hands_grad_input_back_replaces_nothing():
    """A pass-through hook on y's Leaf (grad_input () there) made the next Function's line say its hook
    had replaced backward's result; one on a Function said it replaced [3] with [3]."""
    x, y = vf.Variable(np.array([1.0])), vf.Variable(np.array([1.0]))
    y.creator.register_hook("watch", lambda grad_input, grad_output: grad_input)
    loss = x * 2 + y * 3
    loss.creator.previous_functions[1][0].register_hook("same", lambda grad_input, grad_output: grad_input)
    lines = [
        line
        for line in trace(loss.sum(), params={"x": x, "y": y}).lines
        if "hook" in line or ".backward" in line
    ]
    assert lines[2:] == [
        " 12 MulConstant#3.backward([1]) -> [3]",
        " 13 hook 'same' on MulConstant#3 saw grad_input [3] and grad_output [1]; it returned them unchanged",
        " 17 hook 'watch' on y saw grad_input - and grad_output [3]; it returned them unchanged",
        " 20 MulConstant#1.backward([1]) -> [2]",
    ]


def test_a_leaf_that_keeps_no_gradient_says_so():
    x, w = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([3.0, 4.0]))
    loss = (x * w).sum()
    x.requires_grad = False  # frozen after forward
    assert trace(loss, params={"x": x, "w": w}).lines[-1] == (
        " 14 x: requires_grad is False now, so .grad stays as it was"
    )
    assert x._grad is None
    gone = (vf.Variable(np.ones(2)) * 2).sum()  # its leaf's Variable is freed at once
    assert trace(gone).lines[-1].endswith(": its Variable no longer exists, so no .grad gets [2, 2]")


def test_trace_puts_the_original_hooks_back():
    x, y, loss = hooked()
    hooks = {name: entry for name, entry in y.creator.backward_hooks.items()}
    trace(loss, params={"x": x})
    assert y.creator.backward_hooks == hooks  # the same hook objects, in the same order
    x2 = vf.Variable(np.array([1.0, 2.0]))
    y2 = x2 * 3
    y2.register_hook("bad", lambda g: np.ones(5))  # the engine refuses it: backward raises
    original = y2.creator.backward_hooks["bad"]
    with pytest.raises(vf.ShapeError):
        trace(y2.sum())
    assert y2.creator.backward_hooks["bad"][0] is original[0]


def test_a_hook_may_remove_itself_during_a_trace():
    x = vf.Variable(np.array([1.0, 2.0]))
    y = x * 3
    y.register_hook("once", lambda g: y.remove_hook("once"))
    recording = trace(y.sum())
    assert "  6 hook 'once' on MulConstant#1 output 0: [1, 1] (unchanged)" in recording.lines
    assert not y.creator.backward_hooks


def test_the_last_frame_shows_grad_after_this_backward_not_this_backwards_gradient():
    """b had a gradient already: this backward hands it [2, 2], and .grad becomes [4, 4]."""
    b = vf.Variable(np.array([1.0, 2.0]))
    (b * 2).sum().backward()
    recording = trace((b * 2).sum(), params={"b": b})
    stored = recording.frames[8].source  # MulConstant#1's [2, 2] is in b's buffer
    assert recording.lines[8].startswith("  8 b: stored in buffer slot 0, buffer ([2, 2])")
    assert label_of(stored, "v0") == "b\\nbuffer [2, 2]"
    popped = recording.frames[9].source
    assert label_of(popped, "v0") == "b\\ngrad_output [2, 2]"
    assert label_of(recording.frames[-1].source, "v0") == "b\\ngrad_output [2, 2]\\n.grad = [4, 4]"
    assert np.array_equal(b.grad, [4.0, 4.0])


def test_frame_0_shows_the_root_ready_with_its_seed():
    x = vf.Variable(np.array([1.0, 2.0]))
    loss = (x * 2).sum()
    first = trace(loss, gradient=np.array(5.0), params={"x": x}).frames[0].source
    assert 'ready [label="ready stack (next first)\\nSum#2" fillcolor=white shape=note]' in first
    assert label_of(first, "v2") == "output\\nbuffer 5"


def test_modern_style_names_the_caption_log_and_ready_box():
    x = vf.Variable(np.array([1.0, 2.0]))
    recording = trace((x * 2).sum(), style="modern")
    assert recording.lines[:2] == [
        "  0 dependencies: SumBackward0#2 [0], MulBackward0#1 [1], AccumulateGrad#0 [1]",
        "  1 pop SumBackward0#2 with grad_output 1; deps [0]; ready: -",
    ]
    assert recording.visit_order == ["SumBackward0#2", "MulBackward0#1", "AccumulateGrad#0"]
    frame = recording.frames[4].source  # MulBackward0#1 became ready
    assert "\\nMulBackward0#1" in label_of(frame, "ready") and "MulConstant" not in frame


def test_frames_are_refused_past_max_nodes_but_the_log_is_not(tmp_path):
    x, y = chain(100)  # 101 boxes, each with its Variable: 202 nodes, two more than MAX_FRAME_NODES
    recording = trace(y, params={"x": x})
    with pytest.raises(GraphTooLarge):
        recording.save_frames(str(tmp_path / "frames"))
    assert not (tmp_path / "frames").exists(), "refused, yet the folder was made"
    assert len(recording.lines) == 403 and np.array_equal(x.grad, [1.0])
    message = (
        "frames: a picture of this graph has 202 nodes (Function and Leaf boxes, Variables, saved "
        "tensors), more than max_nodes=200; a trace has one frame per engine event (403 here)"
    )
    with pytest.raises(GraphTooLarge, match=message.replace("(", r"\(").replace(")", r"\)")):
        recording.frames  # noqa: B018 - the property makes them
    with pytest.raises(GraphTooLarge, match=r"Set recording.max_nodes = 202 \(or None\)"):
        recording.frame_source(0)
    recording.max_nodes = None
    assert len(recording.frames) == 403
    x, y = chain(3)
    assert len(trace(y, max_nodes=8).frames) == 15


def test_the_log_lists_the_first_names_on_a_wide_ready_stack():
    """Every line listed the whole stack: a cat of 1,000 Variables made a 10 MB log (169 MB for 4,000)."""
    xs = [vf.Variable(np.array([float(i)])) for i in range(1000)]
    recording = trace(vf.cat(xs).sum())
    names = ", ".join(f"Leaf#{i}" for i in range(999, 991, -1))
    assert recording.lines[2006] == (
        "2006 Leaf#999: stored in buffer slot 0, buffer ([1]), deps [0] -> ready; "
        f"ready: {names}, (+992 more)"
    )
    assert len(recording.text) < 500_000
    with pytest.raises(GraphTooLarge):
        trace(chain(3)[1], max_nodes=3).frames  # noqa: B018


def test_trace_checks_its_arguments_before_backward_runs():
    x = vf.Variable(np.ones(2))
    with pytest.raises(ValueError, match=r"style must be one of \('v0.1', 'modern'\), got 'Modern'"):
        trace((x * 2).sum(), style="Modern")
    with pytest.raises(TypeError, match="trace: loss must be one Variable to run backward from, got list"):
        trace([(x * 2).sum()])
    assert x._grad is None  # no backward ran
