"""Python's other operators on a Variable (operators.py): augmented assignment in place, comparisons,
truth, abs; and the clear errors for bounds and dims that used to fail deep inside NumPy."""

import re

import numpy as np
import pytest

import varfunc as vf
from varfunc import DTypeError, InplaceError, ShapeError, Variable


def test_augmented_assignment_changes_the_variable_in_place():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 2
    alias = h
    h += 1
    h -= Variable(np.array([0.5, 0.5]), requires_grad=False)
    h *= 3
    h /= 2
    assert h is alias and h._version[0] == 4  # before: h was rebound four times, alias kept [2, 4]
    np.testing.assert_allclose(alias.data, [3.75, 6.75])
    h.sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, 3.0])  # d/dx of ((2x + 1 - 0.5) * 3) / 2


def test_augmented_assignment_on_a_parameter_is_refused_not_silently_a_new_variable():
    w = Variable(np.array([1.0, 2.0]))
    (w * w).sum().backward()
    before = w
    with pytest.raises(InplaceError, match=r"leaf Variable that requires grad .*w.data -= lr \* w.grad"):
        w -= 0.1 * w.grad  # before: w became a non-leaf, and every later w.grad read zeros
    assert w is before and w.is_leaf
    np.testing.assert_array_equal(w.data, [1.0, 2.0])
    with pytest.raises(DTypeError, match="mul_ only supports multiplication by a number"):
        h = w * 1
        h *= w


@pytest.mark.parametrize(
    "name, expected",
    [("eq", [False, True, False]), ("ne", [True, False, True]), ("lt", [True, False, False]),
     ("le", [True, True, False]), ("gt", [False, False, True]), ("ge", [False, True, True])],
)  # fmt: skip
def test_comparisons_give_boolean_variables_outside_the_graph(name, expected):
    import operator

    x = Variable(np.array([0.0, 1.0, 2.0]))
    compare = getattr(operator, name)
    for other in (1.0, np.ones(3), Variable(np.ones(3))):
        result = compare(x, other)
        assert isinstance(result, Variable) and result.dtype == np.bool_ and not result.requires_grad
        np.testing.assert_array_equal(result.data, expected)
    reflected = compare(np.ones(3), x)  # NumPy hands the comparison to the Variable, reflected
    assert isinstance(reflected, Variable)
    np.testing.assert_array_equal(reflected.data, compare(np.ones(3), x.data))


def test_a_comparison_selects_elements_and_their_gradient():
    x = Variable(np.array([0.0, 3.0, 0.0, 5.0]))
    picked = x[x > 0]  # before: x == 0 was False, and x[x == 0] picked nothing, silently
    np.testing.assert_array_equal(picked.data, [3.0, 5.0])
    (picked * 2).sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 2.0, 0.0, 2.0])
    np.testing.assert_array_equal(x[x == 0].data, [0.0, 0.0])


def test_variables_stay_hashable_by_identity():
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    assert {a: 1, b: 2}[b] == 2 and len({a, b}) == 2 and a in {a} and a in [a]


def test_truth_of_one_element_and_an_ambiguous_truth():
    assert bool(Variable(np.array(0.5)) > 0) and not bool(Variable(np.array([0.0])))
    with pytest.raises(ShapeError, match=r"bool\(\) of a Variable of shape \(2,\) is ambiguous"):
        bool(Variable(np.array([1.0, 0.0])))
    with pytest.raises(ShapeError, match="ambiguous"):
        assert Variable(np.ones(2)) in [Variable(np.ones(2))]  # as in torch: a list compares elementwise


def test_abs_plus_and_int():
    x = Variable(np.array([-2.0, 3.0]))
    y = abs(x)
    assert isinstance(y.creator, vf.functions.Abs)
    np.testing.assert_array_equal(y.data, [2.0, 3.0])
    assert +x is x
    assert int(Variable(np.array([2.7]))) == 2 and float(Variable(np.array(2.5))) == 2.5


def test_clamp_bounds_must_be_numbers():
    x = Variable(np.array([-1.0, 0.5, 2.0]))
    for bound in (Variable(np.zeros(3)), np.zeros((2, 3)), [0.0]):
        with pytest.raises(
            DTypeError, match=r"clamp: min must be a number, got a .*x.cmax\(low\).cmin\(high\)"
        ):
            x.clamp(min=bound)  # before: a bare NumPy TypeError, or a wrong-shaped gradient later
    np.testing.assert_array_equal(x.clamp(min=np.float32(0), max=1).data, [0.0, 0.5, 1.0])


def test_numpy_integers_are_dims_too():
    x = Variable(np.arange(6.0).reshape(2, 3))
    d = np.int64(1)
    assert x.sum(d).shape == (2,) and x.max(d)[0].shape == (2,) and x.softmax(d).shape == (2, 3)
    assert x.sum((np.int64(0), 1)).shape == ()
    with pytest.raises(ShapeError, match=r"got a Variable of shape \(2, 3\); .* cmax: x.cmax\(y\)"):
        x.max(x)  # before: the whole Variable printed in the message


# --- % and //: functions/modulo.py -----------------------------------------------------------------


def test_remainder_and_floor_division_round_as_python_does():
    a = np.array([7.5, -7.5, 7.5, -7.5])
    b = np.array([2.0, 2.0, -2.0, -2.0])
    x, y = Variable(a), Variable(b)
    np.testing.assert_array_equal((x % y).data, [1.5, 0.5, -0.5, -1.5])  # the divisor's sign
    np.testing.assert_array_equal(x.fmod(y).data, [1.5, -1.5, 1.5, -1.5])  # the dividend's, as C's fmod
    np.testing.assert_array_equal((x // y).data, [3.0, -4.0, -4.0, 3.0])
    np.testing.assert_array_equal((x // y * y + x % y).data, a)
    np.testing.assert_array_equal((x % 2).data, a % 2)
    np.testing.assert_array_equal((10 % y).data, 10 % b)
    np.testing.assert_array_equal((10 // y).data, 10 // b)
    assert type((x % 2).creator).__name__ == "RemainderConstant"
    assert type((x // y).creator).__name__ == "FloorDivide"


def test_remainder_gradients_are_one_and_minus_the_quotient():
    x = Variable(np.array([7.5, -7.5]))
    y = Variable(np.array([2.0, 2.0]))
    ((x % y) + x.fmod(y) + 3 * (x // y)).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])  # 1 from each remainder, 0 from //
    np.testing.assert_array_equal(y.grad, [-3.0 - 3.0, 4.0 + 3.0])  # -floor(x / y) - trunc(x / y)
    c = Variable(np.array([2.0, -3.0]))
    (7 % c).sum().backward()
    np.testing.assert_array_equal(c.grad, [-3.0, 3.0])  # -floor(7 / c)


def test_remainder_keeps_float32_and_integers():
    x = Variable(np.array([1.0, 2.5], dtype=np.float32))
    assert (x % 0.3).dtype == np.float32 and (0.3 % x).dtype == np.float32 and (x // 2).dtype == np.float32
    i = Variable(np.arange(6))
    np.testing.assert_array_equal((i % 4).data, [0, 1, 2, 3, 0, 1])
    assert (i // 4).dtype == np.int64 and not (i // 4).requires_grad


@pytest.mark.parametrize("op", [lambda i: i % 0, lambda i: i // 0, lambda i: 5 % i, lambda i: i.fmod(0)])
def test_integer_division_by_zero_is_refused(op):
    i = Variable(np.array([0, 1, 2]))
    with pytest.raises(ZeroDivisionError, match="integer division by zero .*int64.*x.double"):
        op(i)
    assert np.isnan((i.double() % 0).data).all()


@pytest.mark.parametrize("op", [lambda i: i.__imod__(0), lambda i: i.__ifloordiv__(0)])
def test_integer_division_by_zero_in_place_changes_nothing(op):
    """It is refused before the write: the version stays, so a Function that saved i still runs backward."""
    w = Variable(np.array([1.0, 2.0, 3.0]))
    i = Variable(np.array([5, 7, 9]))
    y = (w * i).sum()
    with pytest.raises(ZeroDivisionError):
        op(i)
    assert i._version[0] == 0 and i.data.tolist() == [5, 7, 9]
    y.backward()
    assert w.grad.tolist() == [5.0, 7.0, 9.0]


def test_remainder_and_floor_division_in_place():
    x = Variable(np.array([7.5, -7.5]))
    h = x * 1
    alias = h
    h %= 2
    assert h is alias and h._version[0] == 1
    np.testing.assert_array_equal(h.data, [1.5, 0.5])
    h.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])
    i = Variable(np.arange(6))
    i //= 4
    np.testing.assert_array_equal(i.data, [0, 0, 0, 0, 1, 1])
    with pytest.raises(DTypeError, match="int64 data"):
        i //= 2.5  # a float result does not fit: refused before any write
    np.testing.assert_array_equal(i.data, [0, 0, 0, 0, 1, 1])
    with pytest.raises(DTypeError, match="remainder_ only supports a number"):
        h %= Variable(np.array([2.0, 2.0]))
    w = Variable(np.array([1.0, 2.0]))
    with pytest.raises(InplaceError, match="RemainderConstant: a leaf Variable that requires grad"):
        w %= 2
    np.testing.assert_array_equal(w.data, [1.0, 2.0])


def test_remainder_of_shapes_that_do_not_broadcast_names_the_op():
    with pytest.raises(ShapeError, match=r"remainder: shapes \(3,\) and \(2,\) cannot be broadcast"):
        Variable(np.ones(3)) % Variable(np.ones(2))
    with pytest.raises(ShapeError, match=r"floor_divide: shapes \(3,\) and \(2,\)"):
        Variable(np.ones(3)) // Variable(np.ones(2))


# --- NumPy's array protocol ------------------------------------------------------------------------


def test_numpy_gets_the_data_of_a_variable_that_requires_no_grad():
    y = Variable(np.array([1.0, -2.0, 3.0]), requires_grad=False)
    assert np.asarray(y) is y.data and np.asarray(y).dtype == np.float64  # before: an object array
    np.testing.assert_array_equal(np.where(y.data > 0, y, 0), [1.0, 0.0, 3.0])
    copied = np.array(y)
    assert copied is not y.data and np.array_equal(copied, y.data)
    assert np.asarray(y, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize(
    "use",
    [
        np.asarray,
        np.array,
        lambda x: np.where(x.data > 0, x, 0),
        lambda x: np.stack([x, x]),
        lambda x: np.dot(x, x),
    ],
    ids=["asarray", "array", "where", "stack", "dot"],
)
def test_numpy_refuses_a_variable_that_requires_grad(use):
    """Before: an object array of 0-d Variables (one Index node each), or a result outside the
    graph through which no gradient flowed, with no error; torch refuses too."""
    x = Variable(np.array([1.0, -2.0, 3.0]))
    with pytest.raises(
        DTypeError, match=r"requires grad \(shape \(3,\)\).*no gradient would flow back.*x.data"
    ):
        use(x)
    assert x.creator.__class__.__name__ == "Leaf" and x._grad is None


# --- dims ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        lambda x: x.sum(True),
        lambda x: x.max(True),
        lambda x: x.mean((0, True)),
        lambda x: x.transpose(True, False),
        lambda x: x.unsqueeze(True),
        lambda x: vf.cat([x, x], True),
    ],
)
def test_a_bool_is_not_a_dim(op):
    """Before: Python's True is 1, so x.sum(True) reduced dim 1 (torch refuses it)."""
    with pytest.raises(ShapeError, match=r"dim must be an int .*got .*True"):
        op(Variable(np.ones((2, 3))))


@pytest.mark.parametrize("dim", [None, (0, 1), True, 1.0])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_takes_one_int_dim(name, dim):
    """Before: dim=None (and a tuple) normalised over every element at once."""
    x = Variable(np.ones((2, 3)))
    with pytest.raises(ShapeError, match=rf"{name}: dim must be one int, .*got {re.escape(repr(dim))}"):
        getattr(x, name)(dim)
    assert getattr(x, name)(np.int64(1)).shape == (2, 3)


def test_a_comparison_with_none_a_string_or_a_complex_is_pythons():
    """Before: x == None gave an all-False Variable (so `if x == None:` failed later as ambiguous),
    and x < 1j compared real parts."""
    x = Variable(np.array([1.0, 2.0]))
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert (x == "a") is False
    for other in (None, "a", 1j):
        with pytest.raises(TypeError, match="'<' not supported between instances of 'Variable'"):
            x < other  # noqa: B015
    np.testing.assert_array_equal((x < np.float32(1.5)).data, [True, False])
    np.testing.assert_array_equal((x == np.bool_(True)).data, [True, False])


@pytest.mark.parametrize(
    "make",
    [
        lambda: Variable(np.ones(2), volatile="no"),
        lambda: Variable(np.ones(2), requires_grad="no"),
        lambda: Variable(np.ones(2), requires_grad=np.array([1, 0])),
    ],
)
def test_a_flag_must_be_true_or_false(make):
    """Before: volatile="no" made the Variable volatile (a non-empty string is true)."""
    with pytest.raises(DTypeError, match=r"Variable: (volatile|requires_grad) must be True or False, got"):
        make()


@pytest.mark.parametrize("value", ["no", None, 0.5])
def test_setting_requires_grad_takes_true_or_false(value):
    """Before: x.requires_grad = "no" set True, and None reset it to the default (True)."""
    x = Variable(np.ones(2), requires_grad=False)
    with pytest.raises(DTypeError, match=rf"requires_grad must be True or False, got {value!r}"):
        x.requires_grad = value
    assert not x.requires_grad
