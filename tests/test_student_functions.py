"""A student's Function written in ways that used to go silently wrong: compared by value
(@dataclass), handing back np.matrix or complex gradients, marking an integer input dirty, failing
after marking an input dirty."""

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

from varfunc import (
    DTypeError,
    Function,
    InplaceError,
    InplaceFunction,
    ShapeError,
    VarfuncError,
    Variable,
    gradcheck,
)


@dataclass(unsafe_hash=True)
class HashedScale(Function):
    c: float = 3.0

    def forward(self, a):
        return a * self.c

    def backward(self, grad_output):
        return grad_output * self.c


@dataclass
class PlainDataclassScale(HashedScale):
    pass


@dataclass(eq=False)
class IdentityScale(Function):
    c: float = 3.0

    def forward(self, a):
        return a * self.c

    def backward(self, grad_output):
        return grad_output * self.c


@pytest.mark.parametrize("cls", [HashedScale, PlainDataclassScale])
def test_a_function_class_that_compares_by_value_is_refused(cls):
    """Before: two equal nodes were one key of the engine's counts, and x.grad came out [0, 0, 0]
    with no error (unsafe_hash), or backward raised 'unhashable type' (a plain @dataclass)."""
    x = Variable(np.ones(3))
    with pytest.raises(VarfuncError, match=rf"{cls.__name__} defines __eq__ .*@dataclass\(eq=False\)"):
        cls()(x)


def test_a_dataclass_with_eq_false_works():
    x = Variable(np.ones(3))
    IdentityScale()(IdentityScale()(x)).sum().backward()
    np.testing.assert_array_equal(x.grad, [9.0, 9.0, 9.0])


class Returns(Function):
    """2 a, whose backward hands back what make turns the right gradient into."""

    def __init__(self, make):
        self.make = make

    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        return self.make(grad_output * 2)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix: what a student might write
def test_an_np_matrix_gradient_becomes_an_array():
    """Before: the matrix flowed on, and Mul's g * b became a matrix product: x.grad [[12, 14], ...]."""
    x = Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    w = Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=False)
    y = Returns(np.asmatrix)(x) * w
    y.sum().backward()
    assert type(x.grad) is np.ndarray
    np.testing.assert_array_equal(x.grad, 2 * w.data)
    x.grad = None
    h = x * 1
    h.register_hook("as_matrix", np.asmatrix)
    (h * w).sum().backward()
    np.testing.assert_array_equal(x.grad, w.data)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda g: g + 1j, r"Returns\(\).backward returned, for input 0, a complex gradient \(complex128\)"),
        (lambda g: np.ma.masked_array(g, mask=g > 0), r"a masked array, whose masked elements count"),
    ],
)
def test_complex_and_masked_gradients_are_refused(make, message):
    """Before: the imaginary part was dropped with only NumPy's ComplexWarning (x.grad [0, 0] for
    a gradient of 1j * 1.4), and a masked array's hidden elements counted."""
    x = Variable(np.array([1.0, 2.0]))
    with pytest.raises(DTypeError, match=message):
        Returns(make)(x).sum().backward()
    h = x * 1
    h.register_hook("bad", make)
    with pytest.raises(DTypeError, match=r"a hook on output 0 of MulConstant\(1\) returned"):
        h.sum().backward()


class ComplexOut(Function):
    def forward(self, a):
        return a * 1j

    def backward(self, grad_output):
        return grad_output


def test_a_complex_output_is_refused_as_variable_refuses_complex_data():
    with pytest.raises(DTypeError, match=r"ComplexOut: forward gave an array of dtype complex128.*real"):
        ComplexOut()(Variable(np.ones(2)))


class AddsInPlace(Function):
    """a += b on an integer a (counts), marked dirty; b is a float that requires grad."""

    def __init__(self, second=None):
        self.second = second

    def forward(self, a, b):
        self.mark_dirty(a)
        a += np.round(b).astype(a.dtype)
        return (a, self.second) if self.second is not None else a

    def backward(self, grad_output):
        return None, np.zeros(2)


def test_an_integer_input_changed_in_place_still_requires_no_grad():
    """Before: it came back requiring grad, and its integer gradient reached backward (row 42)."""
    counts = Variable(np.array([1, 2])) * 1
    out = AddsInPlace()(counts, Variable(np.array([0.6, 1.4])))
    assert out is counts and not out.requires_grad


def test_an_output_refused_after_mark_dirty_leaves_the_graph_as_it_was():
    """Before: the input was already this Function's output, with output_ids None, and a later
    backward failed with TypeError: object of type 'NoneType' has no len()."""
    x = Variable(np.array([1.0, 2.0]))
    h = x * 1
    creator = h.creator
    with pytest.raises(VarfuncError, match="forward returned a str"):
        AddsInPlace(second="not an array")(h, Variable(np.array([0.6, 1.4])))
    assert h.creator is creator
    h.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_todays_static_method_style_is_refused_when_the_class_is_made():
    """Before: TypeError: forward() missing 1 required positional argument, at the first call."""
    with pytest.raises(
        TypeError, match=r"Modern: forward and backward are @staticmethods .*def forward\(self, a\)"
    ):

        class Modern(Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * 2


class ForgetsSuperInit(InplaceFunction):
    def __init__(self, scale):
        self.scale = scale  # no super().__init__(): inplace was never set

    def forward(self, a):
        return a * self.scale

    def backward(self, grad_output):
        return grad_output * self.scale


def test_an_inplace_function_without_super_init_runs_out_of_place():
    """Before: AttributeError: 'ForgetsSuperInit' object has no attribute 'inplace'."""
    x = Variable(np.array([1.0, 2.0]))
    ForgetsSuperInit(3.0)(x).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


Pair = namedtuple("Pair", "low high")


class ReturnsASequence(Function):
    def __init__(self, kind):
        self.kind = kind

    def forward(self, a):
        return self.kind(a * 1, a * 2)

    def backward(self, grad_low, grad_high):
        return grad_low + 2 * grad_high


@pytest.mark.parametrize("kind, name", [(lambda *xs: list(xs), "list"), (Pair, "Pair")])
def test_a_list_or_a_namedtuple_from_forward_is_refused(kind, name):
    """Before: NumPy stacked it into one Variable of shape (2, 3), and the error came later."""
    with pytest.raises(DTypeError, match=rf"forward returned a {name}, which NumPy would stack .*\(a, b\)"):
        ReturnsASequence(kind)(Variable(np.ones(3)))
    low, high = ReturnsASequence(lambda *xs: xs)(Variable(np.ones(3)))
    assert low.shape == high.shape == (3,)


class UsesBothGradients(Function):
    def forward(self, a):
        return a * 1, a * 2

    def backward(self, grad_low, grad_high):
        return grad_low + grad_high * 2  # grad_high is None when the second output is not used


def test_a_backward_that_fails_on_a_none_gradient_says_why():
    """Before: the raw TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'."""
    x = Variable(np.ones(3))
    low, _ = UsesBothGradients()(x)
    with pytest.raises(
        VarfuncError,
        match=r"backward of UsesBothGradients\(\) failed on None .*a gradient it was given is None",
    ):
        low.sum().backward()


class OverflowsInMath(Function):
    def forward(self, a):
        return a * math.exp(1000.0)

    def backward(self, grad_output):
        return grad_output


def test_an_overflow_that_is_not_a_cast_keeps_its_own_message():
    """Before: 'a number must fit the Variable's dtype ... astype(np.int64)', for math.exp's overflow."""
    with pytest.raises(OverflowError, match="math range error"):
        OverflowsInMath()(Variable(np.array([1, 2])))


def test_gradcheck_given_a_function_object_says_to_pass_a_lambda():
    with pytest.raises(TypeError, match=r"gradcheck\(lambda \*xs: IdentityScale\(\)\(\*xs\), inputs\)"):
        gradcheck(IdentityScale(), [np.ones(3)])


class MarksAView(Function):
    def forward(self, a):
        a[:2] += 1
        self.mark_dirty(a[:2])
        return a

    def backward(self, grad_output):
        return grad_output


def test_mark_dirty_given_a_view_names_its_shape_and_the_fix():
    with pytest.raises(
        VarfuncError, match=r"not one of the inputs \(shape \(2,\)\); mark the input array itself"
    ):
        MarksAView()(Variable(np.ones(3), requires_grad=False))


def test_a_function_hook_that_returns_a_wrong_shape_is_named_not_backward():
    """Before: 'MulConstant(2).backward returned a gradient of shape (2,)', though the hook did."""
    x = Variable(np.ones(3))
    y = x * 2
    y.creator.register_hook("shrinks", lambda grad_input, grad_output: (grad_input[0][:2],))
    with pytest.raises(
        ShapeError, match=r"hook 'shrinks' on MulConstant\(2\) returned a gradient of shape \(2,\)"
    ):
        y.sum().backward()


CACHE: dict = {}


class Cached(Function):
    """2 a, remembered by the input's bytes: the second call returns the very array of the first."""

    def forward(self, a):
        key = a.tobytes()
        if key not in CACHE:
            CACHE[key] = a * 2
        return CACHE[key]

    def backward(self, grad_output):
        return grad_output * 2


def test_an_output_forward_keeps_is_copied():
    """Before: y1 and y2 shared the cached array, and y1.mul_(5) changed y2 and the cache."""
    CACHE.clear()
    x = Variable(np.array([1.0, 2.0]), requires_grad=False)
    y1, y2 = Cached()(x), Cached()(x)
    y1.mul_(5)
    np.testing.assert_array_equal(y2.data, [2.0, 4.0])
    np.testing.assert_array_equal(next(iter(CACHE.values())), [2.0, 4.0])


class KeepsItsInput(Function):
    """x * x that keeps its input as an attribute, not through save_for_backward."""

    def forward(self, a):
        self.a = a
        return a * a

    def backward(self, grad_output):
        return 2 * self.a * grad_output


class KeepsACopy(KeepsItsInput):
    def forward(self, a):
        self.a = a.copy()
        return a * a


def test_an_input_kept_as_an_attribute_and_changed_in_place_is_an_error_not_a_wrong_gradient():
    x = Variable(np.array([1.0, 2.0, 3.0]))
    h = x * 1
    y = KeepsItsInput()(h)
    h.add_(1)  # backward would read 2 * (h + 1): x.grad [4, 6, 8] instead of [2, 4, 6]
    with pytest.raises(InplaceError, match=r"KeepsItsInput\(\): forward kept input 0 as an attribute"):
        y.sum().backward()
    assert x._grad is None
    z = KeepsItsInput()(x * 1)
    z.sum().backward()  # unchanged: it runs
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_an_input_copied_into_an_attribute_may_change_afterwards():
    x = Variable(np.array([1.0, 2.0, 3.0]))
    h = x * 1
    y = KeepsACopy()(h)
    h.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
