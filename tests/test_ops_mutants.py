"""Rules of the ops that a mutation audit found no other test pinning down.

Each test below fails if one token of varfunc/functions/*.py changes in a way that the rest of the
suite let through: Threshold at its own threshold (its value and its gradient); integer powers whose
exponents are zero or positive, computed as NumPy computes them rather than refused as negative ones
are; and integer division, where only an integer zero divisor of integer data is refused.
"""

import numpy as np
import pytest

from varfunc import Variable
from varfunc import functions as F

# --- Threshold at the threshold itself ------------------------------------------------------------

# (threshold, value) pairs with value != threshold, so that Threshold takes its where path, not relu's
THRESHOLDS = [(0.5, -2.0), (-1.0, 3.0), (0.0, 1.0)]


def _with_ties(threshold):
    """Values below, at (twice) and above the threshold."""
    return np.array([threshold - 1.5, threshold, threshold + 0.25, threshold, threshold + 2.0])


@pytest.mark.parametrize("threshold, value", THRESHOLDS)
def test_threshold_replaces_the_threshold_itself(threshold, value):
    # a > threshold is kept; a == threshold is replaced by value, as in torch's threshold
    a = _with_ties(threshold)
    y = F.Threshold(threshold, value)(Variable(a))
    np.testing.assert_array_equal(y.data, np.where(a > threshold, a, value))


@pytest.mark.parametrize("threshold, value", THRESHOLDS)
def test_threshold_sends_no_gradient_at_the_threshold(threshold, value):
    a = _with_ties(threshold)
    x = Variable(a)
    seed = np.arange(1.0, 6.0)
    F.Threshold(threshold, value)(x).backward(seed)
    np.testing.assert_array_equal(x.grad, np.where(a > threshold, seed, 0.0))


@pytest.mark.parametrize("threshold, value", THRESHOLDS)
def test_threshold_at_the_threshold_matches_torch(threshold, value):
    torch = pytest.importorskip("torch")
    a = _with_ties(threshold)
    x = Variable(a)
    y = F.Threshold(threshold, value)(x)
    seed = np.arange(1.0, 6.0)
    y.backward(seed)
    t = torch.tensor(a, requires_grad=True)
    ty = torch.nn.functional.threshold(t, threshold, value)
    ty.backward(torch.tensor(seed))
    np.testing.assert_array_equal(y.data, ty.detach().numpy())
    np.testing.assert_array_equal(x.grad, t.grad.numpy())


# --- integer powers: only a negative integer exponent is refused ---------------------------------


def _ints(values, dtype=np.int64):
    return Variable(np.array(values, dtype=dtype), requires_grad=False)


@pytest.mark.parametrize(
    "exponents",
    [[0, 0, 0], [1, 2, 3], [0, 2, 1]],
    ids=["zeros", "positive", "zero-and-positive"],
)
def test_integer_pow_of_integer_exponents_at_or_above_zero_is_numpys(exponents):
    base, power = np.array([2, -3, 4]), np.array(exponents)
    y = F.Pow()(_ints(base), _ints(power))
    assert y.data.dtype == (base**power).dtype
    np.testing.assert_array_equal(y.data, base**power)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_data_to_the_power_zero_is_ones_of_its_dtype(dtype):
    a = np.array([3, 0, 7], dtype=dtype)
    y = F.PowConstant(0)(_ints(a, dtype))
    assert y.data.dtype == (a**0).dtype
    np.testing.assert_array_equal(y.data, a**0)


# --- integer division: only an integer zero divisor of integer data is refused ---------------------

INT_DATA = np.array([7, -5, 9])


@pytest.mark.parametrize("op", [F.FloorDivideConstant, F.RemainderConstant])
def test_integer_data_by_a_nonzero_integer_constant_is_numpys(op):
    expected = INT_DATA // 3 if op is F.FloorDivideConstant else INT_DATA % 3
    np.testing.assert_array_equal(op(3)(_ints(INT_DATA)).data, expected)


def test_integer_data_by_an_integer_zero_is_refused():
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        F.FloorDivide()(_ints(INT_DATA), _ints([0, 1, 2]))


def test_float_data_by_an_integer_zero_is_numpys_inf():
    a, b = np.array([7.0, -5.0, 9.0]), np.array([0, 1, 2])
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = a // b
        y = F.FloorDivide()(Variable(a), _ints(b))
    np.testing.assert_array_equal(y.data, expected)


def test_integer_data_by_nonzero_integer_data_is_numpys():
    b = np.array([2, 3, -4])
    np.testing.assert_array_equal(F.FloorDivide()(_ints(INT_DATA), _ints(b)).data, INT_DATA // b)
