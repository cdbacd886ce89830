"""Every InplaceFunction run in place on a non-leaf against its out-of-place result, as v0.1.3's
tests did, and under gradcheck; the in-place calls that are refused."""

from __future__ import annotations

import numpy as np
import pytest
from makers import nonzero, normal, positive
from test_ops_gradcheck import _op_classes

import varfunc as vf
from varfunc import Variable
from varfunc import functions as F
from varfunc.errors import InplaceError

# --- in place on a non-leaf ------------------------------------------------------------------------

INPLACE = [
    (F.Add, (), normal(3, 4), normal(3, 4), "same-shape"),
    (F.Add, (), normal(3, 4), normal(4), "broadcast-b"),
    (F.Sub, (), normal(3, 4), normal(3, 4), "same-shape"),
    (F.Sub, (), normal(3, 4), normal(3, 1), "broadcast-b"),
    (F.AddConstant, (1.5,), normal(3, 4), None, ""),
    (F.SubConstant, (1.5,), normal(3, 4), None, "a-c"),
    (F.SubConstant, (1.5, True), normal(3, 4), None, "c-a"),
    (F.MulConstant, (-2.0,), normal(3, 4), None, ""),
    (F.DivConstant, (-2.0,), normal(3, 4), None, "a/c"),
    (F.RemainderConstant, (1.5,), normal(3, 4), None, "a%c"),
    (F.FloorDivideConstant, (0.7,), normal(3, 4), None, "a//c"),
    (F.Negate, (), normal(3, 4), None, ""),
    (F.Exp, (), normal(3, 4), None, ""),
    (F.Tanh, (), normal(3, 4), None, ""),
    (F.Sigmoid, (), normal(3, 4), None, ""),
    (F.Sqrt, (), positive(3, 4), None, ""),
    (F.Cinv, (), nonzero(3, 4), None, ""),
]


INPLACE_PARAMS = [
    pytest.param(op, args, make_a, make_b, id=op.__name__ + (f"-{label}" if label else ""))
    for op, args, make_a, make_b, label in INPLACE
]


def test_every_inplace_function_is_run_in_place():
    inplace_ops = {cls for cls in _op_classes().values() if issubclass(cls, vf.InplaceFunction)}
    assert inplace_ops == {op for op, *_ in INPLACE}


def _run(op, args, inplace, a, b, seed):
    x = Variable(a)
    inputs = [x * 1]  # a non-leaf: a leaf that requires grad may not be changed in place
    y = Variable(b) if b is not None else None
    if y is not None:
        inputs.append(y)
    out = op(*args, inplace=inplace)(*inputs)
    if inplace:
        assert out is inputs[0]  # the changed input Variable is the output
    (out * Variable(seed, requires_grad=False)).sum().backward()
    return out.data.copy(), x.grad.copy(), (None if y is None else y.grad.copy())


@pytest.mark.parametrize(("op", "args", "make_a", "make_b"), INPLACE_PARAMS)
def test_inplace_matches_out_of_place(op, args, make_a, make_b, rng):
    a = make_a(rng)
    b = make_b(rng) if make_b else None
    seed = rng.standard_normal(a.shape)
    expected = _run(op, args, False, a, b, seed)
    got = _run(op, args, True, a, b, seed)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    if b is not None:
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-12)


@pytest.mark.parametrize(("op", "args", "make_a", "make_b"), INPLACE_PARAMS)
def test_inplace_gradcheck(op, args, make_a, make_b, rng):
    inputs = [make_a(rng)] + ([make_b(rng)] if make_b else [])
    assert vf.gradcheck(lambda a, *rest: op(*args, inplace=True)(a.clone(), *rest), inputs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: F.DivConstant(2.0, div_by_tensor=True, inplace=True),
        lambda: F.RemainderConstant(2.0, tensor_divisor=True, inplace=True),
        lambda: F.FloorDivideConstant(2.0, tensor_divisor=True, inplace=True),
    ],
)
def test_a_number_over_a_variable_cannot_run_in_place(make):
    with pytest.raises(InplaceError, match="Constant: c .* a cannot run in place"):
        make()


def test_inplace_on_a_leaf_that_requires_grad_is_refused(rng):
    x = Variable(normal(3)(rng))
    with pytest.raises(InplaceError, match="Exp"):
        F.Exp(inplace=True)(x)
