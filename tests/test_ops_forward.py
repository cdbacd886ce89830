"""Forward values of every Variable method against the NumPy expression (as v0.1.3's method_tests),
dtypes and shapes kept. Reductions are in test_ops_reductions.py, errors for bad shapes in
test_ops_errors.py."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import on_device
from makers import normal, positive, unit, with_repeats

import varfunc as vf
from varfunc import Variable
from varfunc.backend import to_device
from varfunc.habits import INSTEAD


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
    ("T", lambda x: x.T, lambda x: x.T, [normal(3, 4)]),
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
    np.testing.assert_allclose(to_device(out.data, "cpu"), want, rtol=tol, atol=tol)
    assert out.requires_grad


def test_every_public_method_has_a_forward_row():
    """A new method without a row here fails (names that are not ops are listed as exempt)."""
    exempt = {
        "backward", "register_hook", "remove_hook", "size", "dim", "numel", "item", "numpy", "type",
        "float", "double", "requires_grad", "data", "grad", "creator", "volatile", "shape", "dtype",
        "ndim", "device", "cuda", "cpu", "is_cuda", "grad_fn", "is_leaf", "next_functions", "output_nr",
    }  # fmt: skip
    covered = {name.split("-")[0] for name, *_ in METHODS} | {"type", "float", "double"}
    names = {n for n in dir(Variable) if not n.startswith("_")} - exempt - INSTEAD.keys()  # hints only
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


@pytest.mark.parametrize(
    "make, shown",
    [
        (lambda x: x.view(3, 2), "View(3, 2)"),
        (lambda x: x.expand(4, 2, 3), "Expand(4, 2, 3)"),
        (lambda x: x.transpose(1, 0), "Transpose(1, 0)"),
        (lambda x: x.permute(1, 0), "Permute(1, 0)"),
        (lambda x: x.squeeze(), "Squeeze()"),
        (lambda x: x.unsqueeze(0).squeeze(0), "Squeeze(dim=0)"),
        (lambda x: x.unsqueeze(-1), "Unsqueeze(dim=-1)"),
        (lambda x: x.type(np.float32), "Type(float32)"),
        (lambda x: x.type("int64"), "Type(int64)"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_shape_or_type_op_shows_its_settings_in_its_repr(make, shown):
    """The graph's labels and the kit's errors print a node by its repr (a dtype class printed itself
    as <class 'numpy.float32'>)."""
    assert repr(make(Variable(np.ones((2, 3)))).creator) == shown
