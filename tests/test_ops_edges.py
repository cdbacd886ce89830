"""Ops at their edge points: where a formula's textbook form gives nan, 0 or inf but the true value
(the limit, as PyTorch also computes it) is finite or a clean infinity. Each case here was once wrong.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import varfunc as vf
from varfunc import Variable


def grads_of(fn, *arrays):
    """Leaf gradients of fn(*leaves).sum(), with NumPy's warnings for inf and nan in forward off."""
    leaves = [Variable(a) for a in arrays]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = fn(*leaves)
    out.sum().backward()
    return [leaf.grad for leaf in leaves]


def test_a_power_of_zero_is_flat_even_at_zero():
    (g,) = grads_of(lambda x: x**0, np.array([0.0, 2.0]))
    assert g.tolist() == [0.0, 0.0]  # b a^(b-1) would be 0 * inf = nan at a = 0
    g_a, g_b = grads_of(lambda a, b: a**b, np.array([0.0]), np.array([0.0]))
    assert g_a.tolist() == [0.0] and g_b.tolist() == [0.0]


def test_pow_at_a_zero_base():
    g_a, g_b = grads_of(lambda a, b: a**b, np.array([0.0, 0.0, 2.0]), np.array([2.0, -1.0, 3.0]))
    assert g_a.tolist() == [0.0, -np.inf, 12.0]
    # d(a^b)/db = a^b ln a: 0 where the power is 0 (b > 0), -inf where it is inf (b < 0)
    assert g_b[:2].tolist() == [0.0, -np.inf] and g_b[2] == pytest.approx(8 * np.log(2))
    (g,) = grads_of(lambda x: 0.0**x, np.array([-1.0, 0.0, 2.0, np.inf, np.nan]))
    np.testing.assert_array_equal(g, [-np.inf, 0.0, 0.0, 0.0, np.nan])  # nan stays nan, not -inf


@pytest.mark.parametrize("dtype, low", [(np.float32, -80.0), (np.float64, -700.0)])
def test_sigmoid_keeps_its_digits_far_below_zero(dtype, low):
    a = np.linspace(low, -low, 2001).astype(dtype)
    want = np.exp(-np.logaddexp(0.0, -a.astype(np.float64)))  # 1 / (1 + e^-a), without overflow
    x = Variable(a)
    y = x.sigmoid()
    assert y.dtype == dtype
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(y.data, want, rtol=rtol)
    y.sum().backward()
    # y (1 - y), as PyTorch computes it too: near y = 1 the difference 1 - y carries about one
    # rounding error of y, so it is checked to that absolute accuracy
    np.testing.assert_allclose(x.grad, want * (1 - want), rtol=10 * rtol, atol=np.finfo(dtype).eps)
    assert Variable(np.array(-40.0)).sigmoid().log().item() == pytest.approx(-40.0)


def test_sigmoid_in_place_gives_the_same_values():
    a = np.array([-30.0, -1.0, 0.0, 2.0])
    x = Variable(a.copy(), requires_grad=False)
    x.sigmoid_()
    np.testing.assert_allclose(x.data, Variable(a).sigmoid().data, rtol=0)


def test_the_divisor_gradient_does_not_overflow_through_b_squared():
    tiny = np.array([1e-25], dtype=np.float32)  # tiny * tiny underflows to 0 in float32
    _, g_b = grads_of(lambda a, b: a / b, tiny, tiny.copy())
    np.testing.assert_allclose(g_b, [-1e25], rtol=1e-6)
    assert g_b.dtype == np.float32
    for c, x, want in [(1e-25, 1e-25, -1e25), (1e30, 1e20, -1e-10)]:  # x * x: 0 and inf in float32
        (g,) = grads_of(lambda v, c=c: c / v, np.array([x], dtype=np.float32))
        np.testing.assert_allclose(g, [want], rtol=1e-6)


@pytest.mark.parametrize(
    "method, m, a, b",
    [
        ("addmm", np.full((2, 2), np.nan), np.eye(2), np.arange(4.0).reshape(2, 2)),
        ("addmv", np.full(2, np.inf), np.eye(2), np.arange(2.0)),
        ("addr", np.full((2, 3), np.nan), np.arange(2.0), np.arange(3.0)),
    ],
)
def test_a_zero_weight_leaves_the_added_term_out(method, m, a, b):
    product = np.outer(a, b) if method == "addr" else a @ b
    out = getattr(Variable(m), method)(Variable(a), Variable(b), alpha=0, beta=2)
    np.testing.assert_array_equal(out.data, 2 * product)
    out.sum().backward()


@pytest.mark.parametrize("method", ["addmm", "addmv", "addr", "baddbmm", "addbmm"])
def test_a_zero_weight_leaves_the_product_out(method):
    """beta=0 gives alpha * M even where the product holds inf or nan, as BLAS (and v0.1's TH) does."""
    inf_matrix = np.array([[np.inf, 0.0], [0.0, 1.0]])
    operands = {
        "addmm": (np.ones((2, 2)), inf_matrix, np.eye(2)),
        "addmv": (np.ones(2), inf_matrix, np.ones(2)),
        "addr": (np.ones((2, 2)), np.array([np.inf, 1.0]), np.ones(2)),
        "baddbmm": (np.ones((1, 2, 2)), inf_matrix[None], np.eye(2)[None]),
        "addbmm": (np.ones((2, 2)), inf_matrix[None], np.eye(2)[None]),
    }[method]
    m, a, b = (Variable(array) for array in operands)
    with np.errstate(invalid="ignore"):  # the product itself holds inf * 0
        out = getattr(m, method)(a, b, alpha=3, beta=0)
        out.sum().backward()
    np.testing.assert_array_equal(out.data, 3 * operands[0])
    np.testing.assert_array_equal(m.grad, np.full(operands[0].shape, 3.0))
    assert out.dtype == np.float64


def test_integer_to_a_negative_integer_power_is_a_clear_error():
    ints = Variable(np.array([1, 2, 3]))
    with pytest.raises(vf.DTypeError, match=r"pow: an integer \(int64\) base.*\.double\(\)"):
        ints ** Variable(np.array([-1, 1, 2]))
    with pytest.raises(vf.DTypeError, match="pow: an integer"):
        ints**-1
    assert (ints**2).data.tolist() == [1, 4, 9]
    np.testing.assert_allclose((ints**-1.0).data, [1.0, 0.5, 1 / 3])


def test_a_float_base_to_a_negative_integer_power_is_a_fraction():
    """Only an integer base is refused: a float one holds the fraction, as in torch."""
    out = Variable(np.array([2.0, 4.0])) ** Variable(np.array([-1, -2]))
    np.testing.assert_allclose(out.data, [0.5, 0.0625])
    assert out.dtype == np.float64


def test_a_boolean_base_to_a_negative_integer_power_is_refused_as_integer_data():
    """NumPy refuses it too (bool ** int is integer arithmetic); the error names the bool base."""
    with pytest.raises(vf.DTypeError, match=r"pow: an integer \(bool\) base to a negative integer power"):
        Variable(np.array([True, False])) ** Variable(np.array([-1, 1]))


def test_an_integer_to_a_negative_integer_variable_power_is_a_clear_error():
    exponents = Variable(np.array([1, -1]))
    with pytest.raises(vf.DTypeError, match=r"pow: 2 to a negative integer \(int64\) power.*2\.0 \*\* x"):
        2**exponents
    with pytest.raises(vf.DTypeError, match="pow: 3 to a negative integer"):
        vf.functions.PowConstant(np.int64(3), tensor_power=True)(exponents)
    assert (2 ** Variable(np.array([0, 3]))).data.tolist() == [1, 8]
    np.testing.assert_allclose((2.0**exponents).data, [2.0, 0.5])


def test_edge_points_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        (lambda a, b: a**b, [np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 2.0, -1.0, -0.5])]),
        (lambda a: a**0, [np.array([0.0, -1.0])]),
        (lambda a: 0.0**a, [np.array([-2.0, 0.0, 0.5, np.inf, np.nan])]),
        (lambda a: a.sigmoid() if hasattr(a, "sigmoid") else None, [np.array([-745.0, -40.0, 0.0, 40.0])]),
        (lambda a, b: a / b, [np.array([1e-200]), np.array([1e-170])]),
        (lambda a: a.relu(), [np.array([-1.0, 0.0, 2.0, np.nan])]),
    ]
    for fn, arrays in cases:
        ours = grads_of(fn, *arrays)
        tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
        fn(*tensors).sum().backward()
        for got, tensor in zip(ours, tensors):
            np.testing.assert_allclose(got, tensor.grad.numpy(), rtol=1e-12, atol=1e-300)  # denormals


def _leaf_grads(fn, *arrays):
    leaves = [Variable(np.array(a, dtype=np.float64)) for a in arrays]
    fn(*leaves).sum().backward()
    return [leaf.grad.tolist() for leaf in leaves]


def test_cmax_and_cmin_send_a_tied_gradient_to_b():
    """docs/differences.md row 35: the mask is a > b (a < b), so a tie goes to b (torch 2 splits it)."""
    a, b = [1.0, 2.0, 3.0], [1.0, 0.0, 5.0]  # element 0 is a tie
    assert _leaf_grads(lambda x, y: x.cmax(y), a, b) == [[0, 1, 0], [1, 0, 1]]
    assert _leaf_grads(lambda x, y: x.cmin(y), a, b) == [[0, 0, 1], [1, 1, 0]]


def test_cmax_and_cmin_with_a_number_pass_no_gradient_at_a_tie():
    """Row 35: CmaxConstant and CminConstant pass none where a == c (clamp passes it)."""
    assert _leaf_grads(lambda x: x.cmax(1.0), [0.0, 1.0, 2.0]) == [[0, 0, 1]]
    assert _leaf_grads(lambda x: x.cmin(1.0), [0.0, 1.0, 2.0]) == [[1, 0, 0]]


def test_relu_passes_no_gradient_at_zero_unlike_clamp():
    """relu's gradient at 0 is 0 (v0.1's nn Threshold, PyTorch's relu); clamp(min=0) counts 0 as inside."""
    values = np.array([-1.0, 0.0, 2.0, np.nan])
    x = Variable(values)
    y = x.relu()
    np.testing.assert_array_equal(y.data, [0.0, 0.0, 2.0, np.nan])  # nan stays nan, as in torch
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 1.0, 1.0])
    (clamp_grad,) = grads_of(lambda a: a.clamp(min=0), values)
    np.testing.assert_array_equal(clamp_grad[:3], [0.0, 1.0, 1.0])
    z = Variable(values)
    vf.functions.Threshold(0.5, -3.0)(z).sum().backward()
    assert vf.functions.Threshold(0.5, -3.0)(Variable(values)).data[:3].tolist() == [-3.0, -3.0, 2.0]
    assert z.grad[:3].tolist() == [0.0, 0.0, 1.0]


def test_a_0d_variable_takes_dim_0_or_minus_1_where_pytorch_does():
    x = Variable(np.array(2.0))
    assert x.sum(0).item() == 2.0 and x.mean(-1).item() == 2.0
    assert x.squeeze(0).item() == 2.0
    y = x.softmax(0)
    assert y.item() == 1.0 and x.log_softmax(-1).item() == 0.0
    (y * 5).backward()
    assert x.grad.item() == 0.0  # the softmax of one element is 1 whatever it is
    with pytest.raises(vf.ShapeError, match=r"max: a 0-d Variable has no dimension 0 to work along"):
        x.max(0)
    with pytest.raises(vf.ShapeError, match="sum: dim 1 is out of range"):
        x.sum(1)


def test_reduction_dims_are_checked():
    x = Variable(np.ones((2, 3)))
    with pytest.raises(vf.ShapeError, match=r"sum: dim \(0, -2\) names one dimension twice"):
        x.sum((0, -2))
    with pytest.raises(vf.ShapeError, match="mean: dim must be an int or a tuple of ints, got 0.5"):
        x.mean(0.5)
    for method, dim in [
        ("sum", ()),
        ("mean", []),
    ]:  # NumPy: no axis; torch sum: all (softmax: test_operators)
        words = f"{method}: dim={dim!r} names no dimension; use dim=None"
        with pytest.raises(vf.ShapeError, match=re.escape(words)):
            getattr(x, method)(dim)


@pytest.mark.parametrize("method", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((3, 0), 1), ((0, 3), 1), ((0,), 0)])
def test_softmax_of_an_empty_variable_is_empty(method, shape, dim):
    x = Variable(np.zeros(shape))
    y = getattr(x, method)(dim)
    assert y.shape == shape
    y.backward(np.zeros(shape))
    assert x.grad.shape == shape


@pytest.mark.parametrize("method", ["max", "min", "median", "mode"])
def test_selecting_along_a_full_dim_of_an_empty_batch_gives_empty_results(method):
    """(0, 3).max(1): NumPy and PyTorch give empty values and indices; only an empty dim is refused."""
    x = Variable(np.zeros((0, 3)))
    values, indices = getattr(x, method)(1)
    assert values.shape == (0,) and indices.shape == (0,) and indices.data.dtype == np.int64
    values.sum().backward()
    assert x.grad.shape == (0, 3)


@pytest.mark.parametrize(
    "op, name",
    [
        (lambda u: u + 300, "AddConstant"),
        (lambda u: u.add_(300), "AddConstant"),
        (lambda u: 300 - u, "SubConstant"),
        (lambda u: u * -1, "MulConstant"),
        (lambda u: u.clamp(min=-1), "Clamp"),
    ],
)
def test_a_number_that_does_not_fit_an_integer_dtype_is_a_clear_error(op, name):
    u = Variable(np.array([0, 1, 2], dtype=np.uint8))
    with pytest.raises(
        vf.DTypeError, match=rf"{name}: Python integer -?\d+ out of bounds for uint8 .*astype"
    ):
        op(u)
    assert u.data.tolist() == [0, 1, 2] and u._version[0] == 0  # nothing changed


def test_c_minus_a_in_place_fails_before_it_writes():
    x = Variable(np.array([1, 2], dtype=np.int8))
    p = Variable(np.array([1.0, 1.0]))
    z = p * x  # saves x
    with pytest.raises(vf.DTypeError, match="SubConstant: Python integer 300 out of bounds for int8"):
        vf.functions.SubConstant(300, sub_tensor=True, inplace=True)(x)
    assert x.data.tolist() == [1, 2] and x._version[0] == 0
    z.sum().backward()
    assert p.grad.tolist() == [1.0, 2.0]


def test_an_overflow_with_float_data_is_numpys_own_error():
    """Only a number meeting an integer dtype is the kit's DTypeError; the rest stays as it was."""
    with pytest.raises(OverflowError) as raised:
        Variable(np.ones(2)) + 10**400
    assert not isinstance(raised.value, vf.DTypeError)


def test_the_median_of_a_slice_with_a_nan_is_nan():
    """As np.median and PyTorch: the first NaN is the median and gets the gradient."""
    a = np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 2.0, 3.0, 1.0], [np.nan, 2.0, np.nan, 1.0]])
    x = Variable(a)
    values, indices = x.median(1)
    np.testing.assert_array_equal(values.data, [np.nan, 2.0, np.nan])
    assert indices.data.tolist() == [1, 1, 0]
    values.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad, [[0, 1, 0, 0], [0, 2, 0, 0], [3, 0, 0, 0]])
    columns, rows = Variable(a).median(0)
    np.testing.assert_array_equal(columns.data, [np.nan, np.nan, np.nan, 1.0])
    assert rows.data.tolist() == [2, 0, 2, 1]
    for data, where in (([1.0, np.nan, 3.0], 1), ([2.0, np.nan, 1.0, np.nan], 1)):
        y = Variable(np.array(data))
        m = y.median()
        assert np.isnan(m.item())
        m.backward()
        assert y.grad.tolist() == [1.0 if i == where else 0.0 for i in range(len(data))]


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda x: x**-1, id="x**-1"),
        pytest.param(lambda x: x**-1.0, id="x**-1.0"),
        pytest.param(lambda x: x ** Variable(np.array([-1.0])), id="x**y"),
        pytest.param(lambda x: 0 ** (x - 1), id="0**(x-1)"),
    ],
)
def test_zero_to_a_negative_power_is_inf_without_a_numpy_warning(fn):
    # PyTorch gives inf and a gradient of -inf silently; NumPy's "divide by zero" must not leak out
    import warnings

    x = Variable(np.array([0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = fn(x)
        y.sum().backward()
    assert y.data.tolist() == [np.inf] and x.grad.tolist() == [-np.inf]


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a.clamp(-1, 1) + b,
        lambda a, b: a.relu() + b,
        lambda a, b: a.cmax(0.5) + b.cmin(0.5),
        lambda a, b: a.cmax(b),
        lambda a, b: a.cmin(b),
    ],
)
def test_an_infinite_gradient_passes_where_a_mask_passes_and_is_nan_only_where_it_blocks(fn):
    """docs/differences.md row 43: masks multiply, as in v0.1, so inf * 0 = nan at blocked elements only."""
    a, b = np.array([-2.0, 0.0, 0.7, 2.0]), np.array([1.0, -1.0, 1.0, 0.0])
    passed = grads_of(fn, a, b)  # a gradient of ones: 1 where the mask passes, 0 where it blocks
    leaves = [Variable(a), Variable(b)]
    out = fn(*leaves)
    with np.errstate(invalid="ignore"):
        out.backward(np.full(out.shape, np.inf))
    for mask, leaf in zip(passed, leaves):
        assert set(mask.tolist()) <= {0.0, 1.0}
        np.testing.assert_array_equal(leaf.grad, np.where(mask == 1, np.inf, np.nan))
