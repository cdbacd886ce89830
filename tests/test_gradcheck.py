"""gradcheck itself: passes on correct Functions, catches wrong ones and says where."""

from __future__ import annotations

import re

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, Variable
from varfunc.errors import GradcheckError, ShapeError, VarfuncError
from varfunc.functions.utils import sum_to_shape


class GoodMul(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, g):
        a, b = self.saved_tensors
        return sum_to_shape(g * b, a.shape), sum_to_shape(g * a, b.shape)


class SwappedMul(GoodMul):
    """The classic mistake: each input gets its own value instead of the other's."""

    def backward(self, g):
        a, b = self.saved_tensors
        return g * a, g * b


class OneWrongElement(GoodMul):
    """Right everywhere except d out[1, 2] / d b[1, 2] (input 1, element (1, 2))."""

    def backward(self, g):
        grad_a, grad_b = super().backward(g)
        grad_b = grad_b.copy()
        grad_b[1, 2] += 0.5 * g[1, 2]
        return grad_a, grad_b


class AddNoBroadcastSum(Function):
    """Forgets to sum b's gradient over the broadcast dims: the core rejects its shape."""

    def forward(self, a, b):
        return a + b

    def backward(self, g):
        return g, g


class AddMeanInsteadOfSum(Function):
    """Right shape, wrong reduction (mean over the broadcast dim): only gradcheck can tell."""

    def forward(self, a, b):
        return a + b

    def backward(self, g):
        return g, g.mean(axis=0)


class TwoOutputs(Function):
    """(a * b, a.sum()), optionally with a wrong gradient for the second output."""

    def __init__(self, wrong_second=False):
        self.wrong_second = wrong_second

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b, a.sum()

    def backward(self, g_prod, g_sum):
        a, b = self.saved_tensors
        grad_a = np.zeros_like(a)
        grad_b = np.zeros_like(b)
        if g_prod is not None:
            grad_a = grad_a + g_prod * b
            grad_b = grad_b + g_prod * a
        if g_sum is not None:
            grad_a = grad_a + g_sum * (2.0 if self.wrong_second else 1.0)
        return grad_a, grad_b


class ScaleByCount(Function):
    """a * n for an integer array n (not differentiable): backward returns None for n."""

    def forward(self, a, n):
        self.n = n
        return a * n

    def backward(self, g):
        return g * self.n, None


def test_passes_on_correct_functions(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    assert vf.gradcheck(lambda x, y: GoodMul()(x, y), (a, b)) is True
    assert vf.gradcheck(lambda x, y: GoodMul()(x, y), (a, rng.standard_normal(4)))  # broadcast
    assert vf.gradcheck(lambda x: (x * x).sum(), a)  # a single array, not a tuple
    assert vf.gradcheck(lambda x: x * 2, [1.5])  # a Python number


def test_catches_swapped_gradients(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    with pytest.raises(GradcheckError, match="disagrees"):
        vf.gradcheck(lambda x, y: SwappedMul()(x, y), (a, b))


def test_the_message_names_the_input_and_the_element(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    with pytest.raises(GradcheckError) as info:
        vf.gradcheck(lambda x, y: OneWrongElement()(x, y), (a, b))
    message = str(info.value)
    assert "2 place" in message
    rows = [line for line in message.splitlines() if re.match(r"\s+\d", line)]
    assert len(rows) == 2
    # input 1, element (1, 2), output 0's element (1, 2), analytical off by 0.5; then the same
    # element in the weighted backward, off by 0.5 times that element's weight
    assert re.match(r"\s+1\s+\(1,2\)\s+0:\(1,2\)\s", rows[0]), rows[0]
    analytical, numerical = map(float, rows[0].split()[-2:])
    assert analytical - numerical == pytest.approx(0.5, abs=1e-6)
    assert re.match(r"\s+1\s+\(1,2\)\s+weighted\s", rows[1]), rows[1]


def test_many_mismatches_are_summarised(rng):
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    with pytest.raises(GradcheckError, match=r"and \d+ more"):
        vf.gradcheck(lambda x, y: SwappedMul()(x, y), (a, b))


def test_gradcheck_error_is_an_assertion_and_a_varfunc_error():
    assert issubclass(GradcheckError, AssertionError)
    assert issubclass(GradcheckError, VarfuncError)


def test_a_missing_broadcast_sum_is_a_shape_error_from_the_core(rng):
    """A wrong-shape gradient never reaches the comparison: _do_backward rejects it first."""
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    with pytest.raises(ShapeError, match=r"input 1, which has shape \(4,\)"):
        vf.gradcheck(lambda x, y: AddNoBroadcastSum()(x, y), (a, b))


def test_a_wrong_broadcast_reduction_is_caught(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    with pytest.raises(GradcheckError):
        vf.gradcheck(lambda x, y: AddMeanInsteadOfSum()(x, y), (a, b))


def test_multiple_outputs(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    assert vf.gradcheck(lambda x, y: TwoOutputs()(x, y), (a, b))
    with pytest.raises(GradcheckError) as info:
        vf.gradcheck(lambda x, y: TwoOutputs(wrong_second=True)(x, y), (a, b))
    # Only output 1 (the sum) is wrong, for input 0: alone, and with both outputs' gradients at once.
    rows = [line.split() for line in str(info.value).splitlines() if re.match(r"\s+\d", line)]
    assert {row[0] for row in rows} == {"0"}
    assert {row[-3] for row in rows} == {"1:()", "weighted"}


def test_integer_outputs_are_left_out(rng):
    a = rng.permutation(12).reshape(3, 4).astype(np.float64)
    assert vf.gradcheck(lambda x: x.max(1), a)  # (values, int64 indices)


def test_integer_inputs_are_not_checked_and_not_changed(rng):
    a = rng.standard_normal((2, 3))
    n = np.array([[1, 2, 3], [4, 5, 6]])
    seen = []

    def fn(x, k):
        seen.append(k.dtype)
        return ScaleByCount()(x, k)

    assert vf.gradcheck(fn, (a, n))
    assert set(seen) == {np.dtype(np.int64)}
    np.testing.assert_array_equal(n, [[1, 2, 3], [4, 5, 6]])
    assert vf.gradcheck(lambda x, idx: x[idx], (a, np.array([1, 1, 0])))


def test_inputs_that_do_not_require_grad_are_skipped(rng):
    """A wrong gradient for an input that does not require grad is never looked at."""
    a = rng.standard_normal((2, 3))
    b = Variable(rng.standard_normal((2, 3)), requires_grad=False)
    assert vf.gradcheck(lambda x, y: OneWrongElement()(x, y), (a, b))


def test_an_unused_input_gets_a_zero_gradient(rng):
    assert vf.gradcheck(lambda x, y: x * 2, (rng.standard_normal(3), rng.standard_normal(3)))


def test_float32_inputs_are_checked_in_float64(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    keep = a.copy()
    dtypes = []

    def fn(x):
        dtypes.append(x.dtype)
        return (x.exp() * 1000).sum()  # in float32, central differences with eps=1e-6 are noise

    assert vf.gradcheck(fn, (a,))
    assert set(dtypes) == {np.dtype(np.float64)}
    np.testing.assert_array_equal(a, keep)  # the caller's array is untouched


def test_the_callers_variables_are_untouched(rng):
    x = Variable(rng.standard_normal(3))
    keep = x.data.copy()
    vf.gradcheck(lambda v: v.exp(), (x,))
    np.testing.assert_array_equal(x.data, keep)
    assert not x.grad.any()


@pytest.mark.parametrize(
    "inputs",
    [
        (np.arange(3),),
        (Variable(np.ones(3), requires_grad=False),),
        (np.arange(3), Variable(np.ones(3), requires_grad=False)),
    ],
    ids=["integers", "no-grad-variable", "both"],
)
def test_nothing_requires_grad_is_a_clear_error(inputs):
    with pytest.raises(ValueError, match="gradcheck: no input requires grad"):
        vf.gradcheck(lambda *xs: xs[0] * 1, inputs)


def test_no_differentiable_output_is_a_clear_error(rng):
    x = rng.standard_normal(3)
    with pytest.raises((ValueError, VarfuncError), match="gradcheck"):
        vf.gradcheck(lambda v: Variable(v.data * 2, requires_grad=False), (x,))


def test_tolerances_are_arguments(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    assert vf.gradcheck(lambda x, y: OneWrongElement()(x, y), (a, b), atol=1.0, rtol=0.0)


@pytest.mark.parametrize("layout", ["transposed", "fortran"])
def test_gradcheck_passes_on_inputs_that_are_not_c_contiguous(layout):
    a = np.random.default_rng(0).standard_normal((3, 4))
    data = a.T if layout == "transposed" else np.asfortranarray(a)
    assert vf.gradcheck(lambda x: x * 2, (data,))
    assert vf.gradcheck(lambda x, y: GoodMul()(x, y), (data, data.copy()))


class NanInBackward(Function):
    def forward(self, a):
        return a * 2

    def backward(self, g):
        grad = g * 2
        grad.reshape(-1)[0] = np.nan
        return grad


def test_gradcheck_fails_on_nan():
    with pytest.raises(GradcheckError, match="nan"):
        vf.gradcheck(lambda x: NanInBackward()(x), (np.arange(1.0, 4.0),))
    with np.errstate(invalid="ignore"):  # log of negative numbers: a nan forward, a finite backward
        with pytest.raises(GradcheckError):
            vf.gradcheck(lambda x: x.log(), (-np.arange(1.0, 4.0),))


class DropsTheSecondGradient(Function):
    """(2a, 3a), whose backward is right for each output alone but forgets 3 g2 when both come."""

    def forward(self, a):
        return a * 2, a * 3

    def backward(self, g1, g2):
        if g1 is None:
            return 3 * g2
        return 2 * g1 if g2 is not None else 2 * g1


def test_a_backward_wrong_only_when_every_output_has_a_gradient_is_caught(rng):
    with pytest.raises(GradcheckError) as info:
        vf.gradcheck(lambda x: DropsTheSecondGradient()(x), (rng.standard_normal(3),))
    rows = [line.split() for line in str(info.value).splitlines() if re.match(r"\s+\d", line)]
    assert len(rows) == 3 and {row[2] for row in rows} == {"weighted"}
    assert "a gradient for every output element at once" in str(info.value)


def test_ints_and_none_reach_fn_as_they_are(rng):
    x = rng.standard_normal((2, 3))
    assert vf.gradcheck(lambda a, dim: a.sum(dim), (x, 1))
    assert vf.gradcheck(lambda a, dim, scale: a.sum(dim) * (scale or 1.0), [x, -1, None])
    with pytest.raises(GradcheckError) as info:  # the report counts fn's arguments, ints included
        vf.gradcheck(lambda dim, y, z: OneWrongElement()(y, z).sum(dim), (0, x, x.copy()))
    assert {line.split()[0] for line in str(info.value).splitlines() if re.match(r"\s+\d", line)} == {"2"}


def test_empty_inputs_and_outputs_have_nothing_to_disagree_on(rng):
    assert vf.gradcheck(lambda a: a * 2, (np.zeros((0, 3)),))
    assert vf.gradcheck(lambda a: a[0:0] * 2, (rng.standard_normal(3),))
    assert vf.gradcheck(lambda a: [a * 2, a.sum()], (rng.standard_normal(3),))  # a list of outputs
    with pytest.raises(
        TypeError, match="gradcheck: fn must return a Variable or a tuple of Variables, got a ndarray"
    ):
        vf.gradcheck(lambda a: a.data * 2, (rng.standard_normal(3),))


class Slightly(Function):
    """3 a, with a backward off by rel (relatively) and by add (absolutely, where 0 is right)."""

    def __init__(self, rel=0.0, add=0.0):
        self.rel, self.add = rel, add

    def forward(self, a, z):
        return a * 3.0 + z * 0.0

    def backward(self, g):
        return g * 3.0 * (1 + self.rel), g * 0.0 + self.add


@pytest.mark.parametrize("rel, add", [(0.005, 0.0), (0.0, 1e-4)])
def test_the_default_tolerances_catch_a_gradient_a_little_wrong(rel, add):
    """0.5 % off, or 1e-4 where the gradient is 0: the op tests rely on gradcheck seeing that."""
    x, z = np.linspace(0.5, 1.5, 6).reshape(2, 3), np.ones((2, 3))
    assert vf.gradcheck(lambda a, b: Slightly()(a, b), (x, z))
    with pytest.raises(GradcheckError):
        vf.gradcheck(lambda a, b: Slightly(rel, add)(a, b), (x, z))


class SquareForgetsGradOutput(Function):
    """d(a*a)/da right, but never multiplied by grad_output: a seed of 1 hides it."""

    def forward(self, a):
        self.save_for_backward(a)
        return a * a

    def backward(self, grad_output):
        (a,) = self.saved_tensors
        return 2 * a


@pytest.mark.parametrize("total", [True, False], ids=["ends in .sum()", "a 0-d input"])
def test_a_backward_that_ignores_grad_output_is_caught_behind_a_0d_output(rng, total):
    """Both passed: the one-hot seed of a 0-d output is exactly 1 (torch.autograd.gradcheck catches it)."""
    if total:
        fn, x = (lambda v: SquareForgetsGradOutput()(v).sum()), rng.standard_normal(4)
    else:
        fn, x = (lambda v: SquareForgetsGradOutput()(v)), np.array(0.7)
    with pytest.raises(GradcheckError, match=r"'weighted'.* does not multiply by grad_output"):
        vf.gradcheck(fn, (x,))
    assert vf.gradcheck(lambda v: (v * v).sum(), (x,))


class DropsTheSign(Function):
    """2 a, with a backward right for a gradient of 1 only: how it uses g is the parameter."""

    def __init__(self, use):
        self.use = use

    def forward(self, a):
        return a * 2

    def backward(self, grad_output):
        return 2 * self.use(grad_output)


@pytest.mark.parametrize(
    "use", [np.abs, np.square, lambda g: np.maximum(g, 0), np.sign, lambda g: (g != 0) * 1.0], ids=str
)
def test_a_backward_that_drops_the_sign_of_grad_output_is_caught(rng, use):
    """Passed with one-hot seeds of 1 alone, as torch.autograd.gradcheck passes it; the weighted rows
    (mixed signs) catch it, on a multi-element output too."""
    x = rng.standard_normal((2, 3))
    with pytest.raises(GradcheckError) as info:
        vf.gradcheck(lambda v: DropsTheSign(use)(v), (x,))
    rows = [line.split() for line in str(info.value).splitlines() if re.match(r"\s+\d", line)]
    assert rows and {row[2] for row in rows} == {"weighted"}
    assert vf.gradcheck(lambda v: DropsTheSign(lambda g: g)(v), (x,))


@pytest.mark.parametrize(
    "setting", [{"eps": 0}, {"eps": -1e-6}, {"atol": -1}, {"rtol": float("nan")}, {"atol": "a"}]
)
def test_gradcheck_refuses_settings_that_cannot_check(setting):
    """Before: eps=0 or a negative tolerance blamed backward ('backward disagrees'), and atol='a'
    raised NumPy's isfinite TypeError."""
    with pytest.raises(ValueError, match=rf"gradcheck: {next(iter(setting))} must be a finite number"):
        vf.gradcheck(lambda a: a * 2, [np.ones(2)], **setting)
