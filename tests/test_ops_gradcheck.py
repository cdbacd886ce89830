"""One gradcheck per op class of varfunc.functions (float64, broadcast shapes included); every
InplaceFunction run in place is in test_ops_inplace.py.

Inputs stay away from the points where an op has no derivative: ties and kinks for abs, clamp,
max/min and the rest, positive values for log and sqrt, (-1, 1) for asin and acos.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import gpu_only, on_device
from makers import avoiding, distinct, fixed, nonzero, normal, off_integers, positive, unit

import varfunc as vf
from varfunc import Variable
from varfunc import functions as F

# --- the table ------------------------------------------------------------------------------------


@dataclass
class Case:
    op: type
    inputs: tuple
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    check: dict = field(default_factory=dict)  # extra gradcheck arguments
    id: str = ""

    def fn(self, *xs):
        return self.op(*self.args, **self.kwargs)(*xs)


def case(op, *inputs, args=(), kwargs=None, check=None, id=""):
    label = op.__name__ + (f"-{id}" if id else "")
    return pytest.param(Case(op, inputs, args, kwargs or {}, check or {}, label), id=label)


# Shapes that broadcast: both ways round, against a vector and against a 0-d.
BROADCAST = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((), (2, 3)), ((2, 3), (1,))]


def _binary(op, make_a=normal, make_b=normal):
    return [case(op, make_a(*a), make_b(*b), id=f"{a}x{b}") for a, b in BROADCAST]


CMAX_A = fixed([[-1.2], [0.1], [1.3]])  # (3, 1): each row wins against some columns and loses others
CMAX_B = fixed([[-0.6, 0.6, 1.9, -1.9]])  # (1, 4): at least 0.3 from every value of CMAX_A

CASES = [
    # basic_ops
    *_binary(F.Add),
    *_binary(F.Sub),
    *_binary(F.Mul),
    *_binary(F.Div, normal, nonzero),
    *_binary(F.Pow, positive, normal),
    case(F.AddConstant, normal(3, 4), args=(2.5,)),
    case(F.SubConstant, normal(3, 4), args=(2.5,), id="a-c"),
    case(F.SubConstant, normal(3, 4), args=(2.5,), kwargs={"sub_tensor": True}, id="c-a"),
    case(F.MulConstant, normal(3, 4), args=(-1.5,)),
    case(F.DivConstant, normal(3, 4), args=(-1.5,), id="a/c"),
    case(F.DivConstant, nonzero(3, 4), args=(2.0,), kwargs={"div_by_tensor": True}, id="c/a"),
    case(F.PowConstant, positive(3, 4), args=(2.5,), id="a**c"),
    case(F.PowConstant, normal(3, 4), args=(3,), id="a**3-negative-base"),
    case(F.PowConstant, normal(3, 4), args=(2.0,), kwargs={"tensor_power": True}, id="c**a"),
    case(F.PowConstant, normal(3, 4), args=(0.5,), kwargs={"tensor_power": True}, id="c**a-c<1"),
    case(F.Negate, normal(3, 4)),
    # modulo: Python's % and C's fmod, a Variable or a number on either side; // has gradient zero
    *_binary(F.Remainder, normal, nonzero),
    case(F.Remainder, normal(3, 4), nonzero(3, 1), kwargs={"fmod": True}, id="fmod"),
    case(F.RemainderConstant, normal(3, 4), args=(1.5,), id="a%c"),
    case(F.RemainderConstant, normal(3, 4), args=(-1.5,), kwargs={"fmod": True}, id="fmod-a-c"),
    case(F.RemainderConstant, nonzero(3, 4), args=(2.5,), kwargs={"tensor_divisor": True}, id="c%a"),
    case(
        F.RemainderConstant,
        nonzero(3, 4),
        args=(-2.5,),
        kwargs={"tensor_divisor": True, "fmod": True},
        id="fmod-c-a",
    ),
    case(F.FloorDivide, normal(3, 4), nonzero(4)),
    case(F.FloorDivideConstant, normal(3, 4), args=(0.7,), id="a//c"),
    case(F.FloorDivideConstant, nonzero(3, 4), args=(2.5,), kwargs={"tensor_divisor": True}, id="c//a"),
    # pointwise
    case(F.Exp, normal(3, 4)),
    case(F.Log, positive(3, 4)),
    case(F.Log1p, lambda rng: rng.uniform(-0.5, 2.0, (3, 4))),
    case(F.Tanh, normal(3, 4)),
    case(F.Sigmoid, normal(3, 4)),
    case(F.Sigmoid, normal(), id="0-d"),
    case(F.Sin, normal(3, 4)),
    case(F.Cos, normal(3, 4)),
    case(F.Tan, lambda rng: rng.uniform(-1.2, 1.2, (3, 4))),
    case(F.Asin, unit(3, 4)),
    case(F.Acos, unit(3, 4)),
    case(F.Atan, normal(3, 4)),
    case(F.Sinh, normal(3, 4)),
    case(F.Cosh, normal(3, 4)),
    case(F.Abs, nonzero(3, 4)),
    case(F.Clamp, avoiding(-0.5, 0.5, shape=(4, 5)), args=(-0.5, 0.5)),
    case(F.Clamp, avoiding(0.0, shape=(4, 5)), args=(0.0, None), id="min-only"),
    case(F.Clamp, avoiding(0.3, shape=(4, 5)), args=(None, 0.3), id="max-only"),
    case(F.Sqrt, positive(3, 4)),
    case(F.Cinv, nonzero(3, 4)),
    case(F.Cmax, CMAX_A, CMAX_B, id="(3,1)x(1,4)"),
    case(F.Cmax, distinct(3, 4), distinct(3, 4), id="same-shape"),
    case(F.Cmin, CMAX_A, CMAX_B, id="(3,1)x(1,4)"),
    case(F.Cmin, distinct(3, 4), distinct(3, 4), id="same-shape"),
    case(F.CmaxConstant, avoiding(0.2, shape=(3, 4)), args=(0.2,)),
    case(F.CminConstant, avoiding(0.2, shape=(3, 4)), args=(0.2,)),
    case(F.Floor, off_integers(3, 4)),
    case(F.Ceil, off_integers(3, 4)),
    case(F.Frac, off_integers(3, 4)),
    # reduce
    case(F.Sum, normal(2, 3, 4), id="all"),
    case(F.Sum, normal(2, 3, 4), args=(0,), id="dim0"),
    case(F.Sum, normal(2, 3, 4), args=(-1, True), id="dim-1-keepdim"),
    case(F.Sum, normal(2, 3, 4), args=((0, 2),), id="dims(0,2)"),
    case(F.Sum, normal(2, 3), args=(None, True), id="all-keepdim"),
    case(F.Sum, normal(), id="0-d"),
    case(F.Mean, normal(2, 3, 4), id="all"),
    case(F.Mean, normal(2, 3, 4), args=(0,), id="dim0"),
    case(F.Mean, normal(2, 3, 4), args=(1, True), id="dim1-keepdim"),
    case(F.Mean, normal(2, 3, 4), args=((0, -1),), id="dims(0,-1)"),
    *[
        case(op, distinct(3, 4), args=args, id=label)
        for op in (F.Max, F.Min, F.Median)
        for args, label in [((), "all"), ((0,), "dim0"), ((1,), "dim1"), ((0, True), "dim0-keepdim")]
    ],
    case(F.Max, distinct(2, 3, 4), args=(1,), id="3-d-dim1"),
    case(F.Median, distinct(2, 4), args=(1,), id="even-length"),
    case(F.Mode, distinct(3, 4), id="default-dim"),
    case(F.Mode, distinct(3, 4), args=(0,), id="dim0"),
    case(F.Mode, distinct(3, 4), args=(1, True), id="dim1-keepdim"),
    # tensor (shapes and indexing)
    case(F.Index, normal(4, 3), args=(1,), id="int"),
    case(F.Index, normal(4, 3), args=(-1,), id="negative-int"),
    case(F.Index, normal(4, 3), args=(np.int64(2),), id="numpy-int"),
    case(F.Index, normal(5, 3), args=(slice(1, 4),), id="slice"),
    case(F.Index, normal(5, 3), args=((slice(None, None, 2), 1),), id="step-slice-int"),
    case(F.Index, normal(4, 3), args=((Ellipsis, None, slice(1, None)),), id="ellipsis-newaxis"),
    case(F.Index, normal(4, 3), args=([0, 2, 0, 0],), id="fancy-repeated"),
    case(F.Index, normal(4, 3), args=(([0, 0, 3], [1, 1, 2]),), id="fancy-2d-repeated-pairs"),
    case(F.Index, normal(4, 3), args=((slice(1, None), [2, 2]),), id="slice-fancy-repeated"),
    case(F.Index, normal(4, 3), args=(np.array([True, False, True, True]),), id="bool-rows"),
    case(F.Index, normal(3, 3), args=(np.eye(3, dtype=bool) | np.eye(3, k=1, dtype=bool),), id="bool-mask"),
    case(
        F.Index,
        normal(4, 3),
        args=(Variable(np.array([3, 1, 3]), requires_grad=False),),
        id="variable-key",
    ),
    case(F.Index, normal(), args=((),), id="0-d"),
    case(F.View, normal(3, 4), args=(2, 6)),
    case(F.View, normal(3, 4), args=(-1,), id="flatten"),
    case(F.View, normal(2, 6), args=(3, -1, 2), id="inferred"),
    case(F.Expand, normal(3, 1), args=(2, 3, 4)),
    case(F.Expand, normal(3, 1), args=(3, -1), id="keep-dim"),
    case(F.Expand, normal(1, 1), args=(3, 4), id="both-dims"),
    case(F.Transpose, normal(3, 4), args=(0, 1)),
    case(F.Transpose, normal(2, 3, 4), args=(0, 2), id="3-d"),
    case(F.Transpose, normal(2, 3, 4), args=(-1, 1), id="negative"),
    case(F.Permute, normal(2, 3, 4), args=(2, 0, 1)),
    case(F.Permute, normal(2, 3, 4), args=(-1, 0, 1), id="negative"),
    case(F.Squeeze, normal(3, 1, 2, 1), id="all"),
    case(F.Squeeze, normal(3, 1, 2), args=(1,), id="dim1"),
    case(F.Squeeze, normal(3, 1, 2), args=(0,), id="size3-unchanged"),
    case(F.Squeeze, normal(1, 3, 1, 2), args=((0, 1, -2),), id="dims"),
    case(F.Unsqueeze, normal(3, 4), args=(0,)),
    case(F.Unsqueeze, normal(3, 4), args=(-1,), id="last"),
    case(F.Concat, normal(2, 3), normal(1, 3), normal(3, 3), args=(0,), id="dim0-three"),
    case(F.Concat, normal(2, 3), normal(2, 1), args=(1,), id="dim1"),
    case(F.Concat, normal(2, 3), normal(2, 2), args=(-1,), id="dim-1"),
    case(F.Concat, normal(4), id="one-input"),
    case(F.Type, normal(3, 4), args=("float64",), id="float64"),
    # float64 -> float32 -> float64: float32 rounding needs a larger step.
    case(F.Type, normal(3, 4), args=(np.float32,), check={"eps": 1e-2, "atol": 1e-4}, id="float32"),
    case(F.Clone, normal(3, 4)),
    case(F.CpuTransfer, normal(3, 4)),
    pytest.param(*case(F.CudaTransfer, normal(3, 4)).values, marks=gpu_only(), id="CudaTransfer"),
    # blas
    case(F.Matmul, normal(3), normal(3), id="1-d@1-d"),
    case(F.Matmul, normal(3), normal(3, 4), id="1-d@2-d"),
    case(F.Matmul, normal(2, 3), normal(3), id="2-d@1-d"),
    case(F.Matmul, normal(2, 3), normal(3, 4), id="2-d@2-d"),
    case(F.Matmul, normal(2, 2, 3), normal(2, 3, 4), id="3-d@3-d"),
    case(F.Matmul, normal(2, 2, 3), normal(3, 4), id="3-d@2-d"),
    case(F.Matmul, normal(2, 3), normal(2, 3, 4), id="2-d@3-d"),
    case(F.Matmul, normal(3), normal(2, 3, 4), id="1-d@3-d"),
    case(F.Matmul, normal(2, 2, 3), normal(3), id="3-d@1-d"),
    case(F.Matmul, normal(2, 1, 2, 3), normal(3, 3, 2), id="broadcast-batch"),
    case(F.Mm, normal(2, 3), normal(3, 4)),
    case(F.Mv, normal(2, 3), normal(3)),
    case(F.Bmm, normal(2, 2, 3), normal(2, 3, 4)),
    case(F.Dot, normal(4), normal(4)),
    case(F.Addmm, normal(2, 4), normal(2, 3), normal(3, 4), id="default"),
    case(F.Addmm, normal(2, 4), normal(2, 3), normal(3, 4), args=(0.5, -2.0), id="alpha-beta"),
    *[
        case(F.Addmm, normal(*m), normal(2, 3), normal(3, 4), args=(1.5, 0.5), id=f"M{m}")
        for m in [(4,), (1, 4), (2, 1), ()]
    ],
    case(F.Addmv, normal(2), normal(2, 3), normal(3), args=(0.5, -2.0)),
    case(F.Addmv, normal(1), normal(2, 3), normal(3), args=(2.0, 0.5), id="broadcast-v"),
    case(F.Addr, normal(2, 3), normal(2), normal(3), args=(0.5, -2.0)),
    case(F.Addr, normal(3), normal(2), normal(3), args=(2.0, 0.5), id="broadcast-M"),
    case(F.Addbmm, normal(2, 4), normal(3, 2, 3), normal(3, 3, 4), args=(0.5, -2.0)),
    case(F.Addbmm, normal(4), normal(3, 2, 3), normal(3, 3, 4), args=(1.5, 0.5), id="broadcast-M"),
    case(F.Baddbmm, normal(3, 2, 4), normal(3, 2, 3), normal(3, 3, 4), args=(0.5, -2.0)),
    case(F.Baddbmm, normal(2, 4), normal(3, 2, 3), normal(3, 3, 4), args=(1.5, 0.5), id="broadcast-M"),
    # activation
    case(F.Threshold, avoiding(0.0, shape=(4, 5)), args=(0.0, 0.0), id="relu"),
    case(F.Threshold, avoiding(0.3, shape=(4, 5)), args=(0.3, -2.0)),
    case(F.Softmax, normal(3, 4)),
    case(F.Softmax, normal(3, 4), args=(0,), id="dim0"),
    case(F.Softmax, normal(2, 3, 4), args=(1,), id="3-d-dim1"),
    case(F.LogSoftmax, normal(3, 4)),
    case(F.LogSoftmax, normal(3, 4), args=(0,), id="dim0"),
    case(F.LogSoftmax, lambda rng: rng.standard_normal((2, 5)) * 30, id="large-values"),
]


@pytest.mark.parametrize("c", CASES)
def test_gradcheck(c, rng, device):
    """One body for both devices: the inputs (and any array in the op's arguments) live on device."""
    inputs = [on_device(device, make(rng)) for make in c.inputs]
    args = on_device(device, c.args)
    assert vf.gradcheck(lambda *xs: c.op(*args, **c.kwargs)(*xs), inputs, **c.check)


def _op_classes():
    return {
        name: obj
        for name, obj in vars(F).items()
        if inspect.isclass(obj) and issubclass(obj, vf.Function) and name in F.__all__
    }


def test_every_op_class_has_a_gradcheck():
    covered = {p.values[0].op for p in CASES}
    missing = sorted(name for name, cls in _op_classes().items() if cls not in covered)
    assert not missing, f"op classes without a row in CASES: {missing}"


def test_the_table_has_one_row_per_op_at_least():
    assert len(_op_classes()) >= 60


@pytest.mark.parametrize("op", [F.Max, F.Min, F.Median, F.Mode])
def test_selection_dim0_reduces_dim0(op, rng):
    """v0.1.3 read ``dim or last dim``: dim=0 reduced the last dim, and gradcheck still passed."""
    x = Variable(distinct(3, 4)(rng))
    values, indices = op(0)(x)
    assert values.shape == (4,) and indices.shape == (4,)
    picked = np.take_along_axis(x.data, indices.data[None, :], axis=0)[0]
    np.testing.assert_array_equal(values.data, picked)
    values.sum().backward()
    assert (x.grad.sum(axis=0) == 1).all()  # one element per column got the gradient


def test_pow_constant_tensor_power_values(rng):
    """c ** a (broken in v0.1.3: an undefined name in backward)."""
    a = Variable(normal(5)(rng))
    y = 3.0**a
    np.testing.assert_allclose(y.data, 3.0**a.data)
    y.sum().backward()
    np.testing.assert_allclose(a.grad, 3.0**a.data * np.log(3.0))


def test_pow_constant_with_a_base_of_zero_or_below_matches_torch(rng):
    """ln c does not exist for c <= 0: 0 ** a has gradient 0 (a > 0), a negative base gives nan."""
    a = Variable(positive(4)(rng))
    (0.0**a).sum().backward()
    assert a.grad.tolist() == [0.0] * 4
    b = Variable(np.array([2.0, 3.0]))
    with np.errstate(invalid="ignore"):
        ((-2.0) ** b).sum().backward()
    assert np.isnan(b.grad).all()
