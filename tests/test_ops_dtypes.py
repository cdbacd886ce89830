"""Dtypes through the ops: integer and boolean data (float ops give float64, abs and rounding keep
the dtype), and NumPy scalar operands and settings that keep float32 data float32, as in torch."""

from __future__ import annotations

import numpy as np
import pytest

import varfunc as vf
import varfunc.functions as F
from varfunc import Variable

FLOAT_OPS = [
    "exp", "log", "log1p", "sqrt", "sigmoid", "tanh", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "cinv", "reciprocal", "softmax", "log_softmax", "mean",
]  # fmt: skip


def integer_data(dtype):
    if dtype == np.bool_:
        return np.array([True, False])
    if np.issubdtype(dtype, np.unsignedinteger):
        return np.array([0, 1, 3, 10, 200, 255], dtype)
    return np.array([0, 1, 3, 10, 100, -3], dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("method", FLOAT_OPS)
def test_a_float_op_on_integer_or_boolean_data_gives_float64(method, dtype):
    """NumPy's loops would give float16 for int8 (exp(10) = 2.203e4) and integers for 1 / x."""
    torch = pytest.importorskip("torch")
    a = integer_data(dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = getattr(Variable(a), method)()
    assert y.dtype == np.float64
    name = "reciprocal" if method == "cinv" else method
    dim = (-1,) if "softmax" in method else ()
    want = getattr(torch.tensor(a.astype(np.float64)), name)(*dim)
    np.testing.assert_allclose(y.data, want.numpy(), rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.bool_])
def test_abs_and_rounding_keep_integer_and_boolean_data(dtype):
    a = integer_data(dtype)
    x = Variable(a)
    for method in ("abs", "floor", "ceil"):
        y = getattr(x, method)()
        assert y.dtype == dtype
        np.testing.assert_array_equal(y.data, getattr(np, method)(a))
    assert x.frac().dtype == dtype and not x.frac().data.any()  # no fractional part (bool too)


def test_negating_boolean_data_is_a_clear_error():
    mask = Variable(np.array([True, False]))
    for negate in (lambda m: -m, lambda m: m.neg(), lambda m: m.neg_()):
        with pytest.raises(vf.DTypeError, match=r"neg: boolean data has no negative; invert a mask with ~"):
            negate(mask)
    assert mask.data.tolist() == [True, False] and mask._version[0] == 0  # nothing changed


@pytest.mark.parametrize(
    "power",
    [
        pytest.param(lambda m: m**2, id="mask**2"),
        pytest.param(lambda m: m.pow(3), id="pow(3)"),
        pytest.param(lambda m: m**True, id="mask**True"),
        pytest.param(lambda m: m**m.data, id="mask**mask"),
    ],
)
def test_a_boolean_base_to_an_integer_power_is_int64_as_in_torch(power):
    """NumPy's power of booleans is int8, so mask ** 2 * 200 would wrap to -56."""
    torch = pytest.importorskip("torch")
    a = np.array([True, False, True])
    y = power(Variable(a))
    assert y.dtype == np.int64
    np.testing.assert_array_equal((y * 200).data, power(torch.tensor(a.astype(np.int64))).numpy() * 200)


SCALAR_OPERANDS = [
    ("mul", lambda x: x * np.float64(2)),
    ("mul-sqrt", lambda x: x * np.sqrt(2.0)),
    ("mul-int", lambda x: x * np.int64(3)),
    ("radd", lambda x: np.float64(2) + x),
    ("sub", lambda x: x - np.float64(0.5)),
    ("rsub", lambda x: np.float64(0.5) - x),
    ("div", lambda x: x / np.float64(3)),
    ("rdiv", lambda x: np.float64(3) / x),
    ("pow", lambda x: x ** np.float64(2)),
    ("rpow", lambda x: np.float64(2) ** x),
    ("clamp", lambda x: x.clamp(np.float64(0))),
    ("clamp-both", lambda x: x.clamp(np.float64(-0.5), np.float64(0.5))),
    ("add_", lambda x: (x * 1).add_(np.float64(1))),
    ("sub_", lambda x: (x * 1).sub_(np.float64(1))),
    ("mul_", lambda x: (x * 1).mul_(np.float64(3))),
    ("div_", lambda x: (x * 1).div_(np.float64(3))),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in SCALAR_OPERANDS])
def test_a_numpy_scalar_operand_keeps_float32_data_float32_as_in_torch(fn):
    torch = pytest.importorskip("torch")
    a = np.array([-1.5, 0.25, 2.0], dtype=np.float32)
    x, t = Variable(a), torch.tensor(a, requires_grad=True)
    y, want = fn(x), fn(t)
    assert y.dtype == np.float32 and want.dtype == torch.float32
    np.testing.assert_allclose(y.data, want.detach().numpy(), rtol=1e-6)
    y.sum().backward()
    want.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: F.AddConstant(np.float64(1)), id="AddConstant"),
        pytest.param(lambda: F.SubConstant(np.float64(1), sub_tensor=True), id="SubConstant"),
        pytest.param(lambda: F.MulConstant(np.float64(2)), id="MulConstant"),
        pytest.param(lambda: F.DivConstant(np.float64(2), div_by_tensor=True), id="DivConstant"),
        pytest.param(lambda: F.PowConstant(np.float64(2)), id="PowConstant"),
        pytest.param(lambda: F.CmaxConstant(np.float64(0)), id="CmaxConstant"),
        pytest.param(lambda: F.CminConstant(np.float64(0)), id="CminConstant"),
        pytest.param(lambda: F.Clamp(np.float64(-1), np.float64(1)), id="Clamp"),
        pytest.param(lambda: F.Threshold(np.float64(0.1), np.float64(-1)), id="Threshold"),
    ],
)
def test_a_constant_function_made_directly_with_a_numpy_scalar_keeps_float32(make):
    x = Variable(np.array([-1.5, 0.25, 2.0], dtype=np.float32))
    fn = make()
    y = fn(x)
    assert y.dtype == np.float32 and "np." not in repr(fn)
    y.sum().backward()
    assert x.grad.dtype == np.float32


def test_cmax_and_cmin_with_a_numpy_scalar_keep_float32_data_float32():
    x = Variable(np.array([-1.5, 0.25, 2.0], dtype=np.float32))
    for y in (x.cmax(np.float64(0)), x.cmin(np.float64(0)), x.cmax(np.float32(0))):
        assert y.dtype == np.float32
    np.testing.assert_array_equal(x.cmax(np.float64(0)).data, [0.0, 0.25, 2.0])
    # A 0-d array is an array: NumPy's promotion makes the result float64 (docs/differences.md row 18)
    assert (x * np.array(2.0)).dtype == np.float64


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda x: x.addmm(x, x, alpha=np.float64(2), beta=np.float64(0.5)), id="addmm"),
        pytest.param(lambda x: x[0].addmv(x, x[1], alpha=np.float64(2), beta=np.float64(0.5)), id="addmv"),
        pytest.param(lambda x: x.addr(x[0], x[1], alpha=np.float64(2), beta=np.float64(0.5)), id="addr"),
        pytest.param(lambda x: vf.functions.Addmm(np.float64(2), np.float64(0.5))(x, x, x), id="Addmm"),
    ],
)
def test_alpha_and_beta_as_numpy_scalars_keep_float32_data_float32(fn):
    x = Variable(np.array([[2.0, 0.5], [-1.0, 4.0]], dtype=np.float32))
    y = fn(x)
    assert y.dtype == np.float32 and "np." not in repr(y.creator)
    y.sum().backward()
    assert x.grad.dtype == np.float32
