"""varfunc against PyTorch (float64): the random graphs of tests/graphs.py, and one row per op that
PyTorch has an equivalent for. Outputs and leaf gradients must agree to about 1e-7. The names of
the nodes are compared in test_torch_names.py.

Skipped when torch is not installed (``pip install -e '.[oracle]'`` pins the version).
"""

from __future__ import annotations

import numpy as np
import pytest
from graphs import build, programs
from hypothesis import given, note, settings
from makers import avoiding, distinct, normal, off_integers, positive, unit

import varfunc as vf
from varfunc import Variable
from varfunc import functions as F

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

RTOL, ATOL = 1e-7, 1e-10


def _compare(vf_fn, torch_fn, arrays, seed_rng, outputs=1):
    """Run both on the same float64 data; compare outputs, then leaf gradients for a random seed."""
    leaves = [Variable(a) for a in arrays]
    tensors = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    got, want = vf_fn(*leaves), torch_fn(*tensors)
    if outputs == 1:
        got, want = (got,), (want,)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g.data, w.detach().numpy(), rtol=RTOL, atol=ATOL)
    out, ref = got[0], want[0]
    seed = seed_rng.standard_normal(out.shape)
    out.backward(seed)
    ref.backward(torch.tensor(seed))
    for leaf, tensor in zip(leaves, tensors):
        if tensor.requires_grad:  # torch leaves .grad None for a leaf the output does not use
            want_grad = np.zeros(leaf.shape) if tensor.grad is None else tensor.grad.numpy()
            np.testing.assert_allclose(leaf.grad, want_grad, rtol=RTOL, atol=ATOL)


# --- random graphs --------------------------------------------------------------------------------


@settings(max_examples=40)
@given(programs())
def test_random_graphs_match_torch(program):
    note(str(program))
    _compare(
        lambda *xs: build(program, *xs),
        lambda *ts: build(program, *ts),
        program.leaf_data(),
        np.random.default_rng(program.seed + 1),
    )


# --- one row per op -------------------------------------------------------------------------------


# (id, varfunc, torch, inputs, number of outputs compared)
OPS = [
    ("add", lambda a, b: F.Add()(a, b), torch.add, [normal(3, 1), normal(1, 4)]),
    ("sub", lambda a, b: F.Sub()(a, b), torch.sub, [normal(3, 4), normal(4)]),
    ("mul", lambda a, b: F.Mul()(a, b), torch.mul, [normal(4), normal(3, 4)]),
    ("div", lambda a, b: F.Div()(a, b), torch.div, [normal(3, 4), positive(3, 1)]),
    ("pow", lambda a, b: F.Pow()(a, b), torch.pow, [positive(3, 4), normal(1, 4)]),
    ("add-constant", lambda a: F.AddConstant(2.5)(a), lambda a: a + 2.5, [normal(3, 4)]),
    ("sub-constant", lambda a: F.SubConstant(2.5)(a), lambda a: a - 2.5, [normal(3, 4)]),
    ("rsub-constant", lambda a: F.SubConstant(2.5, True)(a), lambda a: 2.5 - a, [normal(3, 4)]),
    ("mul-constant", lambda a: F.MulConstant(-1.5)(a), lambda a: a * -1.5, [normal(3, 4)]),
    ("div-constant", lambda a: F.DivConstant(4.0)(a), lambda a: a / 4.0, [normal(3, 4)]),
    ("rdiv-constant", lambda a: F.DivConstant(2.0, True)(a), lambda a: 2.0 / a, [positive(3, 4)]),
    ("pow-constant", lambda a: F.PowConstant(2.5)(a), lambda a: a**2.5, [positive(3, 4)]),
    ("rpow-constant", lambda a: F.PowConstant(3.0, True)(a), lambda a: 3.0**a, [normal(3, 4)]),
    ("neg", lambda a: F.Negate()(a), torch.neg, [normal(3, 4)]),
    ("exp", lambda a: F.Exp()(a), torch.exp, [normal(3, 4)]),
    ("log", lambda a: F.Log()(a), torch.log, [positive(3, 4)]),
    ("log1p", lambda a: F.Log1p()(a), torch.log1p, [positive(3, 4)]),
    ("tanh", lambda a: F.Tanh()(a), torch.tanh, [normal(3, 4)]),
    ("sigmoid", lambda a: F.Sigmoid()(a), torch.sigmoid, [normal(3, 4)]),
    ("sigmoid-large", lambda a: F.Sigmoid()(a), torch.sigmoid, [lambda rng: rng.standard_normal(6) * 40]),
    ("sin", lambda a: F.Sin()(a), torch.sin, [normal(3, 4)]),
    ("cos", lambda a: F.Cos()(a), torch.cos, [normal(3, 4)]),
    ("tan", lambda a: F.Tan()(a), torch.tan, [unit(3, 4)]),
    ("asin", lambda a: F.Asin()(a), torch.asin, [unit(3, 4)]),
    ("acos", lambda a: F.Acos()(a), torch.acos, [unit(3, 4)]),
    ("atan", lambda a: F.Atan()(a), torch.atan, [normal(3, 4)]),
    ("sinh", lambda a: F.Sinh()(a), torch.sinh, [normal(3, 4)]),
    ("cosh", lambda a: F.Cosh()(a), torch.cosh, [normal(3, 4)]),
    ("abs", lambda a: F.Abs()(a), torch.abs, [avoiding(0.0, shape=(3, 4))]),
    (
        "clamp",
        lambda a: F.Clamp(-0.5, 0.5)(a),
        lambda a: a.clamp(-0.5, 0.5),
        [avoiding(-0.5, 0.5, shape=(4, 5))],
    ),
    ("relu", lambda a: F.Threshold(0, 0)(a), torch.relu, [avoiding(0.0, shape=(4, 5))]),
    (
        "threshold",
        lambda a: F.Threshold(0.2, -1.5)(a),
        lambda a: torch.nn.functional.threshold(a, 0.2, -1.5),
        [avoiding(0.2, shape=(4, 5))],
    ),
    ("sqrt", lambda a: F.Sqrt()(a), torch.sqrt, [positive(3, 4)]),
    ("cinv", lambda a: F.Cinv()(a), torch.reciprocal, [positive(3, 4)]),
    ("cmax", lambda a, b: F.Cmax()(a, b), torch.maximum, [distinct(3, 4), distinct(4)]),
    ("cmin", lambda a, b: F.Cmin()(a, b), torch.minimum, [distinct(3, 4), distinct(4)]),
    (
        "cmax-constant",
        lambda a: F.CmaxConstant(0.2)(a),
        lambda a: a.clamp(min=0.2),
        [avoiding(0.2, shape=(3, 4))],
    ),
    (
        "cmin-constant",
        lambda a: F.CminConstant(0.2)(a),
        lambda a: a.clamp(max=0.2),
        [avoiding(0.2, shape=(3, 4))],
    ),
    ("floor", lambda a: F.Floor()(a), torch.floor, [off_integers(3, 4)]),
    ("ceil", lambda a: F.Ceil()(a), torch.ceil, [off_integers(3, 4)]),
    ("frac", lambda a: F.Frac()(a), torch.frac, [off_integers(3, 4)]),
    ("remainder", lambda a, b: F.Remainder()(a, b), torch.remainder, [normal(3, 4), avoiding(0, shape=(4,))]),
    ("fmod", lambda a, b: F.Remainder(True)(a, b), torch.fmod, [normal(3, 4), avoiding(0, shape=(3, 1))]),
    ("remainder-constant", lambda a: F.RemainderConstant(-1.5)(a), lambda a: a % -1.5, [normal(3, 4)]),
    (
        "floor-divide",
        lambda a, b: F.FloorDivide()(a, b),
        lambda a, b: torch.div(a, b, rounding_mode="floor"),  # a // b: the same, with no gradient in torch
        [normal(3, 4), avoiding(0, shape=(4,))],
    ),
    (
        "floor-divide-constant",
        lambda a: F.FloorDivideConstant(0.7)(a),
        lambda a: a.div(0.7, rounding_mode="floor"),
        [normal(3, 4)],
    ),
    ("sum", lambda a: F.Sum()(a), torch.sum, [normal(2, 3, 4)]),
    ("sum-dim", lambda a: F.Sum(1)(a), lambda a: a.sum(1), [normal(2, 3, 4)]),
    (
        "sum-dims-keepdim",
        lambda a: F.Sum((0, 2), True)(a),
        lambda a: a.sum((0, 2), keepdim=True),
        [normal(2, 3, 4)],
    ),
    ("mean", lambda a: F.Mean()(a), torch.mean, [normal(2, 3, 4)]),
    (
        "mean-dim-keepdim",
        lambda a: F.Mean(-1, True)(a),
        lambda a: a.mean(-1, keepdim=True),
        [normal(2, 3, 4)],
    ),
    ("max", lambda a: F.Max()(a), torch.max, [distinct(3, 4)]),
    ("min", lambda a: F.Min()(a), torch.min, [distinct(3, 4)]),
    ("median", lambda a: F.Median()(a), torch.median, [distinct(3, 4)]),
    ("median-odd", lambda a: F.Median()(a), torch.median, [distinct(5)]),
    *[
        (
            f"{name}-dim{dim}{'-keepdim' if keep else ''}",
            vf_op(dim, keep),
            t_op(dim, keep),
            [distinct(2, 3, 4)],
            2,
        )
        for name, vf_op, t_op in [
            ("max", lambda d, k: lambda a: F.Max(d, k)(a), lambda d, k: lambda a: a.max(d, keepdim=k)),
            ("min", lambda d, k: lambda a: F.Min(d, k)(a), lambda d, k: lambda a: a.min(d, keepdim=k)),
            (
                "median",
                lambda d, k: lambda a: F.Median(d, k)(a),
                lambda d, k: lambda a: a.median(d, keepdim=k),
            ),
            # All values distinct: every count is 1 and the mode is the smallest value (and its index).
            ("mode", lambda d, k: lambda a: F.Mode(d, k)(a), lambda d, k: lambda a: a.mode(d, keepdim=k)),
        ]
        for dim, keep in [(0, False), (1, False), (-1, True)]
    ],
    ("index-int", lambda a: F.Index(1)(a), lambda a: a[1], [normal(4, 3)]),
    ("index-slice", lambda a: F.Index((slice(1, None), 0))(a), lambda a: a[1:, 0], [normal(4, 3)]),
    ("index-repeated", lambda a: F.Index([0, 2, 0, 0])(a), lambda a: a[[0, 2, 0, 0]], [normal(4, 3)]),
    (
        "index-repeated-pairs",
        lambda a: F.Index(([0, 0, 3], [1, 1, 2]))(a),
        lambda a: a[[0, 0, 3], [1, 1, 2]],
        [normal(4, 3)],
    ),
    (
        "index-mask",
        lambda a: F.Index(np.array([True, False, True, True]))(a),
        lambda a: a[torch.tensor([True, False, True, True])],
        [normal(4, 3)],
    ),
    ("view", lambda a: F.View(2, 6)(a), lambda a: a.view(2, 6), [normal(3, 4)]),
    ("expand", lambda a: F.Expand(2, 3, 4)(a), lambda a: a.expand(2, 3, 4), [normal(3, 1)]),
    ("transpose", lambda a: F.Transpose(0, 2)(a), lambda a: a.transpose(0, 2), [normal(2, 3, 4)]),
    ("permute", lambda a: F.Permute(2, 0, 1)(a), lambda a: a.permute(2, 0, 1), [normal(2, 3, 4)]),
    ("squeeze", lambda a: F.Squeeze()(a), torch.squeeze, [normal(3, 1, 4, 1)]),
    ("squeeze-dim", lambda a: F.Squeeze(1)(a), lambda a: a.squeeze(1), [normal(3, 1, 4, 1)]),
    ("squeeze-dims", lambda a: F.Squeeze((1, 2, 3))(a), lambda a: a.squeeze((1, 2, 3)), [normal(3, 1, 4, 1)]),
    ("unsqueeze", lambda a: F.Unsqueeze(1)(a), lambda a: a.unsqueeze(1), [normal(3, 4)]),
    ("cat", lambda a, b: F.Concat(1)(a, b), lambda a, b: torch.cat([a, b], 1), [normal(2, 3), normal(2, 2)]),
    ("clone", lambda a: F.Clone()(a), torch.clone, [normal(3, 4)]),
    *[
        (
            f"matmul-{len(sa)}d@{len(sb)}d",
            lambda a, b: F.Matmul()(a, b),
            torch.matmul,
            [normal(*sa), normal(*sb)],
        )
        for sa, sb in [
            ((3,), (3,)),
            ((3,), (3, 4)),
            ((2, 3), (3,)),
            ((2, 3), (3, 4)),
            ((2, 2, 3), (2, 3, 4)),
            ((2, 2, 3), (3, 4)),
            ((3,), (2, 3, 4)),
            ((2, 2, 3), (3,)),
            ((2, 1, 2, 3), (3, 3, 2)),
        ]
    ],
    ("mm", lambda a, b: F.Mm()(a, b), torch.mm, [normal(2, 3), normal(3, 4)]),
    ("mv", lambda a, b: F.Mv()(a, b), torch.mv, [normal(2, 3), normal(3)]),
    ("bmm", lambda a, b: F.Bmm()(a, b), torch.bmm, [normal(2, 2, 3), normal(2, 3, 4)]),
    ("dot", lambda a, b: F.Dot()(a, b), torch.dot, [normal(4), normal(4)]),
    # v0.1's alpha scales the added term and beta the product: torch's names are the other way round.
    (
        "addmm",
        lambda m, a, b: F.Addmm(0.5, -2.0)(m, a, b),
        lambda m, a, b: torch.addmm(m, a, b, beta=0.5, alpha=-2.0),
        [normal(2, 4), normal(2, 3), normal(3, 4)],
    ),
    (
        "addmm-broadcast",
        lambda m, a, b: F.Addmm(1.5, 0.5)(m, a, b),
        lambda m, a, b: torch.addmm(m, a, b, beta=1.5, alpha=0.5),
        [normal(4), normal(2, 3), normal(3, 4)],
    ),
    (
        "addmv",
        lambda v, m, x: F.Addmv(0.5, -2.0)(v, m, x),
        lambda v, m, x: torch.addmv(v, m, x, beta=0.5, alpha=-2.0),
        [normal(2), normal(2, 3), normal(3)],
    ),
    (
        "addr",
        lambda m, u, w: F.Addr(0.5, -2.0)(m, u, w),
        lambda m, u, w: torch.addr(m, u, w, beta=0.5, alpha=-2.0),
        [normal(2, 3), normal(2), normal(3)],
    ),
    (
        "addbmm",
        lambda m, a, b: F.Addbmm(0.5, -2.0)(m, a, b),
        lambda m, a, b: torch.addbmm(m, a, b, beta=0.5, alpha=-2.0),
        [normal(2, 4), normal(3, 2, 3), normal(3, 3, 4)],
    ),
    (
        "baddbmm",
        lambda m, a, b: F.Baddbmm(0.5, -2.0)(m, a, b),
        lambda m, a, b: torch.baddbmm(m, a, b, beta=0.5, alpha=-2.0),
        [normal(3, 2, 4), normal(3, 2, 3), normal(3, 3, 4)],
    ),
    ("softmax", lambda a: F.Softmax(-1)(a), lambda a: a.softmax(-1), [normal(3, 4)]),
    ("softmax-dim0", lambda a: F.Softmax(0)(a), lambda a: a.softmax(0), [normal(3, 4)]),
    ("log_softmax", lambda a: F.LogSoftmax(-1)(a), lambda a: a.log_softmax(-1), [normal(3, 4)]),
    (
        "log_softmax-large",
        lambda a: F.LogSoftmax(1)(a),
        lambda a: a.log_softmax(1),
        [lambda rng: rng.standard_normal((2, 5)) * 50],
    ),
]


def _params():
    for row in OPS:
        name, vf_fn, torch_fn, makers = row[:4]
        outputs = row[4] if len(row) > 4 else 1
        yield pytest.param(vf_fn, torch_fn, makers, outputs, id=name)


@pytest.mark.parametrize(("vf_fn", "torch_fn", "makers", "outputs"), list(_params()))
def test_op_matches_torch(vf_fn, torch_fn, makers, outputs, rng):
    arrays = [make(rng) for make in makers]
    _compare(vf_fn, torch_fn, arrays, rng, outputs)


def test_index_with_repeated_indices_adds_gradients_up(rng):
    a = rng.standard_normal((4, 3))
    x, t = Variable(a), torch.tensor(a, requires_grad=True)
    x[[1, 1, 1, 3]].sum().backward()
    t[[1, 1, 1, 3]].sum().backward()
    np.testing.assert_array_equal(x.grad, t.grad.numpy())
    assert x.grad[1].tolist() == [3.0, 3.0, 3.0]


def test_max_with_dim_indices_match_torch(rng):
    a = distinct(3, 5)(rng)
    for dim in (0, 1):
        values, indices = Variable(a).max(dim)
        ref = torch.tensor(a).max(dim)
        np.testing.assert_array_equal(values.data, ref.values.numpy())
        np.testing.assert_array_equal(indices.data, ref.indices.numpy())


def test_median_with_a_nan_matches_torch():
    """A slice holding a NaN: the median is NaN, its index the first NaN's, the gradient goes there."""
    a = np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 2.0, 3.0, 1.0], [np.nan, 2.0, np.nan, 1.0]])
    for dim in (0, 1):
        x, t = Variable(a), torch.tensor(a, requires_grad=True)
        (values, indices), ref = x.median(dim), t.median(dim)
        np.testing.assert_array_equal(values.data, ref.values.detach().numpy())  # nan == nan here
        np.testing.assert_array_equal(indices.data, ref.indices.numpy())
        seed = np.arange(1.0, values.shape[0] + 1)
        values.backward(seed)
        ref.values.backward(torch.tensor(seed))
        np.testing.assert_array_equal(x.grad, t.grad.numpy())
    b = np.array([1.0, np.nan, 3.0])  # one NaN: torch's even split of the gradient has one place to go
    y, u = Variable(b), torch.tensor(b, requires_grad=True)
    m, ref_m = y.median(), u.median()
    assert np.isnan(m.item()) and torch.isnan(ref_m)
    m.backward()
    ref_m.backward()
    np.testing.assert_array_equal(y.grad, u.grad.numpy())


def test_mode_value_matches_torch_with_repeats():
    """With repeated values the mode value agrees; the index may differ (torch picks the last one)."""
    a = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.5, 0.5, -1.0, 4.0, 2.0], [7.0, -2.0, 7.0, -2.0, -2.0]])
    values, indices = Variable(a).mode(1)
    ref = torch.tensor(a).mode(1)
    np.testing.assert_array_equal(values.data, ref.values.numpy())
    np.testing.assert_array_equal(a[np.arange(3), indices.data], values.data)


def test_torch_is_the_pinned_version():
    assert torch.__version__.split("+")[0] == "2.13.0"


def test_every_op_with_a_torch_equivalent_is_compared():
    """Type has no float64 -> float64 analogue worth comparing; every other op class has a row."""
    names = {row[0] for row in OPS}
    rows_for = {
        "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "AddConstant": "add-constant",
        "SubConstant": "rsub-constant", "MulConstant": "mul-constant", "DivConstant": "rdiv-constant",
        "PowConstant": "rpow-constant", "Negate": "neg", "Exp": "exp", "Log": "log", "Log1p": "log1p",
        "Tanh": "tanh", "Sigmoid": "sigmoid", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "asin",
        "Acos": "acos", "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Abs": "abs", "Clamp": "clamp",
        "Sqrt": "sqrt", "Cinv": "cinv", "Cmax": "cmax", "Cmin": "cmin", "CmaxConstant": "cmax-constant",
        "CminConstant": "cmin-constant", "Floor": "floor", "Ceil": "ceil", "Frac": "frac", "Sum": "sum",
        "Mean": "mean", "Max": "max-dim0", "Min": "min-dim0", "Median": "median-dim0", "Mode": "mode-dim0",
        "Index": "index-repeated", "View": "view", "Expand": "expand", "Transpose": "transpose",
        "Permute": "permute", "Squeeze": "squeeze", "Unsqueeze": "unsqueeze", "Concat": "cat",
        "Clone": "clone", "Matmul": "matmul-1d@1d", "Mm": "mm", "Mv": "mv", "Bmm": "bmm", "Dot": "dot",
        "Addmm": "addmm", "Addmv": "addmv", "Addr": "addr", "Addbmm": "addbmm", "Baddbmm": "baddbmm",
        "Softmax": "softmax", "LogSoftmax": "log_softmax", "Threshold": "threshold",
        "Remainder": "remainder", "RemainderConstant": "remainder-constant", "FloorDivide": "floor-divide",
        "FloorDivideConstant": "floor-divide-constant",
    }  # fmt: skip
    op_names = {
        n for n in F.__all__ if isinstance(getattr(F, n), type) and issubclass(getattr(F, n), vf.Function)
    }
    assert op_names - {"Type", "CpuTransfer", "CudaTransfer"} == set(rows_for)  # moves: test_devices.py
    assert not {row for row in rows_for.values() if row not in names}
