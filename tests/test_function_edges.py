"""Custom Functions and hooks at their edges: outputs that share an array, in-place forwards that fail
after writing, hooks that return replacements, leaves frozen after forward, forwards that return
the wrong kind of thing. Each case once gave a wrong gradient or an unclear error."""

import warnings

import numpy as np
import pytest

from varfunc import BackwardError, DTypeError, Function, InplaceError, InplaceFunction, VarfuncError, Variable


class SameArrayTwice(Function):
    def forward(self, a):
        y = a * 2
        return y, y

    def backward(self, g0, g1):
        return 2 * ((0 if g0 is None else g0) + (0 if g1 is None else g1))


def test_an_array_returned_twice_gives_two_outputs_that_own_their_memory():
    x, w = Variable(np.ones(3)), Variable(np.full(3, 3.0))
    o0, o1 = SameArrayTwice()(x)
    z = (o1 * w).sum()
    o0.add_(1)  # before: this changed o1 too, and Mul's saved o1 did not notice
    np.testing.assert_array_equal(o1.data, [2.0, 2.0, 2.0])
    z.backward()
    np.testing.assert_array_equal(w.grad, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(x.grad, [6.0, 6.0, 6.0])


def test_an_in_place_op_that_fails_after_writing_still_counts_as_a_change():
    x, w = Variable(np.array([1.0, 2.0])), Variable(np.array([1.0, 1.0]))
    h = x * 1
    z = (h * w).sum()  # Mul saved h
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        h.div_(0.0)  # NumPy writes inf, then raises
    assert np.isinf(h.data).all()
    with pytest.raises(InplaceError, match="saved tensor 0"):
        z.backward()  # before: w.grad = [inf, inf], silently


class DirtyTwice(Function):
    def forward(self, a):
        self.mark_dirty(a)
        a *= 2
        return a, a

    def backward(self, g0, g1):
        return 2 * g0


class MarksItsChange(Function):
    def forward(self, a):
        a += 1
        self.mark_dirty(a)
        return a


def test_an_in_place_forward_that_returns_its_input_twice_is_refused():
    h = Variable(np.ones(2)) * 1
    with pytest.raises(
        VarfuncError, match="DirtyTwice: forward marked an input dirty .* returned it 2 times"
    ):
        DirtyTwice()(h)
    np.testing.assert_array_equal(h.data, [1.0, 1.0])  # a Function of ours: put back (was [2, 2])


def test_a_marked_change_to_a_leaf_that_requires_grad_is_refused_and_put_back():
    x = Variable(np.ones(3), requires_grad=True)
    with pytest.raises(InplaceError, match="MarksItsChange: forward changed a leaf Variable"):
        MarksItsChange()(x)
    np.testing.assert_array_equal(x.data, [1.0, 1.0, 1.0])  # before: [2, 2, 2], the error said otherwise
    h = x * 1
    assert MarksItsChange()(h) is h and h._version == [1]  # allowed on a non-leaf: the same Variable
    np.testing.assert_array_equal(h.data, [2.0, 2.0, 2.0])


def test_a_hook_may_return_a_numpy_scalar_for_a_0d_gradient():
    x = Variable(np.array([1.0, 2.0]))
    loss = (x * x).sum()
    loss.register_hook("double", lambda g: g * 2)  # 0-d array * 2 is a NumPy scalar
    loss.backward()
    np.testing.assert_array_equal(x.grad, [4.0, 8.0])


def test_a_function_hook_may_replace_the_gradients_backward_returned():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 3
    h.creator.register_hook("tenfold", lambda grad_input, grad_output: tuple(g * 10 for g in grad_input))
    h.sum().backward()
    np.testing.assert_array_equal(x.grad, [30.0, 30.0])  # torch's grad_fn hooks do the same
    y = x * 3
    y.creator.register_hook("list", lambda grad_input, grad_output: [g * 10 for g in grad_input])
    with pytest.raises(VarfuncError, match=r"returned a list; a Function hook returns None or a tuple of 1"):
        y.sum().backward()


def test_a_leaf_frozen_after_forward_gets_no_gradient():
    x, w = Variable(np.array([1.0, 2.0])), Variable(np.array([3.0, 4.0]))
    y = (x * w).sum()
    x.requires_grad = False
    y.backward()
    assert x._grad is None  # as torch leaves it
    np.testing.assert_array_equal(w.grad, [1.0, 2.0])


class NoInputs(Function):
    def forward(self):
        return np.ones(2)


class Returns(Function):
    def __init__(self, value):
        self.value = value

    def forward(self, a):
        return self.value(a)


def test_forward_errors_name_the_function():
    with pytest.raises(VarfuncError, match="NoInputs was called with no inputs"):
        NoInputs()()
    x = Variable(np.ones(2))
    for value, got in [
        (lambda a: None, "a NoneType"),
        (lambda a: Variable(a), r"a Variable \(return its .data\)"),
        (lambda a: {"y": a}, "a dict"),
    ]:
        with pytest.raises(DTypeError, match=f"Returns.forward returned {got}; forward returns an array"):
            Returns(value)(x)


def test_backward_from_an_integer_output_says_why():
    _, indices = Variable(np.array([[1.0, 3.0], [2.0, 0.0]])).max(1)
    with pytest.raises(BackwardError, match=r"is not differentiable \(integer or boolean data: indices"):
        indices.backward(np.ones(2))


def _doubles_in_place(grad):
    grad *= 2


def test_a_hook_that_changes_its_gradient_in_place_is_an_error_not_a_leak():
    # Add hands one array to both branches; v's hook doubling it in place made x's gradient 20, not 2.
    x, y = Variable(np.ones(3)), Variable(np.ones(3))
    u, v = x * 2, y * 3
    v.register_hook("double", _doubles_in_place)
    changed = r"hook 'double' on output 0 of MulConstant\(3\) wrote into a read-only array"
    with pytest.raises(VarfuncError, match=changed):
        (u + v).sum().backward()


def test_a_hook_on_the_root_cannot_change_the_callers_seed():
    x = Variable(np.ones(2))
    s = x * 1
    s.register_hook("double", _doubles_in_place)
    seed = np.array([1.0, 2.0])
    with pytest.raises(VarfuncError, match="return a new array \\(grad \\* 2, not grad \\*= 2\\)"):
        s.backward(seed)
    np.testing.assert_array_equal(seed, [1.0, 2.0])
    assert seed.flags.writeable


def test_a_leaf_hook_and_a_function_hook_get_read_only_gradients():
    x = Variable(np.ones(2))
    x.register_hook("double", _doubles_in_place)
    with pytest.raises(VarfuncError, match="hook 'double' on output 0 of Leaf"):
        (x * 3).sum().backward()

    def zero_first_input(grad_input, grad_output):
        grad_input[0][...] = 0

    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    s = a + b
    s.creator.register_hook("zero", zero_first_input)
    with pytest.raises(
        VarfuncError,
        match=r"hook 'zero' on Add\(\) wrote into a read-only array.*return a new tuple of gradients",
    ):
        s.sum().backward()


def test_hooks_still_see_one_array_where_backward_returned_one_and_may_return_it():
    seen = []
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    s = a + b
    s.creator.register_hook("same", lambda gi, go: seen.append((gi[0] is gi[1], gi[0] is go[0])))
    a.register_hook("as is", lambda grad: grad)
    s.backward(np.array([1.0, 2.0]))
    assert seen == [(True, True)]
    a.grad += 1  # the returned read-only view did not become a read-only .grad
    np.testing.assert_array_equal(a.grad, [2.0, 3.0])
    s.backward(np.array([1.0, 2.0]))  # and a second backward still adds into it
    np.testing.assert_array_equal(a.grad, [3.0, 5.0])


def test_a_hooks_own_value_error_is_not_reworded():
    def fails(grad):
        raise ValueError("my own check")

    x = Variable(np.ones(2))
    (h := x * 2).register_hook("fails", fails)
    with pytest.raises(ValueError, match="^my own check$"):
        h.sum().backward()


class ScalesInPlace(Function):
    """A student's mistake: backward changes the gradient it was handed."""

    def forward(self, a):
        return a * 3

    def backward(self, grad_output):
        grad_output *= 3
        return grad_output


class PassesOn(Function):
    def forward(self, a):
        return a + 0

    def backward(self, grad_output):
        return grad_output


def test_a_backward_of_ours_that_writes_into_grad_output_is_an_error_not_a_leak():
    # Add hands one array to u and v; ScalesInPlace's write tripled x's gradient too (3, not 1).
    x, y = Variable(np.ones(2)), Variable(np.ones(2))
    u, v = x * 1, ScalesInPlace()(y)
    with pytest.raises(VarfuncError, match=r"backward of ScalesInPlace\(\) wrote into a read-only array"):
        (u + v).backward(np.ones(2))


def test_only_functions_written_outside_the_kit_get_read_only_gradients():
    from varfunc.functions import basic_ops, blas

    assert ScalesInPlace.outside_the_kit and PassesOn.outside_the_kit
    assert not basic_ops.Mul.outside_the_kit and not blas.Matmul.outside_the_kit
    x = Variable(np.ones(3))
    PassesOn()(x).sum().backward()
    x.grad += 1  # the read-only view it passed on did not become a read-only .grad
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 2.0])


class AddsOneInPlace(Function):
    """A student's mistake: forward changes its input without mark_dirty."""

    def forward(self, a):
        a += 1
        return a

    def backward(self, grad_output):
        return grad_output


class AddsOneMarked(Function):
    def forward(self, a):
        self.mark_dirty(a)
        a += 1
        return a

    def backward(self, grad_output):
        return grad_output


def test_a_forward_of_ours_that_changes_an_input_unmarked_is_refused_and_undone():
    w, x = Variable(np.array([1.0, 2.0])), Variable(np.array([3.0, np.nan]), requires_grad=False)
    h = w * x  # Mul saves x: before, w.grad came out as [4, nan], from the changed x, silently
    with pytest.raises(
        InplaceError,
        match=r"AddsOneInPlace\(\): forward changed input 0 \(shape \(2,\)\) in place without mark_dirty",
    ):
        AddsOneInPlace()(x)
    np.testing.assert_array_equal(x.data, [3.0, np.nan])
    assert x._version == [0]
    h.sum().backward()
    np.testing.assert_array_equal(w.grad, [3.0, np.nan])


def test_a_forward_of_ours_may_change_an_input_it_marks_dirty_or_leave_nan_as_it_was():
    x = Variable(np.array([1.0, np.nan]), requires_grad=False)
    y = AddsOneMarked()(x)
    assert y is x and x._version == [1]
    np.testing.assert_array_equal(x.data, [2.0, np.nan])
    z = PassesOn()(x)  # reads only: NaN compares equal to itself here
    np.testing.assert_array_equal(z.data, [2.0, np.nan])


class MasksItsSavedInput(Function):
    """A student's mistake: backward writes into the array it saved, the input Variable's own data."""

    def forward(self, a):
        self.save_for_backward(a)
        return a.clip(min=0)

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        a[a < 0] = 0
        return grad_output * (a > 0)


def test_a_backward_of_ours_cannot_write_into_what_it_saved():
    x = Variable(np.array([-1.0, 2.0]))
    with pytest.raises(
        VarfuncError, match=r"backward of MasksItsSavedInput\(\) wrote into a read-only array"
    ):
        MasksItsSavedInput()(x).sum().backward()
    np.testing.assert_array_equal(x.data, [-1.0, 2.0])  # before: [0, 2], with no error
    h = Variable(np.array([1.0, -2.0])) * 1
    mul = h * h
    assert mul.creator.saved_tensors[0] is h.data  # the kit's own ops hand back the arrays themselves


class AddsIntoAZeroesB(InplaceFunction):
    """Marks a dirty, but also zeroes b, which it does not mark."""

    def forward(self, a, b):
        a += b
        b[...] = 0
        self.mark_dirty(a)
        return a

    def backward(self, grad_output):
        return grad_output, grad_output


class WritesThenFails(Function):
    def forward(self, a):
        a -= a.max()  # the start of a softmax...
        raise IndexError("...and a bug further on")


class Reshapes(Function):
    def forward(self, a):
        with warnings.catch_warnings():  # NumPy 2.5 deprecates it; a student may still write it
            warnings.simplefilter("ignore", DeprecationWarning)
            a.shape = (-1,)
        return a * 2


class MarksAView(Function):
    def forward(self, a):
        flat = a.reshape(-1)
        flat += 1
        self.mark_dirty(flat)
        return flat


def test_a_refused_forward_of_ours_leaves_every_input_as_it_was():
    w = Variable(np.array([1.0, 1.0]))
    a, b = Variable(np.array([1.0, 2.0]), requires_grad=False), Variable(np.array([5.0, 5.0]))
    h = w * a  # Mul saves a: had a kept its change unnoticed, w.grad would be [6, 7]
    with pytest.raises(InplaceError, match=r"changed input 1 .*the inputs were put back"):
        AddsIntoAZeroesB()(a, b)
    np.testing.assert_array_equal(a.data, [1.0, 2.0])
    np.testing.assert_array_equal(b.data, [5.0, 5.0])
    h.sum().backward()
    np.testing.assert_array_equal(w.grad, [1.0, 2.0])

    x = Variable(np.array([1.0, 3.0]))
    with pytest.raises(IndexError, match="a bug further on"):
        WritesThenFails()(x)
    np.testing.assert_array_equal(x.data, [1.0, 3.0])  # before: [-2, 0], with version 0

    m = Variable(np.ones((2, 2)))
    with pytest.raises(InplaceError, match=r"Reshapes\(\): forward changed input 0 \(shape \(2, 2\)\)"):
        Reshapes()(m)
    assert m.shape == (2, 2)


def test_mark_dirty_on_a_view_of_an_input_keeps_its_own_error():
    with pytest.raises(VarfuncError, match=r"mark_dirty\(\) got an array that is not one of the inputs"):
        MarksAView()(Variable(np.ones((2, 2)), requires_grad=False))


class KeepsItsInputAsAnAttribute(Function):
    """torch's ctx.x = x, the v0.1 way, then a write through it in backward: a student's mistake."""

    def forward(self, a):
        self.a, self.pair, self.mask = a, (a, a[:1]), a > 0
        self.cache = {"a": a, "mask": self.mask}
        return a * 2

    def backward(self, grad_output):
        self.mask[...] = True  # its own array: still writable
        self.a[self.a < 0] = 0
        return grad_output * 2


def test_an_attribute_holding_an_input_is_read_only_in_backward():
    x = Variable(np.array([-1.0, 2.0]))
    y = KeepsItsInputAsAnAttribute()(x)
    assert not y.creator.pair[1].flags.writeable and isinstance(y.creator.pair, tuple)
    assert not y.creator.cache["a"].flags.writeable and y.creator.cache["mask"] is y.creator.mask
    with pytest.raises(VarfuncError, match=r"any attribute holding an input's or output's array"):
        y.sum().backward()
    np.testing.assert_array_equal(x.data, [-1.0, 2.0])  # before: [0, 2], with no error
