"""The ExecutionEngine: visit order, dependency counting, gradient summation, recorder events, depth."""

import sys
import weakref

import numpy as np
import pytest
from conftest import on_device

import varfunc as vf
from varfunc import EventLog, ExecutionEngine, Function, Leaf, Variable
from varfunc.functions import Add, AddConstant, MulConstant


def leaf(device, values):
    """A leaf Variable holding values on device."""
    return Variable(on_device(device, np.asarray(values, dtype=np.float64)))


def reference_graph(device="cpu"):
    """c = (x*2)*3 + (y+1)*4, the graph whose v0.1.3 visit order the reference verified."""
    x = leaf(device, [2.0])
    y = leaf(device, [3.0])
    c = (x * 2) * 3 + (y + 1) * 4
    return x, y, c


def test_stack_order_matches_v013(device):
    x, y, c = reference_graph(device)
    log = EventLog()
    c.backward(recorder=log)
    order = log.visit_order()
    expected = [Add, MulConstant, AddConstant, Leaf, MulConstant, MulConstant, Leaf]
    assert [type(fn) for fn in order] == expected
    assert [fn.constant for fn in order if isinstance(fn, MulConstant)] == [4, 3, 2]
    assert order[3] is y.creator and order[6] is x.creator
    assert x.grad.tolist() == [6.0] and y.grad.tolist() == [4.0]
    assert type(x.grad) is type(x.data)  # the gradient lives with the data


def test_fifo_order_is_breadth_first_and_gives_same_gradients(device):
    x, y, c = reference_graph(device)
    log = EventLog()
    c.backward(engine=ExecutionEngine(order="fifo"), recorder=log)
    order = log.visit_order()
    assert [type(fn).__name__ for fn in order] == [
        "Add",
        "MulConstant",
        "MulConstant",
        "MulConstant",
        "AddConstant",
        "Leaf",
        "Leaf",
    ]
    assert [fn.constant for fn in order[1:4]] == [3, 4, 2]
    assert x.grad.tolist() == [6.0] and y.grad.tolist() == [4.0]


def test_unknown_order_is_rejected():
    with pytest.raises(ValueError, match="order must be one of"):
        ExecutionEngine(order="random")


def test_dependencies_count_each_use_of_each_output():
    x = Variable(np.array([1.5]))
    h = x * 2
    out = h * h + h
    deps = ExecutionEngine()._compute_dependencies(out.creator)
    assert deps[h.creator] == [3]  # used twice by Mul and once by Add
    assert deps[x.creator] == [1]
    assert deps[out.creator] == [0]
    assert deps[(h * 1).creator.previous_functions[0][0]] == [3]
    assert len(deps) == 4  # the root Add, Mul, MulConstant(2) and Leaf x: nothing else


def test_gradients_meeting_in_one_slot_are_summed(device):
    x = leaf(device, [1.5, -2.0])
    h = x * 2
    (h * h + h).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [2 * (2 * (2 * 1.5)) + 2, 2 * (2 * (2 * -2.0)) + 2])


def test_engine_visits_each_function_once_in_a_diamond(device):
    x = leaf(device, [0.3])
    a = x.exp()
    b, c = a * 2, a * 3
    log = EventLog()
    (b + c).backward(recorder=log)
    order = log.visit_order()
    assert len(order) == len(set(order)) == 5
    np.testing.assert_allclose(x.grad.tolist(), [5 * np.exp(0.3)])


def test_recorder_story_of_a_reused_input(device):
    x = leaf(device, [2.0])
    out = x * 3 + x
    log = EventLog()
    out.backward(recorder=log)
    kinds = [event.kind for event in log.events]
    assert kinds == [
        "dependencies",
        "popped",  # Add
        "called_backward",
        "sent_gradient",
        "became_ready",  # MulConstant(3): its only consumer has sent
        "sent_gradient",
        "buffered",  # Leaf x: still waiting for MulConstant
        "popped",  # MulConstant(3)
        "called_backward",
        "sent_gradient",
        "became_ready",  # Leaf x: both gradients summed
        "popped",
        "accumulated",
    ]
    buffered = log.events[6]
    assert buffered.function is x.creator and buffered.details["remaining"] == 1
    ready = log.events[10]
    assert ready.details["grad_so_far"].tolist() == [4.0]
    assert log.events[0].details["counts"][x.creator] == [2]
    assert x.grad.tolist() == [4.0]


def test_recorder_copies_buffers_that_are_later_summed_in_place(device):
    x = leaf(device, [1.0])
    h = x * 1
    out = (h + h * 2) + h * 3
    log = EventLog()
    out.backward(recorder=log)
    mine = [e for e in log.events if e.function is h.creator and e.kind in ("buffered", "became_ready")]
    # MulConstant(3) runs first (top of the stack), then the inner Add, then MulConstant(2).
    assert [(e.kind, e.details["grad_so_far"].item()) for e in mine] == [
        ("buffered", 3.0),
        ("buffered", 4.0),
        ("became_ready", 6.0),
    ]
    assert x.grad.tolist() == [6.0]


def test_backward_through_a_long_chain_needs_no_recursion():
    """100,000 ops, 100 times Python's recursion limit; the million-op case below is marked slow."""
    x = Variable(np.array(1.0))
    y = x
    for _ in range(50_000):
        y = y * 1.0 + 0.0
    y.backward()
    assert x.grad.item() == 1.0


@pytest.mark.slow
def test_a_chain_of_a_million_ops_runs_and_is_freed():
    """The issue's figure: 500,000 steps of two ops. Part of `make test` (about 15 s and 800 MB here)."""
    x = Variable(np.array(1.0))
    y = x
    for _ in range(500_000):
        y = y * 1.0 + 0.0
    bottom = weakref.ref(_bottom_function(y))
    y.backward()
    assert x.grad.item() == 1.0
    del y  # freeing a million-deep chain must not recurse either
    assert bottom() is None


def _bottom_function(variable):
    fn = variable.creator
    while fn.previous_functions and not isinstance(fn.previous_functions[0][0], Leaf):
        fn = fn.previous_functions[0][0]
    return fn


def test_engine_is_linear_in_graph_size():
    """Every Function is popped once and every edge is walked once, whatever the sharing."""
    x = Variable(np.array([1.0]))
    layer = [x]
    for _ in range(6):  # each level uses every node of the level below twice
        layer = [a * 1.0 + b for a in layer for b in layer][:8]
    out = layer[0]
    for v in layer[1:]:
        out = out + v
    log = EventLog()
    out.backward(recorder=log)
    popped = log.visit_order()
    assert len(popped) == len(set(popped)) == len(log.events[0].details["counts"])
    sent = sum(1 for e in log.events if e.kind == "sent_gradient")
    edges = sum(len(fn.previous_functions) for fn in popped)
    assert sent == edges


class ReturnsWrongShape(Function):
    def forward(self, a, b):
        return a + b

    def backward(self, g):
        return g, g  # forgets to sum over b's broadcast dimension


def test_a_gradient_of_the_wrong_shape_is_an_error_naming_the_function():
    a = Variable(np.ones((3, 4)))
    b = Variable(np.ones(4))
    out = ReturnsWrongShape()(a, b).sum()
    with pytest.raises(vf.ShapeError, match=r"ReturnsWrongShape\(\).*input 1.*\(4,\)"):
        out.backward()


class ReturnsTooFew(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, g):
        return g


def test_a_backward_returning_too_few_gradients_is_an_error():
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    with pytest.raises(vf.VarfuncError, match="returned 1 gradient, but forward took 2 inputs"):
        ReturnsTooFew()(a, b).sum().backward()


class ReturnsNone(Function):
    def forward(self, a):
        return a * 2

    def backward(self, g):
        return None


class ForgetsToReturn(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, g):
        self.grads = (g, g)  # computed, but never returned


def test_a_two_input_backward_that_returns_nothing_asks_whether_return_is_missing():
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    with pytest.raises(
        vf.VarfuncError, match=r"returned None \(is `return` missing\?\), but forward took 2 inputs"
    ):
        ForgetsToReturn()(a, b).sum().backward()


class ReturnsNoneAndTwo(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, g):
        return None, g, g


def test_a_backward_returning_too_many_gradients_counts_them_even_when_the_first_is_none():
    """None first is not a missing return: three values came back, and the error counts them."""
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    with pytest.raises(vf.VarfuncError, match=r"returned 3 gradients, but forward took 2 inputs") as raised:
        ReturnsNoneAndTwo()(a, b).sum().backward()
    assert "return` missing" not in str(raised.value)


def test_a_returned_number_is_named_with_its_article():
    class ReturnsAnInt(Function):
        def forward(self, a):
            return a * 2

        def backward(self, g):
            return 1

    with pytest.raises(vf.ShapeError, match="returned an int, not an array, for input 0"):
        ReturnsAnInt()(Variable(np.ones(2))).sum().backward()


def test_none_for_an_input_that_requires_grad_is_an_error():
    a = Variable(np.ones(2))
    with pytest.raises(vf.ShapeError, match="returned None for input 0"):
        ReturnsNone()(a).sum().backward()


def test_none_is_fine_for_an_input_that_needs_no_grad():
    a = Variable(np.ones(2), requires_grad=False)
    w = Variable(np.ones(2))
    out = (ReturnsNone()(a) * w).sum()
    out.backward()
    assert w.grad.tolist() == [2.0, 2.0]


def test_event_log_shows_a_leafs_gradient_before_its_hooks_as_documented():
    x = Variable(np.ones(2))
    x.register_hook("double", lambda g: g * 2)
    log = EventLog()
    (x * 3).sum().backward(recorder=log)
    (accumulated,) = [e for e in log.events if e.kind == "accumulated"]
    assert accumulated.details["grad_output"][0].tolist() == [3.0, 3.0]  # what the engine handed over
    assert x.grad.tolist() == [6.0, 6.0]  # what the hook made of it


class DetailCounter:
    """A recorder that counts the items in every tuple, list and dict the engine hands it."""

    def __init__(self) -> None:
        self.items = 0

    def record(self, kind: str, function: object, **details: object) -> None:
        self.items += sum(len(v) for v in details.values() if isinstance(v, (tuple, list, dict)))


def test_a_recorder_costs_the_size_of_the_graph_not_its_square():
    """No event copies the ready stack: after Concat's backward, n leaves wait on it at once."""

    def items_told(n: int) -> int:
        counter = DetailCounter()
        vf.cat([Variable(np.ones(1)) for _ in range(n)], 0).sum().backward(recorder=counter)
        return counter.items

    small, large = items_told(200), items_told(800)
    assert large <= 4.5 * small  # 4x the leaves: 4x the items; the stack copied per event made it 16x


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_a_backward_that_stops_part_way_names_the_leaves_it_already_changed():
    a, b, c, w = (Variable(np.ones(n)) for n in (2, 2, 3, 3))
    hb = b * 3
    hb.register_hook("fails", lambda g: 1 / 0)
    y = (a * 2 + hb).sum() + (c * w).sum()
    with pytest.raises(ZeroDivisionError) as caught:
        y.backward()
    # The stack ran c * w's branch (leaves c and w) first; the hook stopped the pass before a and b.
    assert a.grad.tolist() == [0, 0] and b.grad.tolist() == [0, 0] and c.grad.tolist() == [1, 1, 1]
    (note,) = caught.value.__notes__
    assert note.startswith("backward stopped part-way, after 2 leaf Variables (shape (3,), (3,)) had added")
    assert "zero their .grad" in note


def test_a_backward_that_fails_before_any_leaf_adds_no_note():
    x = Variable(np.ones(2))
    h = x * 2
    h.register_hook("fails", lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError) as caught:
        h.sum().backward()
    assert not getattr(caught.value, "__notes__", None) and x.grad.tolist() == [0, 0]
