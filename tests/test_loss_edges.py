"""Losses at their edge points: gradients that rounding must not eat."""

import numpy as np
import pytest

import varfunc.nn as nn
from varfunc import Variable


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta", [1.0, 0.5, 1e10])
def test_smooth_l1_keeps_the_gradient_of_a_small_residual(dtype, beta):
    """d / beta inside the quadratic part, sign(d) from |d| = beta on, as PyTorch's rule gives."""
    d = np.array([1e-20, 1e-9, -1e-9, 1e-6, 0.3, -0.3, 0.5, 1.0, -1.0, 1.5, -3.0, 0.0]).astype(dtype)
    x = Variable(d)
    nn.smooth_l1_loss(x, np.zeros_like(d), reduction="sum", beta=beta).backward()
    want = np.where(np.abs(d) < dtype(beta), d / dtype(beta), np.sign(d)).astype(dtype)
    np.testing.assert_allclose(x.grad, want, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=0)
