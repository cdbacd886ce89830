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


def test_a_long_graph_holds_one_record_of_its_inputs_not_one_per_op():
    x = Variable(np.ones(3))
    y = x
    for _ in range(50):
        y = y * 2 + 1
    functions = [y.creator]
    while functions[-1].previous_functions[0][0] is not x.creator:
        functions.append(functions[-1].previous_functions[0][0])
    assert len(functions) == 100
    for field in ("needs_input_grad", "input_shapes", "input_dtypes"):
        assert len({id(getattr(f, field)) for f in functions}) == 1, field
    assert functions[0].input_shapes == ((3,),) and functions[0].input_dtypes == (np.dtype(float),)


def test_the_shared_records_stop_growing_when_shapes_never_repeat():
    from varfunc import function

    x = Variable(np.ones(function._SHARED_LIMIT + 100))
    for n in range(1, function._SHARED_LIMIT + 100):
        x[:n] * 2  # a new input shape each time
    assert len(function._SHARED) <= function._SHARED_LIMIT
    y = x[:5] * 2  # and what is shared after a fresh start is right
    assert y.creator.input_shapes == ((5,),)
