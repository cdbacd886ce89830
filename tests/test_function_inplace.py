"""In-place ops and mark_dirty: the same Variable returned, versions, refusals and what they leave."""

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, InplaceFunction, Variable


def test_in_place_ops_return_the_same_variable_and_keep_gradients_right():
    x = Variable(np.array([1.0, 2.0]))
    y = x * 2
    z = y.add_(1)
    assert z is y and y.data.tolist() == [3.0, 5.0]
    y.mul_(3).neg_()
    y.sum().backward()
    assert x.grad.tolist() == [-6.0, -6.0]


def test_in_place_on_a_leaf_that_requires_grad_is_refused_before_changing_it():
    x = Variable(np.array([1.0, 2.0]))
    with pytest.raises(vf.InplaceError, match="leaf Variable that requires grad"):
        x.add_(1)
    assert x.data.tolist() == [1.0, 2.0] and x._version[0] == 0


def test_in_place_on_a_leaf_that_needs_no_grad_is_allowed_and_stays_a_leaf():
    c = Variable(np.array([1.0, 2.0]), requires_grad=False)
    c.add_(1)
    assert c.data.tolist() == [2.0, 3.0] and isinstance(c.creator, vf.Leaf)


def test_in_place_on_an_intermediate_that_needs_no_grad_is_recorded():
    """It kept MulConstant as d's creator: the graph said MulConstant(2) made [3, 5] from [1, 2]."""
    c = Variable(np.array([1.0, 2.0]), requires_grad=False)
    d = c * 2
    multiply = d.creator
    d.add_(1)
    assert type(d.creator).__name__ == "AddConstant" and d.creator.previous_functions[0][0] is multiply
    assert d.data.tolist() == [3.0, 5.0] and not d.requires_grad
    assert (d * Variable(np.ones(2))).requires_grad, "a consumer that requires grad still works"


def test_in_place_change_of_a_saved_output_is_caught():
    x = Variable(np.array([0.5]))
    y = x * 1
    e = y.exp()
    e.add_(1)
    with pytest.raises(vf.InplaceError, match=r"Exp\(\): saved tensor 0.*version 0, now 1"):
        e.backward()


def test_in_place_change_of_a_saved_input_is_caught():
    x = Variable(np.array([0.5]))
    w = Variable(np.array([2.0]))
    h = x * 1
    out = h * w
    h.mul_(2)
    with pytest.raises(vf.InplaceError, match="modified by an in-place operation"):
        out.backward()


def test_relu_saves_its_output_and_threshold_its_input_as_pytorch_does():
    """PyTorch's ReluBackward0 keeps the result, ThresholdBackward0 the input: the same changes raise."""
    x = Variable(np.array([-1.0, 0.0, 2.0, np.nan]))
    h = x * 1
    r = h.relu()
    h.add_(5)  # the input: relu does not need it
    r.backward(np.ones(4))
    assert np.array_equal(x.grad, [0.0, 0.0, 1.0, 1.0]), "0 at 0, and a NaN passes its gradient"
    r = (x * 1).relu()
    r.add_(1)
    with pytest.raises(vf.InplaceError, match=r"Threshold\(threshold=0, value=0\): saved tensor 0"):
        r.backward(np.ones(4))
    h = x * 1
    t = vf.functions.Threshold(0.5, -1.0)(h)
    h.add_(1)
    with pytest.raises(vf.InplaceError, match=r"Threshold\(threshold=0.5, value=-1.0\): saved tensor 0"):
        t.backward(np.ones(4))


def test_in_place_result_that_does_not_fit_is_refused():
    y = Variable(np.ones(3)) * 1
    with pytest.raises(vf.ShapeError, match=r"Add: .*\(2, 3\).*\(3,\)"):
        vf.functions.Add(inplace=True)(y, Variable(np.ones((2, 3))))
    assert y.data.tolist() == [1.0, 1.0, 1.0]


def test_mul_and_div_in_place_take_numbers_only():
    y = Variable(np.ones(2)) * 1
    with pytest.raises(TypeError, match="mul_ only supports"):
        y.mul_(Variable(np.ones(2)))
    with pytest.raises(TypeError, match="div_ only supports"):
        y.div_(Variable(np.ones(2)))


@pytest.mark.parametrize("method", ["exp_", "tanh_", "sigmoid_", "neg_"])
def test_in_place_pointwise_ops_match_the_out_of_place_ones(method):
    data = np.array([-0.7, 0.2, 1.3])
    x1, x2 = Variable(data.copy()), Variable(data.copy())
    a = x1 * 1
    getattr(a, method)()
    b = getattr(x2 * 1, method.rstrip("_"))()
    np.testing.assert_allclose(a.data, b.data)
    (a * a).sum().backward()
    (b * b).sum().backward()
    np.testing.assert_allclose(x1.grad, x2.grad)


class AddInPlace(InplaceFunction):
    def forward(self, a, b):
        self.mark_dirty(a)
        a += b
        return a

    def backward(self, g):
        return g, g


def test_a_user_in_place_function_with_mark_dirty():
    x = Variable(np.array([1.0]))
    y = x * 1
    out = AddInPlace(inplace=True)(y, x)
    assert out is y and y.data.tolist() == [2.0]
    y.backward()
    assert x.grad.tolist() == [2.0]


def test_a_function_object_runs_once():
    mul = vf.functions.Mul()
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    mul(a, b)
    with pytest.raises(vf.VarfuncError, match=r"Mul\(\) was already called.*Mul\(\)\(\.\.\.\)"):
        mul(b, a)


class DoubleInPlaceReturningACopy(Function):
    """Changes its input in place, marks it dirty, but returns a new array: a misuse."""

    def forward(self, a):
        a *= 2
        self.mark_dirty(a)
        return a + 0

    def backward(self, g):
        return g * 2


class DoubleInPlace(Function):
    def forward(self, a):
        a *= 2
        self.mark_dirty(a)
        return a

    def backward(self, g):
        return g * 2


class DoubleInPlaceSavingAStranger(DoubleInPlace):
    def forward(self, a):
        result = super().forward(a)
        self.save_for_backward(a * 2)  # neither an input nor an output
        return result


def test_mark_dirty_on_an_input_that_is_not_returned_is_an_error_and_puts_the_input_back():
    w = Variable(np.array([1.0, 2.0]))
    h = w * 1.0
    z = h * w  # Mul saves h
    with pytest.raises(vf.VarfuncError, match="DoubleInPlaceReturningACopy: forward marked an input dirty"):
        DoubleInPlaceReturningACopy()(h)
    # A Function of ours: its input is put back, so its version stays (before: 1, and backward
    # raised an InplaceError for a change that had been undone)
    assert h.data.tolist() == [1.0, 2.0] and h._version[0] == 0
    z.sum().backward()  # the saved h is the one Mul saw: d(h * w)/dw = 2 w
    assert w.grad.tolist() == [2.0, 4.0]


def test_a_custom_function_cannot_change_a_leaf_that_requires_grad_in_place():
    x = Variable(np.array([1.0, 2.0]))
    leaf = x.creator
    with pytest.raises(vf.InplaceError, match="DoubleInPlace: forward changed a leaf Variable"):
        DoubleInPlace()(x)
    assert x.creator is leaf and x.data.tolist() == [1.0, 2.0]  # a Function of ours: put back
    assert x._version[0] == 0  # as it was, so its version stays


def test_a_bad_save_is_refused_before_the_dirty_input_joins_the_graph():
    w = Variable(np.array([1.0]))
    h = w * 1.0
    creator = h.creator
    with pytest.raises(vf.VarfuncError, match="argument 0 is neither an input nor an output"):
        DoubleInPlaceSavingAStranger()(h)
    assert h.creator is creator and h._version[0] == 0 and h.data.tolist() == [1.0]  # put back
    h.sum().backward()  # through the original graph only
    assert w.grad.tolist() == [1.0]


class InterruptedAfterWriting(Function):
    def forward(self, a):
        a *= 10
        self.mark_dirty(a)
        raise KeyboardInterrupt  # Ctrl-C in a slow forward, after it wrote


def test_ctrl_c_after_an_in_place_write_of_ours_puts_the_input_back():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 1.0
    s = (h * h).sum()  # Mul saves h
    with pytest.raises(KeyboardInterrupt):
        InterruptedAfterWriting()(h)
    assert h.data.tolist() == [1.0, 2.0] and h._version[0] == 0  # put back: nothing left to count
    s.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_ctrl_c_inside_the_kits_own_in_place_op_counts_the_write(monkeypatch):
    from varfunc.functions.basic_ops import MulConstant

    def interrupted(self, a):
        self.mark_dirty(a)
        a *= self.constant
        raise KeyboardInterrupt

    monkeypatch.setattr(MulConstant, "forward", interrupted)
    x = Variable(np.array([1.0, 2.0]))
    h = x + 0.0
    s = (h * h).sum()
    with pytest.raises(KeyboardInterrupt):
        h.mul_(3)
    assert h._version[0] == 1  # the kit's op wrote [3, 6] and is not undone: the version says so
    with pytest.raises(vf.InplaceError, match="saved tensor"):
        s.backward()


class InPlaceReturningNone(InplaceFunction):
    def forward(self, a):
        a += 10
        self.mark_dirty(a)
        return a, None  # a second output that is no array: refused


def test_an_in_place_function_whose_outputs_are_refused_gets_its_input_put_back():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 1.0
    creator = h.creator
    with pytest.raises(vf.DTypeError, match="InPlaceReturningNone.forward returned a NoneType"):
        InPlaceReturningNone(True)(h)
    assert h.data.tolist() == [1.0, 2.0] and h.creator is creator  # data and graph agree
    z = (h * h).sum()  # a graph built after the refusal is right
    z.backward()
    assert z.data == 5.0 and x.grad.tolist() == [2.0, 4.0]


class SavesThenFails(Function):
    calls = 0

    def forward(self, a):
        type(self).calls += 1
        self.save_for_backward(a)
        if type(self).calls == 1:
            raise ValueError("first call fails")
        return a * 2

    def backward(self, g):
        return g * 2


class MarksThenFails(Function):
    def forward(self, a):
        if getattr(self, "failed", False):
            return a * 2
        self.failed = True
        self.mark_dirty(a)
        raise ValueError("fails before writing")

    def backward(self, g):
        return g * 2


def test_a_function_called_again_after_its_forward_failed_carries_nothing_over():
    x = Variable(np.array([1.0, 2.0]))
    fn = MarksThenFails()
    with pytest.raises(ValueError, match="fails before writing"):
        fn(x * 1.0)
    h = x * 1.0
    y = fn(h)  # no stale mark_dirty: not "returned it 0 times", and h's version stays
    assert y.data.tolist() == [2.0, 4.0] and h._version[0] == 0
    twice = SavesThenFails()
    with pytest.raises(ValueError, match="first call fails"):
        twice(x * 1.0)
    out = twice(x * 3.0)
    out.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
