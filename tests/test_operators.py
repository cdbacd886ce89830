"""Python's other operators on a Variable (operators.py): augmented assignment in place, comparisons,
truth, abs; and the clear errors for bounds and dims that used to fail deep inside NumPy."""

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
