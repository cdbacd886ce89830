"""varfunc.viz on Hypothesis-generated graphs (reused intermediates, broadcasting, two-output max).

For any graph: each Function is drawn once and the same program gives the same DOT text; the
replay's story follows the real engine; and all four orderings give the leaves the gradients the
engine gives (and PyTorch, when installed).
"""

import re

import numpy as np
from graphs import build, output_shape, programs
from hypothesis import HealthCheck, given, note, settings

import varfunc as vf
from varfunc.engine import EventLog, ExecutionEngine
from varfunc.viz import ORDERINGS, GraphView, compare_orders, draw, replay_order, trace

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make(program):
    """(output, {name: leaf}, seed gradient) for a fresh build of the program."""
    leaves = [vf.Variable(data) for data in program.leaf_data()]
    out = build(program, *leaves)
    return out, {f"x{i}": leaf for i, leaf in enumerate(leaves)}, np.ones(output_shape(program))


def reachable(root):
    """Every Function behind root, found by a walk of its own over previous_functions."""
    seen, todo = [], [root.creator]
    while todo:
        fn = todo.pop()
        if not any(fn is s for s in seen):
            seen.append(fn)
            todo.extend(prev for prev, _ in fn.previous_functions)
    return seen


def used_leaves(out, params):
    """The names of the leaves the output depends on (a program may leave some unused)."""
    leaves = {id(fn.variable) for fn in reachable(out) if isinstance(fn, vf.Leaf)}
    return [name for name, leaf in params.items() if id(leaf) in leaves]


@SETTINGS
@given(programs())
def test_each_function_drawn_once_and_the_text_is_deterministic(program):
    note(str(program))
    out, params, _ = make(program)
    source = draw(out, params=params, show_shapes=True).source
    numbers = sorted(int(k) for k in re.findall(r"^\tf(\d+) \[", source, flags=re.M))
    assert numbers == list(range(len(reachable(out))))
    labels = re.findall(r'^\tf\d+ \[label="(\w+)#', source, flags=re.M)
    assert labels.count("Leaf") == len(used_leaves(out, params))
    again, params_again, _ = make(program)
    assert draw(again, params=params_again, show_shapes=True).source == source
    assert draw(again, style="modern").source == draw(out, style="modern").source


@SETTINGS
@given(programs())
def test_replay_follows_the_real_engine(program):
    note(str(program))
    for order in ("stack", "fifo"):
        out, params, seed = make(program)
        replayed = replay_order(out, order, seed, params)
        recording = trace(out, order, seed, params)
        assert recording.visit_order == replayed.visits
        assert len(recording.frames) == len(recording.lines) == len(recording.events)
        # the same program run by the engine alone, its Functions named by a view of their own
        real, real_params, _ = make(program)
        log = EventLog()
        real.backward(seed, engine=ExecutionEngine(order), recorder=log)
        view = GraphView(real, real_params)
        assert [view.name(fn) for fn in log.visit_order()] == recording.visit_order
        for name in used_leaves(out, params):  # each leaf accumulates once, as in the real run
            lines = [s for s in recording.lines if f" {name}: .grad += " in s]
            assert len(lines) == 1
            np.testing.assert_array_equal(params[name].grad, real_params[name].grad)


@SETTINGS
@given(programs())
def test_orderings_agree_with_the_engine_and_torch(program):
    note(str(program))
    out, params, seed = make(program)
    comparison = compare_orders(out, gradient=seed, params=params)
    assert comparison.agree and list(comparison.results) == list(ORDERINGS)
    out.backward(seed)
    for order in ORDERINGS:
        assert sorted(comparison[order].leaf_grads) == sorted(used_leaves(out, params))
    for name in used_leaves(out, params):
        leaf = params[name]
        for order in ORDERINGS:
            np.testing.assert_allclose(comparison[order].leaf_grads[name], leaf.grad, rtol=1e-12, atol=1e-12)
    try:
        import torch
    except ImportError:
        return
    tensors = [torch.tensor(data, requires_grad=True) for data in program.leaf_data()]
    build(program, *tensors).backward(torch.tensor(seed))
    for tensor, name in zip(tensors, params):
        if name in used_leaves(out, params):
            np.testing.assert_allclose(params[name].grad, tensor.grad.numpy(), rtol=1e-9, atol=1e-12)
