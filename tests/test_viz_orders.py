"""Four backward orders on one graph: same gradients, different visits; naive recursion double-counts."""

import numpy as np
import pytest
from exercises.ch03 import MUL_NO_SUM

import varfunc as vf
from varfunc.engine import EventLog, ExecutionEngine
from varfunc.viz import ORDERINGS, GraphView, compare_orders, naive_recursive_backward, replay_order


def chain():
    """x; a = x*2 (#1); b = a*3 (#2); c = b*4 (#3); d = a + c (#4); e = x + 1 (#5); (d*e).sum() (#6, #7)."""
    x = vf.Variable(np.array([1.0, 2.0]))
    a = x * 2
    d = a + (a * 3) * 4
    return (d * (x + 1)).sum(), {"x": x}


# Derived by hand (see the docstring of varfunc.viz.orders for each rule). Generations: x 0,
# MulConstant#1 1, #2 2, #3 3, Add#4 4, AddConstant#5 1, Mul#6 5, Sum#7 6.
EXPECTED = {
    "stack": [
        "Sum#7",
        "Mul#6",
        "AddConstant#5",
        "Add#4",
        "MulConstant#3",
        "MulConstant#2",
        "MulConstant#1",
        "x",
    ],
    "fifo": [
        "Sum#7",
        "Mul#6",
        "Add#4",
        "AddConstant#5",
        "MulConstant#3",
        "MulConstant#2",
        "MulConstant#1",
        "x",
    ],
    "generation": [
        "Sum#7",
        "Mul#6",
        "Add#4",
        "MulConstant#3",
        "MulConstant#2",
        "MulConstant#1",
        "AddConstant#5",
        "x",
    ],
    "topo": [
        "Sum#7",
        "Mul#6",
        "AddConstant#5",
        "Add#4",
        "MulConstant#3",
        "MulConstant#2",
        "MulConstant#1",
        "x",
    ],
}


def test_four_orders_same_gradients_different_visits():
    comparison = compare_orders(chain)
    assert list(comparison.results) == list(ORDERINGS)
    for order, visits in EXPECTED.items():
        assert comparison[order].visits == visits, order
        assert np.allclose(comparison[order].leaf_grads["x"], [78.0, 130.0])  # 26 (2x + 1)
    assert comparison.agree and comparison.orders_differ
    assert str(comparison).endswith("gradients agree: yes; visit orders differ: yes")


@pytest.mark.parametrize("order", ["stack", "fifo"])
def test_replayed_engine_orders_match_the_real_engine(order):
    loss, params = chain()
    replayed = replay_order(loss, order, params=params)  # first: the replay must not need a backward
    log = EventLog()
    loss.backward(engine=ExecutionEngine(order), recorder=log)
    view = GraphView(loss, params)  # names the real engine's Functions, independently of the replay
    assert [view.name(fn) for fn in log.visit_order()] == replayed.visits == EXPECTED[order]


def test_compare_orders_leaves_the_graph_alone():
    loss, params = chain()
    compare_orders(loss, params=params)
    assert np.array_equal(params["x"].grad, [0.0, 0.0])  # nothing accumulated into .grad


def reused():
    a = vf.Variable(1.0)
    b = a + a
    return b + b, {"a": a}


def test_reused_intermediate_naive_recursion_double_counts():
    comparison = compare_orders(reused)
    for result in comparison.results.values():
        assert result.leaf_grads["a"].item() == 4.0  # dc/da = 2 * 2
        assert result.visits == ["Add#2", "Add#1", "a"]
    loss, params = reused()
    naive = naive_recursive_backward(loss, params=params)
    # c sends 1 twice to b (b holds 2); b is then entered once per use and each time sends all it holds
    assert naive.visits == ["Add#2", "Add#1", "a", "a", "Add#1", "a", "a"]
    assert naive.leaf_grads["a"].item() == 8.0


def test_unknown_order():
    with pytest.raises(ValueError, match="order must be one of"):
        replay_order(chain()[0], "random")


def wide():
    x, y = vf.Variable(np.array([1.0, 2.0])), vf.Variable(np.array([3.0, -1.0]))
    a = x * y
    b = a + x
    return ((b * a) + y.exp() + (a - b)).sum(), {"x": x, "y": y}


@pytest.mark.parametrize("make", [chain, reused, wide])
def test_topo_is_micrographs_recursive_order(make):
    from varfunc.viz.orders import _Replay  # the reference walks the same edges

    loss, params = make()
    replay = _Replay(loss, None, params, "test")
    topo, visited = [], set()

    def build_topo(fn):  # micrograd's recursion, as the reference
        if fn not in visited:
            visited.add(fn)
            for e in replay.needed_edges(fn):
                build_topo(e.source)
            topo.append(fn)

    build_topo(replay.root)
    view = GraphView(loss, params)
    assert replay_order(loss, "topo", params=params).visits == [view.name(fn) for fn in reversed(topo)]


def test_every_order_replays_a_chain_deeper_than_the_recursion_limit():
    x = vf.Variable(np.array([1.0, 2.0]))
    y = x
    for _ in range(3000):
        y = y * 1.001
    comparison = compare_orders(y.sum(), params={"x": x})
    for result in comparison.results.values():
        np.testing.assert_allclose(result.leaf_grads["x"], [1.001**3000] * 2)


def test_replays_refuse_what_backward_refuses():
    volatile = vf.Variable(np.ones(2), volatile=True)
    with pytest.raises(vf.BackwardError, match="volatile"):
        compare_orders(volatile)
    c = vf.Variable(np.ones(2), requires_grad=False)
    with pytest.raises(vf.BackwardError, match="doesn't require grad"):
        compare_orders((c * 2).sum())
    x = vf.Variable(np.ones(2))
    with pytest.raises(
        vf.BackwardError, match=r"^replay_order: .*only on a scalar.*replay_order\(loss, gradient="
    ):
        replay_order(x * 2)  # no seed for a Variable of two elements: named for the call, not backward
    with pytest.raises(vf.ShapeError, match=r"^naive_recursive_backward: the gradient has shape \(3,\)"):
        naive_recursive_backward(x * 2, gradient=np.ones(3))
    with pytest.raises(TypeError, match="compare_orders: needs a loss Variable.*got ndarray"):
        compare_orders(np.ones(2))
    with pytest.raises(TypeError, match="compare_orders: needs a loss Variable.*got list"):
        compare_orders(lambda: [(x * 2).sum()])  # before: 'list' object has no attribute 'backward'
    for orders in ("stack", ()):  # before: "got 's'", and a comparison whose str() raised
        with pytest.raises(ValueError, match=r"compare_orders: orders is a tuple of names"):
            compare_orders((x * 2).sum(), orders=orders)


def test_replays_say_they_skip_hooks_and_leave_out_leaves_frozen_after_forward():
    """Before: 'gradients agree: yes' with x=[3] where backward() gives [6], and a gradient for a
    leaf whose .grad backward leaves alone."""
    x, b = vf.Variable(np.ones(1)), vf.Variable(np.ones(1))
    h = x * 3
    h.register_hook("double", lambda g: g * 2)
    loss = (h + b).sum()
    b.requires_grad = False  # frozen after forward
    text = str(compare_orders(loss, orders=("stack", "fifo"), params={"x": x, "b": b}))
    assert "the graph has hooks, which these replays do not run: backward() runs them" in text
    assert "grad x = [3]" in text and "grad b" not in text
    loss.backward()
    assert x.grad.tolist() == [6.0] and b._grad is None
    assert "hooks" not in str(compare_orders((x * 3).sum(), orders=("stack",)))


def test_the_seed_is_checked_and_cast_as_backward_does():
    x = vf.Variable(np.array([1.0, 2.0]))
    result = replay_order(x * 3, gradient=vf.Variable(np.array([1.0, 10.0])), params={"x": x})
    assert np.array_equal(result.leaf_grads["x"], [3.0, 30.0])


def test_naive_recursion_too_deep_for_python_says_so():
    x = vf.Variable(np.array([1.0]))
    y = x
    for _ in range(1500):
        y = y * 1.0
    with pytest.raises(RecursionError, match="naive recursion: the graph is deeper than Python's recursion"):
        naive_recursive_backward(y, params={"x": x})
    with pytest.raises(RecursionError, match="naive recursion: more than 50 visits"):
        naive_recursive_backward(y, max_visits=50)


class _Double(vf.Function):
    """A student's Function (defined outside the kit) whose backward writes into its gradient."""

    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        grad_output *= 2
        return grad_output


def _students_mul_without_the_reduction() -> type:
    """Chapter 03's wrong answer that forgets to sum its broadcast gradient back (written in a cell)."""
    namespace = {"Function": vf.Function, "np": np}
    exec(MUL_NO_SUM, namespace)  # noqa: S102 - the test's own source
    return namespace["Mul"]


def test_replays_check_a_students_backward_as_the_engine_does():
    """The replays called backward directly: a gradient of the wrong shape was broadcast into the
    leaf's "grad" and an in-place write changed the caller's seed and doubled a shared gradient."""
    seed = np.array([1.0])
    with pytest.raises(vf.VarfuncError, match="backward of _Double.* wrote into a read-only array"):
        replay_order(_Double()(vf.Variable(np.array([1.0]))), "stack", gradient=seed)
    assert seed.tolist() == [1.0]

    def broadcast():
        p, q = vf.Variable(np.ones((2, 3))), vf.Variable(np.array([1.0, 2.0, 3.0]))
        return _students_mul_without_the_reduction()()(p, q).sum(), {"p": p, "q": q}

    loss, _ = broadcast()
    with pytest.raises(vf.ShapeError) as engine_error:
        loss.backward()
    for order in ORDERINGS:
        with pytest.raises(vf.ShapeError) as replay_error:
            replay_order(broadcast()[0], order)
        assert str(replay_error.value) == str(engine_error.value)
