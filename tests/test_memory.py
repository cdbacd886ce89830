"""The graph is freed by reference counting alone: no Function/Variable or Leaf/Variable cycles."""

import gc
import weakref

import numpy as np
import pytest

from varfunc import Variable


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_graph_and_saved_arrays_are_freed_after_backward(no_gc):
    x = Variable(np.ones(1000))
    h = x
    functions = []
    for _ in range(4):
        h = (h * 2).exp().tanh()  # Exp and Tanh save their outputs: v0.1.3's cycle
        tanh = h.creator
        exp = tanh.previous_functions[0][0]
        functions += [weakref.ref(f) for f in (tanh, exp, exp.previous_functions[0][0])]
    saved = [weakref.ref(f()._saved[0][0]) for f in functions if f()._saved]
    assert len(functions) == 12 and len(saved) == 8  # every Exp and Tanh saved its output
    del tanh, exp
    loss = h.sum()
    loss.backward()
    del h, loss
    assert all(ref() is None for ref in functions)
    assert all(ref() is None for ref in saved)
    assert x.grad.shape == (1000,)


def test_a_leaf_variable_is_freed_when_the_user_drops_it(no_gc):
    x = Variable(np.ones(3))
    leaf = weakref.ref(x.creator)
    variable = weakref.ref(x)
    del x
    assert variable() is None and leaf() is None


def test_a_graph_that_outlives_its_leaf_still_runs_backward(no_gc):
    x = Variable(np.ones(3))
    y = (x * 2).sum()
    ref = weakref.ref(x)
    del x
    assert ref() is None
    y.backward()  # nothing to accumulate into, but no error either


def test_volatile_results_hold_no_graph(no_gc):
    x = Variable(np.ones(3), volatile=True)
    y = x * 2
    assert y.creator is None
