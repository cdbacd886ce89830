"""A Leaf keeps the first gradient it is handed as .grad; nobody else may hold that array.

The engine lets a Leaf keep a matrix product's fresh gradient without a copy (a 784 x 512 weight's
gradient is a 1.6 MB copy), and copies everything else on its way to a Leaf: the caller's seed, a
gradient passed through (Add returns one array twice), one a hook saw, one a custom Function kept.
Each test below would show a silently shared .grad if that rule were broken.
"""

import numpy as np
import pytest
from conftest import on_device

from varfunc import EventLog, Function, Variable
from varfunc.functions import Mm


def leaf(device, values):
    return Variable(on_device(device, np.asarray(values, dtype=np.float64)))


def test_a_leaf_keeps_a_matrix_products_gradient_uncopied(monkeypatch):
    returned = []
    backward = Mm.backward

    def spy(self, grad_output):
        grads = backward(self, grad_output)
        returned.append(grads)
        return grads

    monkeypatch.setattr(Mm, "backward", spy)
    x = Variable(np.ones((3, 4)), requires_grad=False)
    w = Variable(np.arange(8.0).reshape(4, 2))
    x.mm(w).sum().backward()
    assert w.grad is returned[0][1]
    np.testing.assert_allclose(w.grad, np.full((4, 2), 3.0))


def test_a_kept_gradient_is_summed_into_by_a_second_backward(device):
    x = Variable(on_device(device, np.ones((3, 4))), requires_grad=False)
    w = leaf(device, np.arange(8.0).reshape(4, 2))
    y = x.mm(w).sum()
    y.backward()
    first = w.grad
    y.backward()
    assert w.grad is first  # summed in place into the array the first backward left
    np.testing.assert_allclose(on_device("cpu", w.grad), np.full((4, 2), 6.0))


def test_add_passes_one_array_to_two_leaves_and_each_gets_its_own(device):
    a, b = leaf(device, [1.0, 2.0]), leaf(device, [3.0, 4.0])
    seed = on_device(device, np.array([1.0, 1.0]))
    (a + b).backward(seed)
    assert a.grad is not b.grad and a.grad is not seed and b.grad is not seed
    a.grad[0] = 100.0
    assert on_device("cpu", b.grad).tolist() == [1.0, 1.0]
    assert on_device("cpu", seed).tolist() == [1.0, 1.0]


def test_backward_on_a_leaf_does_not_keep_the_callers_seed(device):
    x = leaf(device, [1.0, 2.0])
    seed = on_device(device, np.array([5.0, 6.0]))
    x.backward(seed)
    x.backward(seed)
    assert x.grad is not seed
    assert on_device("cpu", seed).tolist() == [5.0, 6.0]
    assert on_device("cpu", x.grad).tolist() == [10.0, 12.0]


def test_a_gradient_a_leaf_hook_kept_is_not_changed_by_the_next_backward():
    x = Variable(np.ones((2, 3)), requires_grad=False)
    w = Variable(np.ones((3, 2)))
    kept = []
    w.register_hook("keep", kept.append)
    y = x.mm(w).sum()
    y.backward()
    y.backward()
    assert kept[0] is not w.grad
    np.testing.assert_allclose(kept[0], np.full((3, 2), 2.0))
    np.testing.assert_allclose(w.grad, np.full((3, 2), 4.0))


def test_a_gradient_a_function_hook_kept_is_not_changed_by_the_next_backward():
    x = Variable(np.ones((2, 3)), requires_grad=False)
    w = Variable(np.ones((3, 2)))
    product = x.mm(w)
    kept = []
    product.creator.register_hook("keep", lambda grad_input, grad_output: kept.append(grad_input[1]))
    y = product.sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(kept[0], np.full((3, 2), 2.0))


class ReturnsItsOwnArray(Function):
    """A custom Function whose backward hands back an array it keeps (it makes no promise)."""

    def forward(self, a):
        self.local = np.full(a.shape, 3.0)
        return a * 3.0

    def backward(self, grad_output):
        return self.local  # right only for a seed of ones; what matters here is who holds it


def test_an_array_a_custom_function_keeps_is_copied_into_grad():
    x = leaf("cpu", [1.0, 2.0])
    y = ReturnsItsOwnArray()(x)
    y.backward(np.ones(2))
    y.backward(np.ones(2))
    assert x.grad is not y.creator.local
    assert y.creator.local.tolist() == [3.0, 3.0]  # the second backward summed into x.grad only
    assert x.grad.tolist() == [6.0, 6.0]


def test_a_leaf_used_twice_by_matrix_products_gets_the_sum(device):
    x = Variable(on_device(device, np.ones((2, 3))), requires_grad=False)
    w = leaf(device, np.ones((3, 3)))
    (x.mm(w).mm(w)).sum().backward()
    expected = np.ones((3, 2)) @ np.ones((2, 3)) @ np.ones((3, 3)).T + (
        np.ones((2, 3)) @ np.ones((3, 3))
    ).T @ np.ones((2, 3))
    np.testing.assert_allclose(on_device("cpu", w.grad), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_kept_gradient_has_the_leafs_dtype(dtype):
    x = Variable(np.ones((2, 3), dtype=dtype), requires_grad=False)
    w = Variable(np.ones((3, 2), dtype=dtype))
    x.mm(w).sum().backward()
    assert w.grad.dtype == dtype


class PromisesNewArrays(Function):
    """A custom Function that sets the promise but breaks it in one of three ways."""

    backward_makes_new_arrays = True

    def __init__(self, how):
        self.how = how

    def forward(self, a, b):
        return a + b

    def backward(self, grad_output):
        if self.how == "passes its gradient through":
            return grad_output, grad_output * 1.0
        if self.how == "returns a view":
            both = np.stack([grad_output, grad_output])
            return both[0], both[1]
        fresh = grad_output * 1.0  # "returns one array twice"
        return fresh, fresh


@pytest.mark.parametrize("how", ["passes its gradient through", "returns a view", "returns one array twice"])
def test_a_broken_promise_of_new_arrays_still_gives_each_leaf_its_own(how):
    a, b = leaf("cpu", [1.0, 2.0]), leaf("cpu", [3.0, 4.0])
    seed = np.array([1.0, 1.0])
    PromisesNewArrays(how)(a, b).backward(seed)
    a.grad[0] = 100.0
    assert b.grad.tolist() == [1.0, 1.0]
    assert seed.tolist() == [1.0, 1.0]
    assert a.grad.base is None  # not a view into memory someone else holds


def test_a_function_hook_that_removes_itself_still_counts_as_a_witness():
    a, b = Variable(np.ones((2, 3))), Variable(np.ones((3, 4)))
    y = a.mm(b)
    kept = []

    def once(grad_input, grad_output):
        kept.append(grad_input)
        y.creator.remove_hook("once")

    y.creator.register_hook("once", once)
    y.backward(np.ones((2, 4)))
    assert not np.shares_memory(a.grad, kept[0][0]) and not np.shares_memory(b.grad, kept[0][1])


def test_the_event_log_keeps_copies_so_nothing_it_holds_becomes_grad():
    a, b = Variable(np.ones((2, 3))), Variable(np.ones((3, 4)))
    log = EventLog()
    a.mm(b).sum().backward(recorder=log)
    kept = [v for e in log.events for value in e.details.values() for v in _arrays(value)]
    assert kept and not any(np.shares_memory(a.grad, k) or np.shares_memory(b.grad, k) for k in kept)


def _arrays(value):
    if isinstance(value, np.ndarray):
        return [value]
    return [v for v in value if isinstance(v, np.ndarray)] if isinstance(value, tuple) else []


class ReturnsAViewForTheOtherInput(Function):
    backward_makes_new_arrays = True

    def forward(self, a, b):
        return a + b

    def backward(self, grad_output):
        fresh = grad_output * 1.0
        return fresh, fresh[...]  # the second is a view of the first


def test_an_array_returned_again_as_a_view_is_not_kept():
    x, y = leaf("cpu", [1.0, 2.0]), leaf("cpu", [3.0, 4.0])
    h = y * 1.0
    kept = []
    h.register_hook("keep", kept.append)
    ReturnsAViewForTheOtherInput()(x, h).backward(np.ones(2))
    assert not np.shares_memory(x.grad, kept[0])


class MmThatKeepsItsGradient(Mm):
    """Overrides backward without promising anything: the Mm promise must not carry over."""

    def backward(self, grad_output):
        a, b = self.saved_tensors
        self.kept = a.T @ grad_output
        return None, self.kept


def test_a_subclass_that_overrides_backward_does_not_inherit_the_promise():
    assert Mm.backward_makes_new_arrays and not MmThatKeepsItsGradient.backward_makes_new_arrays
    x, w = Variable(np.ones((2, 3)), requires_grad=False), Variable(np.ones((3, 2)))
    y = MmThatKeepsItsGradient()(x, w)
    y.backward(np.ones((2, 2)))
    assert not np.shares_memory(w.grad, y.creator.kept)
