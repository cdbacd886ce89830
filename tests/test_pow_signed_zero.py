"""x ** c at a signed zero, against PyTorch: values and gradients agree in sign too.

PyTorch computes x ** -0.5 as 1 / sqrt(x) (rsqrt), so at x = -0.0 it is -inf, and x ** 0.5's
gradient, 0.5 * x ** -0.5, is -inf there, as x.sqrt()'s is. NumPy's pow gave +inf for both.
"""

from __future__ import annotations

import numpy as np
import pytest

from varfunc import Variable, gradcheck

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

POINTS = [-0.0, 0.0, 1e-300, 0.25, 4.0]
POWERS = [-0.5, 0.5, -1.5, 1.5, -0.25, -2.5, -1, -2, -3, 2, 3, 0]


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal element by element, NaN to NaN, and with the same sign (-0.0 is not 0.0, -inf not inf)."""
    return np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("c", POWERS)
def test_a_constant_power_agrees_with_torch_at_signed_zeros(c, dtype):
    _agree_with_torch(POINTS, dtype, lambda x: x**c)


def _agree_with_torch(points: list, dtype, op) -> None:
    """op on a Variable and on a tensor of points: values and gradients the same, signs included."""
    x = Variable(np.array(points, dtype=dtype))
    t = torch.tensor(points, dtype=getattr(torch, np.dtype(dtype).name), requires_grad=True)
    with np.errstate(all="ignore"):  # 1 / 0 and inf * 0: NumPy's warnings, not this test's subject
        y = op(x)
        y.backward(np.ones_like(y.data))
    u = op(t)
    u.backward(torch.ones_like(u))
    assert _same(y.data, u.detach().numpy()), (y.data, u.detach().numpy())
    assert _same(x.grad, t.grad.numpy()), (x.grad, t.grad.numpy())


def test_x_to_minus_one_half_is_one_over_sqrt_as_torch_computes_it():
    """The value is computed as torch's rsqrt is: to the last bit, where pow differs in a third."""
    a = np.abs(np.random.default_rng(0).standard_normal(1000)) * 10
    want = (torch.tensor(a) ** -0.5).numpy()
    assert np.array_equal((Variable(a) ** -0.5).data, want)
    neg_zero, root, power = (Variable(np.array(-0.0)) for _ in range(3))
    with np.errstate(divide="ignore"):
        assert _same((neg_zero**-0.5).data, (1 / neg_zero.sqrt()).data)  # -inf both
        root.sqrt().backward()
        (power**0.5).backward()
    assert _same(power.grad, root.grad)  # -inf both


@pytest.mark.parametrize("c", [-0.5, 0.5, -1.5])
def test_the_gradient_near_zero_agrees_with_numerical_differences(c):
    assert gradcheck(lambda x: x**c, [np.array([1e-3, 0.25, 4.0, 9.0])])


def test_integer_data_to_minus_one_half_stays_float64():
    got = (Variable(np.array([1, 4, 9], dtype=np.int8)) ** -0.5).data
    assert got.dtype == np.float64 and np.allclose(got, [1, 0.5, 1 / 3])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("c", [-0.0, 0.0])
def test_a_zero_base_to_a_tensor_power_agrees_with_torch_in_sign(c, dtype):
    """(-0.0) ** -1 is -inf, so its gradient result * ln 0 is +inf (it was -inf, as for +0.0)."""
    _agree_with_torch([-1.0, -3.0, -2.0, -0.5, 0.0, 1.0, 2.5, float("nan")], dtype, lambda x: c**x)
