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


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_with_beta_0_is_the_l1_loss_as_in_torch(reduction):
    torch = pytest.importorskip("torch")
    d = np.array([0.0, 1e-9, -0.3, 2.0])
    x, t = Variable(d.copy()), torch.tensor(d, requires_grad=True)
    loss = nn.smooth_l1_loss(x, np.zeros(4), reduction=reduction, beta=0)
    want = torch.nn.functional.smooth_l1_loss(t, torch.zeros(4, dtype=t.dtype), reduction=reduction, beta=0)
    np.testing.assert_allclose(loss.data, want.detach().numpy())
    loss.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(x.grad, t.grad.numpy())
    for beta in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="smooth_l1_loss: beta must be 0 or more"):
            nn.smooth_l1_loss(x, np.zeros(4), beta=beta)


def test_nll_loss_takes_its_target_as_a_torch_tensor_too():
    torch = pytest.importorskip("torch")
    scores = np.array([[0.2, 1.5, -0.3], [2.0, 0.1, 0.4]])
    loss = nn.cross_entropy(Variable(scores), torch.tensor([1, 0]))
    assert loss.item() == pytest.approx(nn.cross_entropy(Variable(scores), np.array([1, 0])).item())


def test_the_smooth_l1_module_takes_beta_as_the_function_does():
    x, y = Variable(np.array([0.0, 0.3, 2.0])), np.zeros(3)
    module = nn.SmoothL1Loss(reduction="sum", beta=0.5)
    assert (
        module(x, y).item() == nn.smooth_l1_loss(x, y, "sum", beta=0.5).item() == pytest.approx(0.09 + 1.75)
    )
    assert repr(module) == "SmoothL1Loss(reduction='sum', beta=0.5)"


@pytest.mark.parametrize("dtype, beta", [(np.float32, 1e-40), (np.float16, 1e-6), (np.float64, 1e-320)])
def test_smooth_l1_with_a_tiny_beta_stays_finite(dtype, beta):
    """0.5 / beta overflowed to inf, and inf * 0 made the loss and every gradient NaN (torch: 0.5)."""
    x = Variable(np.array([0.0, 1.0], dtype))
    loss = nn.smooth_l1_loss(x, np.zeros(2, dtype), beta=beta)
    loss.backward()
    assert loss.item() == pytest.approx(0.5, rel=1e-3) and x.grad.tolist() == [0.0, 0.5]


@pytest.mark.parametrize("loss", [nn.cross_entropy, nn.nll_loss])
def test_an_empty_list_target_is_read_as_no_class_indices_not_as_floats(loss):
    with pytest.raises(ValueError, match=r"target must have shape \(3,\).*got \(0,\)"):
        loss(Variable(np.zeros((3, 4))), [])
    with pytest.warns(RuntimeWarning):  # NumPy's "Mean of empty slice" warnings stay (row 49)
        empty = loss(Variable(np.zeros((0, 4))), [])  # an empty batch: torch's nan, not a dtype error
    assert np.isnan(empty.data)


def test_an_input_with_no_classes_says_so_rather_than_0_to_minus_1():
    with pytest.raises(ValueError, match="0 classes .*no class is valid") as error:
        nn.cross_entropy(Variable(np.zeros((3, 0))), np.array([0, 1, 0]))
    assert "-1" not in str(error.value)
