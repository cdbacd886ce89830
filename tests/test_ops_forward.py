"""Forward values of every Variable method against the NumPy expression (as v0.1.3's method_tests),
dtypes and shapes kept, the (values, indices) of selections, and clear errors for bad shapes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import on_device

import varfunc as vf
from varfunc import Variable
from varfunc.errors import DTypeError, ShapeError, VarfuncError


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def unit(*shape):
    return lambda rng: rng.uniform(-0.9, 0.9, shape)


def distinct(*shape):
    def make(rng):
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.3 - 0.15 * n).reshape(shape)

    return make


def with_repeats(rng):
    """Rows with one clearly most frequent value (mode)."""
    return np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.5, 0.5, -1.0, 4.0, 2.0], [7.0, -2.0, 7.0, -2.0, -2.0]])


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _median(x, axis=None):
    """The lower median (PyTorch's), along axis or over all elements."""
    if axis is None:
        return np.sort(x, axis=None)[(x.size - 1) // 2]
    return np.take(np.sort(x, axis=axis), (x.shape[axis] - 1) // 2, axis=axis)


# (id, method call on Variables, the same expression on arrays, input makers)
METHODS = [
    ("add", lambda x, y: x.add(y), lambda x, y: x + y, [normal(3, 4), normal(4)]),
    ("add-number", lambda x: x.add(2.5), lambda x: x + 2.5, [normal(3, 4)]),
    ("add-array", lambda x, y: x.add(y.data), lambda x, y: x + y, [normal(3, 4), normal(3, 1)]),
    ("+", lambda x, y: x + y, lambda x, y: x + y, [normal(3, 1), normal(1, 4)]),
    ("radd", lambda x: 2 + x, lambda x: 2 + x, [normal(3, 4)]),
    ("add_", lambda x, y: x.clone().add_(y), lambda x, y: x + y, [normal(3, 4), normal(4)]),
    ("add_-number", lambda x: x.clone().add_(-1), lambda x: x - 1, [normal(3, 4)]),
    ("sub", lambda x, y: x.sub(y), lambda x, y: x - y, [normal(3, 4), normal(3, 4)]),
    ("sub-number", lambda x: x.sub(2), lambda x: x - 2, [normal(3, 4)]),
    ("rsub", lambda x: 2 - x, lambda x: 2 - x, [normal(3, 4)]),
    ("rsub-array", lambda x, y: y.data - x, lambda x, y: y - x, [normal(3, 4), normal(4)]),
    ("sub_", lambda x, y: x.clone().sub_(y), lambda x, y: x - y, [normal(3, 4), normal(1, 4)]),
    ("sub_-number", lambda x: x.clone().sub_(2), lambda x: x - 2, [normal(3, 4)]),
    ("mul", lambda x, y: x.mul(y), lambda x, y: x * y, [normal(3, 4), normal(3, 1)]),
    ("mul-number", lambda x: x * 3, lambda x: x * 3, [normal(3, 4)]),
    ("rmul", lambda x: 3 * x, lambda x: 3 * x, [normal(3, 4)]),
    ("mul_", lambda x: x.clone().mul_(-2), lambda x: x * -2, [normal(3, 4)]),
    ("div", lambda x, y: x.div(y), lambda x, y: x / y, [normal(3, 4), positive(4)]),
    ("div-number", lambda x: x / 4, lambda x: x / 4, [normal(3, 4)]),
    ("rdiv", lambda x: 2 / x, lambda x: 2 / x, [positive(3, 4)]),
    ("rdiv-array", lambda x, y: y.data / x, lambda x, y: y / x, [positive(3, 4), normal(3, 1)]),
    ("div_", lambda x: x.clone().div_(4), lambda x: x / 4, [normal(3, 4)]),
    ("remainder", lambda x, y: x % y, np.remainder, [normal(3, 4), positive(4)]),
    ("remainder-number", lambda x: x.remainder(-0.7), lambda x: x % -0.7, [normal(3, 4)]),
    ("remainder-reflected", lambda x: 2 % x, lambda x: 2 % x, [positive(3, 4)]),
    ("remainder_", lambda x: x.clone().remainder_(0.7), lambda x: x % 0.7, [normal(3, 4)]),
    ("fmod", lambda x, y: x.fmod(y), np.fmod, [normal(3, 4), positive(3, 1)]),
    ("fmod-number", lambda x: x.fmod(-0.7), lambda x: np.fmod(x, -0.7), [normal(3, 4)]),
    ("floor_divide", lambda x, y: x // y, np.floor_divide, [normal(3, 4), positive(4)]),
    ("floor_divide-number", lambda x: x.floor_divide(0.7), lambda x: x // 0.7, [normal(3, 4)]),
    ("floor_divide-reflected", lambda x: 2 // x, lambda x: 2 // x, [positive(3, 4)]),
    ("floor_divide_", lambda x: x.clone().floor_divide_(0.7), lambda x: x // 0.7, [normal(3, 4)]),
    ("pow", lambda x, y: x.pow(y), lambda x, y: x**y, [positive(3, 4), normal(4)]),
    ("pow-number", lambda x: x**2, lambda x: x**2, [normal(3, 4)]),
    ("rpow", lambda x: 2**x, lambda x: 2**x, [normal(3, 4)]),
    ("rpow-array", lambda x, y: y.data**x, lambda x, y: y**x, [normal(3, 4), positive(4)]),
    ("neg", lambda x: x.neg(), lambda x: -x, [normal(3, 4)]),
    ("-x", lambda x: -x, lambda x: -x, [normal(3, 4)]),
    ("neg_", lambda x: x.clone().neg_(), lambda x: -x, [normal(3, 4)]),
    ("matmul-op", lambda x, y: x @ y, lambda x, y: x @ y, [normal(2, 3), normal(3, 4)]),
    ("rmatmul", lambda x, y: y.data @ x, lambda x, y: y @ x, [normal(3, 4), normal(2, 3)]),
    ("exp", lambda x: x.exp(), np.exp, [normal(3, 4)]),
    ("exp_", lambda x: x.clone().exp_(), np.exp, [normal(3, 4)]),
    ("log", lambda x: x.log(), np.log, [positive(3, 4)]),
    ("log1p", lambda x: x.log1p(), np.log1p, [positive(3, 4)]),
    ("tanh", lambda x: x.tanh(), np.tanh, [normal(3, 4)]),
    ("tanh_", lambda x: x.clone().tanh_(), np.tanh, [normal(3, 4)]),
    ("sigmoid", lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), [normal(3, 4)]),
    ("sigmoid_", lambda x: x.clone().sigmoid_(), lambda x: 1 / (1 + np.exp(-x)), [normal(3, 4)]),
    ("sin", lambda x: x.sin(), np.sin, [normal(3, 4)]),
    ("cos", lambda x: x.cos(), np.cos, [normal(3, 4)]),
    ("tan", lambda x: x.tan(), np.tan, [unit(3, 4)]),
    ("asin", lambda x: x.asin(), np.arcsin, [unit(3, 4)]),
    ("acos", lambda x: x.acos(), np.arccos, [unit(3, 4)]),
    ("atan", lambda x: x.atan(), np.arctan, [normal(3, 4)]),
    ("sinh", lambda x: x.sinh(), np.sinh, [normal(3, 4)]),
    ("cosh", lambda x: x.cosh(), np.cosh, [normal(3, 4)]),
    ("abs", lambda x: x.abs(), np.abs, [normal(3, 4)]),
    ("sqrt", lambda x: x.sqrt(), np.sqrt, [positive(3, 4)]),
    ("cinv", lambda x: x.cinv(), lambda x: 1 / x, [positive(3, 4)]),
    ("reciprocal", lambda x: x.reciprocal(), lambda x: 1 / x, [positive(3, 4)]),
    ("floor", lambda x: x.floor(), np.floor, [normal(3, 4)]),
    ("ceil", lambda x: x.ceil(), np.ceil, [normal(3, 4)]),
    ("frac", lambda x: x.frac(), lambda x: x - np.trunc(x), [lambda rng: rng.standard_normal((3, 4)) * 3]),
    ("clamp", lambda x: x.clamp(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), [normal(3, 4)]),
    ("clamp-min", lambda x: x.clamp(min=0.1), lambda x: np.maximum(x, 0.1), [normal(3, 4)]),
    ("clamp-max", lambda x: x.clamp(max=0.1), lambda x: np.minimum(x, 0.1), [normal(3, 4)]),
    ("relu", lambda x: x.relu(), lambda x: np.maximum(x, 0), [normal(3, 4)]),
    ("cmax", lambda x, y: x.cmax(y), np.maximum, [normal(3, 1), normal(1, 4)]),
    ("cmax-number", lambda x: x.cmax(0.2), lambda x: np.maximum(x, 0.2), [normal(3, 4)]),
    ("cmin", lambda x, y: x.cmin(y), np.minimum, [normal(3, 4), normal(4)]),
    ("cmin-number", lambda x: x.cmin(0.2), lambda x: np.minimum(x, 0.2), [normal(3, 4)]),
    ("softmax", lambda x: x.softmax(), lambda x: _softmax(x, -1), [normal(3, 4)]),
    ("softmax-dim0", lambda x: x.softmax(0), lambda x: _softmax(x, 0), [normal(3, 4)]),
    ("log_softmax", lambda x: x.log_softmax(), lambda x: np.log(_softmax(x, -1)), [normal(3, 4)]),
    ("log_softmax-dim0", lambda x: x.log_softmax(0), lambda x: np.log(_softmax(x, 0)), [normal(3, 4)]),
    ("sum", lambda x: x.sum(), np.sum, [normal(3, 4)]),
    ("sum-dim0", lambda x: x.sum(0), lambda x: x.sum(0), [normal(3, 4)]),
    (
        "sum-dim-1-keepdim",
        lambda x: x.sum(-1, keepdim=True),
        lambda x: x.sum(-1, keepdims=True),
        [normal(3, 4)],
    ),
    ("sum-dims", lambda x: x.sum((0, 2)), lambda x: x.sum((0, 2)), [normal(2, 3, 4)]),
    ("sum-keepdim", lambda x: x.sum(keepdim=True), lambda x: x.sum(keepdims=True), [normal(3, 4)]),
    ("mean", lambda x: x.mean(), np.mean, [normal(3, 4)]),
    ("mean-dim1", lambda x: x.mean(1), lambda x: x.mean(1), [normal(3, 4)]),
    ("mean-dim0-keepdim", lambda x: x.mean(0, True), lambda x: x.mean(0, keepdims=True), [normal(3, 4)]),
    ("max", lambda x: x.max(), np.max, [normal(3, 4)]),
    ("min", lambda x: x.min(), np.min, [normal(3, 4)]),
    ("median", lambda x: x.median(), _median, [normal(3, 4)]),
    ("median-odd", lambda x: x.median(), _median, [normal(5)]),
    ("max-dim0", lambda x: x.max(0)[0], lambda x: x.max(0), [normal(3, 4)]),
    ("min-dim1", lambda x: x.min(1)[0], lambda x: x.min(1), [normal(3, 4)]),
    ("median-dim1", lambda x: x.median(1)[0], lambda x: _median(x, 1), [normal(3, 4)]),
    ("median-dim0", lambda x: x.median(0)[0], lambda x: _median(x, 0), [normal(3, 4)]),
    ("mode", lambda x: x.mode()[0], lambda x: np.array([3.0, 0.5, -2.0]), [with_repeats]),
    ("view", lambda x: x.view(4, 3), lambda x: x.reshape(4, 3), [normal(3, 4)]),
    ("view-tuple", lambda x: x.view((2, -1)), lambda x: x.reshape(2, -1), [normal(3, 4)]),
    ("reshape", lambda x: x.reshape(12), lambda x: x.reshape(12), [normal(3, 4)]),
    ("view_as", lambda x, y: x.view_as(y), lambda x, y: x.reshape(y.shape), [normal(3, 4), normal(2, 6)]),
    ("expand", lambda x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)), [normal(3, 1)]),
    ("expand-tuple", lambda x: x.expand((3, -1)), lambda x: np.broadcast_to(x, (3, 4)), [normal(1, 4)]),
    (
        "expand_as",
        lambda x, y: x.expand_as(y),
        lambda x, y: np.broadcast_to(x, y.shape),
        [normal(4), normal(3, 4)],
    ),
    ("t", lambda x: x.t(), lambda x: x.T, [normal(3, 4)]),
    ("t-1d", lambda x: x.t(), lambda x: x, [normal(4)]),
    ("viewAs", lambda x, y: x.viewAs(y), lambda x, y: x.reshape(y.shape), [normal(3, 4), normal(2, 6)]),
    (
        "expandAs",
        lambda x, y: x.expandAs(y),
        lambda x, y: np.broadcast_to(x, y.shape),
        [normal(4), normal(3, 4)],
    ),
    ("transpose", lambda x: x.transpose(0, 2), lambda x: x.swapaxes(0, 2), [normal(2, 3, 4)]),
    ("permute", lambda x: x.permute(1, 2, 0), lambda x: x.transpose(1, 2, 0), [normal(2, 3, 4)]),
    ("permute-tuple", lambda x: x.permute((2, 0, 1)), lambda x: x.transpose(2, 0, 1), [normal(2, 3, 4)]),
    ("squeeze", lambda x: x.squeeze(), np.squeeze, [normal(3, 1, 4, 1)]),
    ("squeeze-dim", lambda x: x.squeeze(1), lambda x: x.squeeze(1), [normal(3, 1, 4, 1)]),
    ("squeeze-not-1", lambda x: x.squeeze(0), lambda x: x, [normal(3, 1, 4)]),
    ("squeeze-dims", lambda x: x.squeeze((1, 2, -1)), lambda x: x.squeeze((1, 3)), [normal(3, 1, 4, 1)]),
    ("unsqueeze", lambda x: x.unsqueeze(1), lambda x: x[:, None], [normal(3, 4)]),
    ("unsqueeze-last", lambda x: x.unsqueeze(-1), lambda x: x[..., None], [normal(3, 4)]),
    ("getitem-int", lambda x: x[1], lambda x: x[1], [normal(3, 4)]),
    ("getitem-slice", lambda x: x[:, 1:3], lambda x: x[:, 1:3], [normal(3, 4)]),
    ("getitem-fancy", lambda x: x[[2, 0, 2]], lambda x: x[[2, 0, 2]], [normal(3, 4)]),
    ("getitem-mask", lambda x: x[x.data > 0], lambda x: x[x > 0], [normal(3, 4)]),
    ("getitem-var-mask", lambda x: x[Variable(x.data > 0)], lambda x: x[x > 0], [normal(3, 4)]),
    ("getitem-newaxis", lambda x: x[None, ..., 0], lambda x: x[None, ..., 0], [normal(3, 4)]),
    ("clone", lambda x: x.clone(), lambda x: x.copy(), [normal(3, 4)]),
    ("matmul", lambda x, y: x.matmul(y), np.matmul, [normal(2, 2, 3), normal(3, 4)]),
    ("mm", lambda x, y: x.mm(y), np.matmul, [normal(2, 3), normal(3, 4)]),
    ("mv", lambda x, y: x.mv(y), np.matmul, [normal(2, 3), normal(3)]),
    ("bmm", lambda x, y: x.bmm(y), np.matmul, [normal(2, 2, 3), normal(2, 3, 4)]),
    ("dot", lambda x, y: x.dot(y), np.dot, [normal(4), normal(4)]),
    (
        "addmm",
        lambda m, a, b: m.addmm(a, b),
        lambda m, a, b: m + a @ b,
        [normal(2, 4), normal(2, 3), normal(3, 4)],
    ),
    (
        "addmm-alpha-beta",
        lambda m, a, b: m.addmm(a, b, alpha=0.5, beta=-2),
        lambda m, a, b: 0.5 * m - 2 * (a @ b),
        [normal(4), normal(2, 3), normal(3, 4)],
    ),
    (
        "addmv",
        lambda v, m, x: v.addmv(m, x, 2, 3),
        lambda v, m, x: 2 * v + 3 * (m @ x),
        [normal(2), normal(2, 3), normal(3)],
    ),
    (
        "addr",
        lambda m, u, w: m.addr(u, w, 2, 3),
        lambda m, u, w: 2 * m + 3 * np.outer(u, w),
        [normal(2, 3), normal(2), normal(3)],
    ),
    (
        "addbmm",
        lambda m, a, b: m.addbmm(a, b, 2, 3),
        lambda m, a, b: 2 * m + 3 * (a @ b).sum(0),
        [normal(2, 4), normal(3, 2, 3), normal(3, 3, 4)],
    ),
    (
        "baddbmm",
        lambda m, a, b: m.baddbmm(a, b, 2, 3),
        lambda m, a, b: 2 * m + 3 * (a @ b),
        [normal(3, 2, 4), normal(3, 2, 3), normal(3, 3, 4)],
    ),
    ("cat", lambda x, y: vf.cat([x, y]), lambda x, y: np.concatenate([x, y]), [normal(2, 3), normal(1, 3)]),
    (
        "cat-dim1",
        lambda x, y: vf.cat((x, y), 1),
        lambda x, y: np.concatenate([x, y], 1),
        [normal(2, 3), normal(2, 2)],
    ),
]

METHOD_PARAMS = [pytest.param(call, expected, makers, id=name) for name, call, expected, makers in METHODS]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("call", "expected", "makers"), METHOD_PARAMS)
def test_method_forward(call, expected, makers, dtype, rng, device):
    arrays = [make(rng).astype(dtype) for make in makers]
    inputs = [Variable(on_device(device, a)) for a in arrays]
    out = call(*inputs)
    want = np.asarray(expected(*arrays))
    assert isinstance(out, Variable)
    assert type(out.data) is type(inputs[0].data) and out.device == inputs[0].device
    assert out.shape == want.shape
    assert out.dtype == dtype, f"{dtype.__name__} in, {out.dtype} out"
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(out.numpy(), want, rtol=tol, atol=tol)
    assert out.requires_grad


def test_every_public_method_has_a_forward_row():
    """A new method without a row here fails (names that are not ops are listed as exempt)."""
    exempt = {
        "backward", "register_hook", "remove_hook", "size", "dim", "numel", "item", "numpy", "type",
        "float", "double", "requires_grad", "data", "grad", "creator", "volatile", "shape", "dtype",
        "ndim", "device", "cuda", "cpu", "is_cuda", "grad_fn", "is_leaf", "next_functions", "output_nr",
        "retain_grad",
    }  # fmt: skip
    covered = {name.split("-")[0] for name, *_ in METHODS} | {"type", "float", "double"}
    names = {n for n in dir(Variable) if not n.startswith("_")} - exempt
    assert not sorted(names - covered), f"methods without a forward row: {sorted(names - covered)}"


@pytest.mark.parametrize(
    ("call", "dtype"),
    [
        (lambda x: x.type(np.float32), np.float32),
        (lambda x: x.type("float16"), np.float16),
        (lambda x: x.float(), np.float32),
        (lambda x: x.double(), np.float64),
        (lambda x: x.float().double(), np.float64),
    ],
)
def test_type_conversions(call, dtype, rng):
    x = Variable(rng.standard_normal((2, 3)))
    y = call(x)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.data, x.data.astype(dtype))
    y.sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad, np.ones((2, 3)))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_a_cast_to_integers_or_booleans_carries_no_gradient(dtype):
    """Rounding to integers has no derivative: the cast's output does not require grad (as in PyTorch)."""
    x = Variable(np.array([1.5, 2.5]))
    cast = x.type(dtype)
    assert cast.dtype == dtype and not cast.requires_grad
    (x * 2 + cast).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]  # only the x * 2 path; the cast's path would add 1


# --- reductions: 0-d results, keepdim, (values, indices) ----------------------------------------


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


# --- errors: the class, the op's name and the shapes ----------------------------------------------


def V(*shape):
    return Variable(np.ones(shape))


ERRORS = [
    ("matmul", lambda: V(2, 3) @ V(4, 2), ShapeError, ["matmul", "(2, 3)", "(4, 2)"]),
    ("matmul-1d", lambda: V(3).matmul(V(4)), ShapeError, ["matmul", "(3,)", "(4,)"]),
    ("matmul-batch", lambda: V(2, 3, 4) @ V(3, 4, 2), ShapeError, ["matmul", "(2, 3, 4)", "(3, 4, 2)"]),
    ("mm", lambda: V(2, 3).mm(V(4, 2)), ShapeError, ["mm", "(2, 3)", "(4, 2)"]),
    ("mm-ndim", lambda: V(2, 3).mm(V(3)), ShapeError, ["mm", "(2, 3)", "(3,)"]),
    ("mv", lambda: V(2, 3).mv(V(4)), ShapeError, ["mv", "(2, 3)", "(4,)"]),
    ("bmm", lambda: V(2, 3, 4).bmm(V(3, 4, 2)), ShapeError, ["bmm", "(2, 3, 4)", "(3, 4, 2)"]),
    ("dot", lambda: V(3).dot(V(4)), ShapeError, ["dot", "(3,)", "(4,)"]),
    ("addmm", lambda: V(3, 3).addmm(V(2, 3), V(3, 3)), ShapeError, ["addmm", "(3, 3)", "(2, 3)"]),
    ("addmm-inner", lambda: V(2, 3).addmm(V(2, 4), V(3, 3)), ShapeError, ["addmm", "(2, 4)", "(3, 3)"]),
    ("addmv", lambda: V(2).addmv(V(2, 3), V(4)), ShapeError, ["addmv", "(2, 3)", "(4,)"]),
    ("addr", lambda: V(2, 3).addr(V(2, 1), V(3)), ShapeError, ["addr", "(2, 1)", "(3,)"]),
    (
        "baddbmm",
        lambda: V(2, 2, 2).baddbmm(V(2, 2, 3), V(3, 3, 2)),
        ShapeError,
        ["baddbmm", "(2, 2, 3)", "(3, 3, 2)"],
    ),
    ("view", lambda: V(2, 3).view(4, 2), ShapeError, ["view", "(2, 3)", "(4, 2)"]),
    ("cat", lambda: vf.cat([V(2, 3), V(3, 2)]), ShapeError, ["cat", "(2, 3)", "(3, 2)"]),
    ("cat-ndim", lambda: vf.cat([V(2, 3), V(3)]), ShapeError, ["cat", "(2, 3)", "(3,)"]),
    ("cat-empty", lambda: vf.cat([]), ValueError, ["cat"]),
    ("expand", lambda: V(2, 3).expand(4, 3), ShapeError, ["expand", "(2, 3)", "(4, 3)"]),
    ("expand-fewer-dims", lambda: V(2, 3).expand(3), ShapeError, ["expand", "(2, 3)", "(3,)"]),
    ("add", lambda: V(2, 3) + V(4), ShapeError, ["add", "(2, 3)", "(4,)"]),
    ("sub", lambda: V(2, 3) - V(2, 2), ShapeError, ["sub", "(2, 3)", "(2, 2)"]),
    ("mul", lambda: V(2, 3) * V(3, 2), ShapeError, ["mul", "(2, 3)", "(3, 2)"]),
    ("div", lambda: V(2, 3) / V(4), ShapeError, ["div", "(2, 3)", "(4,)"]),
    ("pow", lambda: V(2, 3) ** V(4), ShapeError, ["pow", "(2, 3)", "(4,)"]),
    ("cmax", lambda: V(2, 3).cmax(V(4)), ShapeError, ["cmax", "(2, 3)", "(4,)"]),
    ("cmin", lambda: V(2, 3).cmin(V(4)), ShapeError, ["cmin", "(2, 3)", "(4,)"]),
    ("add_", lambda: V(1, 3).clone().add_(V(2, 3)), ShapeError, ["Add", "(1, 3)", "(2, 3)"]),
    ("sum-dim", lambda: V(2, 3).sum(2), ShapeError, ["sum", "dim 2", "2 dimension"]),
    ("mean-dim", lambda: V(2, 3).mean(-3), ShapeError, ["mean", "dim -3"]),
    ("max-dim", lambda: V(2, 3).max(5), ShapeError, ["max", "dim 5"]),
    ("min-dim", lambda: V(2, 3).min(2), ShapeError, ["min", "dim 2"]),
    ("median-dim", lambda: V(2, 3).median(2), ShapeError, ["median", "dim 2"]),
    ("mode-dim", lambda: V(2, 3).mode(2), ShapeError, ["mode", "dim 2"]),
    ("softmax-dim", lambda: V(2, 3).softmax(2), ShapeError, ["softmax", "dim 2"]),
    ("log_softmax-dim", lambda: V(2, 3).log_softmax(-3), ShapeError, ["log_softmax", "dim -3"]),
    ("transpose-dim", lambda: V(2, 3).transpose(0, 2), ShapeError, ["transpose", "dim 2"]),
    ("permute", lambda: V(2, 3).permute(0, 0), ShapeError, ["permute", "(2, 3)"]),
    ("squeeze-dim", lambda: V(2, 3).squeeze(2), ShapeError, ["squeeze", "dim 2"]),
    ("unsqueeze-dim", lambda: V(2, 3).unsqueeze(3), ShapeError, ["unsqueeze", "dim 3"]),
    ("cat-dim", lambda: vf.cat([V(2, 3), V(2, 3)], 2), ShapeError, ["cat", "dim 2"]),
    ("index", lambda: V(2, 3)[5], ShapeError, ["5", "(2, 3)"]),
    ("index-second-dim", lambda: V(2, 3)[0, 3], ShapeError, ["3", "(2, 3)"]),
    ("index-fancy", lambda: V(2, 3)[[0, 7]], ShapeError, ["7", "(2, 3)"]),
    ("index-too-many", lambda: V(2, 3)[0, 0, 0], ShapeError, ["(2, 3)"]),
    ("t", lambda: V(2, 3, 4).t(), ValueError, ["t", "(2, 3, 4)"]),
    ("max-empty", lambda: V(0, 3).max(), ShapeError, ["max", "(0, 3)"]),
    ("max-empty-dim", lambda: V(0, 3).max(0), ShapeError, ["max", "dim 0, which has size 0", "(0, 3)"]),
    ("max-two-dims", lambda: V(2, 3).max((0, 1)), ShapeError, ["max: takes one dim", "(0, 1)"]),
    ("median-two-dims", lambda: V(2, 3).median((1, 0)), ShapeError, ["median: takes one dim", "(1, 0)"]),
    ("squeeze-dim-twice", lambda: V(1, 1).squeeze((0, -2)), ShapeError, ["squeeze", "(0, -2)", "twice"]),
    ("permute-dim-too-big", lambda: V(2, 3, 4).permute(3, 1, 2), ShapeError, ["permute", "(3, 1, 2)"]),
    ("permute-dim-too-small", lambda: V(2, 3).permute(0, -3), ShapeError, ["permute", "(0, -3)"]),
    ("index-step-0", lambda: V(2, 3)[::0], ShapeError, ["slice step cannot be zero", "(2, 3)"]),
    ("type-unknown", lambda: V(2).type("foo"), DTypeError, ["type: 'foo' is not a dtype"]),
    ("type-strings", lambda: V(2).type("U3"), DTypeError, ["type: 'U3' is not a dtype"]),
]


@pytest.mark.parametrize(
    ("call", "error", "words"), [pytest.param(c, e, w, id=name) for name, c, e, w in ERRORS]
)
def test_bad_shapes_raise_clear_errors(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_item_assignment_is_refused():
    with pytest.raises(TypeError, match="item assignment"):
        V(2)[0] = 1.0


def test_inplace_mul_by_variable_is_refused():
    with pytest.raises(TypeError, match="mul_"):
        V(2).clone().mul_(V(2))


@pytest.mark.parametrize("method", ["max", "min", "median"])
def test_selection_over_all_elements_honours_keepdim(method):
    data = np.array([[1.0, 5.0, -2.0], [3.0, 2.0, 0.5]])
    x = Variable(data)
    kept = getattr(x, method)(keepdim=True)
    assert kept.shape == (1, 1)
    assert kept.item() == getattr(x, method)().item()
    kept.sum().backward()
    assert x.grad.sum() == 1.0 and x.grad[np.unravel_index(np.argmax(x.grad), data.shape)] == 1.0
