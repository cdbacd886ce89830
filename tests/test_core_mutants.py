"""Rules of the core that a mutation audit found no other test pinning down.

Each test below fails if one token of varfunc/engine.py, function.py, leaf.py or variable.py
changes in a way that the rest of the suite let through: the engine run without a recorder, a
Variable wrapped in a Variable, a float output marked non-differentiable, a None kept by
save_for_backward, an output that would share its input's memory.
"""

import numpy as np
import pytest

import varfunc as vf
from varfunc import ExecutionEngine, Function, Variable
from varfunc.functions import CpuTransfer

# --- the engine and the Leaf ---------------------------------------------------------------------


@pytest.mark.parametrize("order", ["stack", "fifo"])
def test_an_engine_called_directly_needs_no_recorder(order):
    x = Variable(np.array([1.0, 2.0, 3.0]))
    y = (x * x).sum()
    ExecutionEngine(order=order).run_backward(y, np.ones_like(y.data))
    np.testing.assert_allclose(x.grad, 2 * x.data)


@pytest.mark.parametrize("flags", [{"requires_grad": False}, {"volatile": True}])
def test_a_variable_is_not_wrapped_in_another_variable(flags):
    # A Variable that needs no grad converts to its own array: wrapping it would make a second leaf
    # sharing its data, so that an update of one would silently change the other
    inner = Variable(np.ones(2), **flags)
    with pytest.raises(vf.DTypeError, match="got a Variable"):
        Variable(inner)


def test_a_leaf_is_not_an_op_and_refuses_to_be_called():
    x = Variable(np.ones(2))
    with pytest.raises(NotImplementedError, match="never called"):
        x.creator(x)


# --- Function: outputs, non-differentiable outputs, saved tensors ---------------------------------


class ClampWithMask(Function):
    """max(x, 0), and the float mask of where x > 0, which is marked non-differentiable."""

    def forward(self, x):
        mask = (x > 0).astype(x.dtype)
        self.mark_non_differentiable(mask)
        self.save_for_backward(mask)
        return x * mask, mask

    def backward(self, grad_values, grad_mask):
        assert grad_mask is None  # nothing may send a gradient to a non-differentiable output
        (mask,) = self.saved_tensors
        return grad_values * mask


def test_a_float_output_marked_non_differentiable_does_not_require_grad():
    x = Variable(np.array([-1.0, 2.0, 3.0]))
    values, mask = ClampWithMask()(x)
    assert values.requires_grad and not mask.requires_grad
    with pytest.raises(vf.BackwardError, match="not differentiable"):
        mask.backward(np.ones(3))


def test_a_float_output_marked_non_differentiable_gets_no_gradient_when_used():
    x = Variable(np.array([-1.0, 2.0, 3.0]))
    values, mask = ClampWithMask()(x)
    (values * 3 + mask * 5).sum().backward()  # the mask's branch sends nothing back
    assert x.grad.tolist() == [0.0, 3.0, 3.0]


class SavesNoneBetweenItsInputs(Function):
    """a * b, saving (a, None, b): v0.1 let save_for_backward hold None in a slot."""

    def forward(self, a, b):
        self.save_for_backward(a, None, b)
        return a * b

    def backward(self, grad_output):
        a, nothing, b = self.saved_tensors
        assert nothing is None
        return grad_output * b, grad_output * a


def test_save_for_backward_keeps_a_none_in_its_place():
    a = Variable(np.array([1.0, 2.0]))
    b = Variable(np.array([3.0, 4.0]))
    out = SavesNoneBetweenItsInputs()(a, b)
    assert len(out.creator.saved_tensors) == 3 and out.creator.saved_tensors[1] is None
    out.sum().backward()
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 2.0]


def test_an_op_that_returns_its_input_unchanged_still_gives_an_array_of_its_own():
    # CpuTransfer of data already on the CPU hands the input array back; the output must not share it
    x = Variable(np.array([1.0, 2.0]))
    y = CpuTransfer()(x)
    assert not np.shares_memory(y.data, x.data)
    y.add_(10.0)  # an in-place change to the output leaves the input as it was
    assert x.data.tolist() == [1.0, 2.0] and y.data.tolist() == [11.0, 12.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
