"""Reductions: 0-d results, keepdim, NumPy's mean to the last bit, and the (values, indices) of
max, min, median and mode with a dim."""

from __future__ import annotations

import numpy as np
import pytest
from makers import distinct, with_repeats

from varfunc import Variable
from varfunc.errors import VarfuncError


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "median"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_full_reductions_are_0d(name, dtype, rng):
    x = Variable(rng.standard_normal((3, 4)).astype(dtype))
    out = getattr(x, name)()
    assert out.shape == ()
    assert out.dtype == dtype
    assert isinstance(out.item(), float)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_keepdim(name, rng):
    x = Variable(rng.standard_normal((2, 3, 4)))
    assert getattr(x, name)(1, keepdim=True).shape == (2, 1, 4)
    assert getattr(x, name)(-1, True).shape == (2, 3, 1)
    assert getattr(x, name)((0, 2), keepdim=True).shape == (1, 3, 1)
    assert getattr(x, name)(keepdim=True).shape == (1, 1, 1)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mean_is_numpys_mean_to_the_last_bit(dim, dtype, rng):
    a = (rng.standard_normal((300, 7)) * 100).astype(dtype)
    out = Variable(a).mean(dim)
    np.testing.assert_array_equal(out.data, a.mean(axis=dim))
    assert out.dtype == dtype


def test_mean_of_float16_and_integers_sums_in_a_wider_dtype():
    """As NumPy's mean does: float16 is summed in float32 and integers in float64, so neither overflows."""
    halves = np.full(100, 1000, dtype=np.float16)  # their float16 sum, 100,000, is past float16's 65,504
    assert Variable(halves).mean().item() == 1000.0
    big = np.full(3, 2**62, dtype=np.int64)  # their int64 sum wraps around
    assert Variable(big).mean().item() == float(2**62)


def test_the_mean_of_more_float16_elements_than_float16_can_count_still_has_a_gradient():
    x = Variable(np.ones((2, 70000), dtype=np.float16))  # 70,000 is past float16's 65,504
    (x.mean() + x.mean(1).sum()).backward()
    np.testing.assert_allclose(x.grad, 1 / 140000 + 1 / 70000, rtol=1e-3, atol=2**-24)  # a subnormal step
    assert x.grad.dtype == np.float16


@pytest.mark.parametrize("name", ["sum", "mean"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_a_full_reduction_sends_each_element_its_gradient_in_the_data_dtype(name, keepdim, rng):
    x = Variable(rng.standard_normal((3, 4)).astype(np.float32))
    y = getattr(x, name)(keepdim=keepdim)
    (y * 2).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.shape == (3, 4)
    np.testing.assert_array_equal(x.grad, np.full((3, 4), 2 / 12 if name == "mean" else 2, np.float32))


SELECTIONS = [
    ("max", lambda a, d: np.argmax(a, axis=d)),
    ("min", lambda a, d: np.argmin(a, axis=d)),
    ("median", lambda a, d: np.take(np.argsort(a, axis=d), (a.shape[d] - 1) // 2, axis=d)),
]


@pytest.mark.parametrize(("name", "argfn"), SELECTIONS)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_selection_with_dim_returns_values_and_indices(name, argfn, dim, keepdim, rng):
    a = distinct(2, 3, 5)(rng).astype(np.float32)
    x = Variable(a)
    result = getattr(x, name)(dim, keepdim=keepdim)
    assert isinstance(result, tuple) and len(result) == 2
    values, indices = result
    assert result.values is values and result.indices is indices  # named as torch.return_types.max
    want_idx = argfn(a, dim)
    if keepdim:
        want_idx = np.expand_dims(want_idx, dim)
    assert indices.shape == values.shape == want_idx.shape
    np.testing.assert_array_equal(indices.data, want_idx)
    assert indices.dtype.kind == "i"
    assert not indices.requires_grad
    assert values.requires_grad and values.dtype == np.float32
    picked = np.take_along_axis(a, np.expand_dims(argfn(a, dim), dim), dim)
    np.testing.assert_array_equal(values.data, picked if keepdim else picked.squeeze(dim))


@pytest.mark.parametrize("name", ["max", "min", "median", "mode"])
def test_dim0_reduces_dim0(name, rng):
    """v0.1.3 read ``dim or last dim``, so dim=0 reduced over the last dim."""
    x = Variable(distinct(3, 5)(rng))
    values, indices = getattr(x, name)(0)
    assert values.shape == indices.shape == (5,)
    np.testing.assert_array_equal(values.data, x.data[indices.data, np.arange(5)])


def test_mode_values_and_indices():
    x = Variable(with_repeats(None))
    values, indices = x.mode()
    np.testing.assert_array_equal(values.data, [3.0, 0.5, -2.0])
    np.testing.assert_array_equal(x.data[np.arange(3), indices.data], values.data)
    assert indices.dtype.kind == "i" and not indices.requires_grad
    values, indices = x.mode(0, keepdim=True)
    assert values.shape == indices.shape == (1, 5)


def test_mode_ties_pick_the_smallest_value():
    values, _ = Variable(np.array([[2.0, 1.0, 2.0, 1.0, 5.0]])).mode()
    assert values.data.tolist() == [1.0]


def test_indices_take_no_gradient(rng):
    x = Variable(distinct(3, 4)(rng))
    values, indices = x.max(1)
    with pytest.raises(VarfuncError):
        indices.sum().backward()
    (values.sum() + indices.float().sum() * 0).backward()  # indices may be used; no gradient flows
    assert x.grad.sum() == 3


def test_operations_do_not_change_their_inputs(rng):
    a = rng.standard_normal((3, 4))
    keep = a.copy()
    x = Variable(a)
    for out in (x.exp(), x.sigmoid(), x.t(), x.view(12), x[0], x.clone(), x.softmax(0), x * 2):
        out.data[...] = 0  # outputs own their memory
    np.testing.assert_array_equal(a, keep)


@pytest.mark.parametrize("method", ["max", "min", "median"])
def test_selection_over_all_elements_honours_keepdim(method):
    data = np.array([[1.0, 5.0, -2.0], [3.0, 2.0, 0.5]])
    x = Variable(data)
    kept = getattr(x, method)(keepdim=True)
    assert kept.shape == (1, 1)
    assert kept.item() == getattr(x, method)().item()
    kept.sum().backward()
    assert x.grad.sum() == 1.0 and x.grad[np.unravel_index(np.argmax(x.grad), data.shape)] == 1.0
