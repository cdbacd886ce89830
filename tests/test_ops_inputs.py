"""Ops given inputs outside the usual floats: other number types, object data, unsigned integers,
long dims; and the call mistakes they answer with an error that says what to write."""

from __future__ import annotations

import numpy as np
import pytest

import varfunc as vf
from varfunc import Variable


def test_a_fraction_constant_is_a_float_and_keeps_its_gradient():
    """x * Fraction(1, 2) gave object data that silently stopped requiring grad: x.grad was 1, not 1.5."""
    from fractions import Fraction

    x = Variable(np.array([1.0, 2.0]))
    y = (x * Fraction(1, 2)).double() + x
    y.sum().backward()
    assert y.dtype == np.float64 and x.grad.tolist() == [1.5, 1.5]
    for made in (
        Fraction(1, 3) * x,
        x.clamp(min=Fraction(3, 2)),
        x ** Fraction(1, 2),
        x.cmax(Fraction(1, 2)),
    ):
        assert made.dtype == np.float64 and made.requires_grad


def test_a_forward_that_gives_object_data_is_refused():
    class ToObjects(vf.Function):
        def forward(self, a):
            return a.astype(object)

    with pytest.raises(vf.DTypeError, match="ToObjects: forward gave an array of dtype object"):
        ToObjects()(Variable(np.ones(2)))


@pytest.mark.parametrize("dim", [None, 0])
def test_the_sum_of_unsigned_integers_is_int64_as_in_torch(dim):
    """NumPy's uint64 sum made s - 10 wrap to 18446744073709551609 for uint8 pixels."""
    s = Variable(np.array([1, 2], dtype=np.uint8)).sum(dim)
    assert s.dtype == np.int64 and (s - 10).data.tolist() == -7


def test_mode_needs_memory_in_proportion_to_its_dim_not_its_square():
    """It compared every pair along the dim: 0.9 GB for 30,000 labels."""
    import tracemalloc

    labels = np.random.default_rng(0).integers(0, 10, 5000)
    tracemalloc.start()
    try:
        values, _ = Variable(labels.astype(float)).mode(0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert values.data == np.bincount(labels).argmax() and peak < 2_000_000


def test_negating_unsigned_data_in_place_wraps_as_out_of_place_does():
    x = Variable(np.array([1, 2], dtype=np.uint8))
    assert x.neg().data.tolist() == [255, 254]
    assert x.neg_().data.tolist() == [255, 254]  # "Python integer -1 out of bounds for uint8" before


def test_common_call_mistakes_get_errors_that_say_what_to_write():
    x = Variable(np.ones(3))
    with pytest.raises(
        vf.VarfuncError, match=r"register_hook takes a name, then the hook: register_hook\('my_hook'"
    ):
        x.register_hook(lambda g: g)
    with pytest.raises(TypeError, match=r"cat: takes a list or tuple of Variables, got one Variable"):
        vf.cat(Variable(np.ones((2, 3))))


@pytest.mark.parametrize(
    "method, shapes",
    [("addmm", [(2, 2), (2, 3), (3, 2)]), ("addmv", [(2,), (2, 3), (3,)]), ("addr", [(2, 3), (2,), (3,)])],
)
def test_the_addmm_family_takes_arrays_as_mm_does(method, shapes):
    m, a, b = (np.arange(1.0, 1.0 + np.prod(s)).reshape(s) for s in shapes)
    with_arrays = getattr(Variable(m), method)(a, b)
    with_variables = getattr(Variable(m), method)(Variable(a), Variable(b))
    assert np.array_equal(with_arrays.data, with_variables.data)


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda x: x.view(3.0, 2),
            r"view: sizes must be ints, got 3.0 in \(3.0, 2\): n / 2 is a float, n // 2 an int",
        ),
        (lambda x: x.view(None), r"view: sizes must be ints, got None"),
        (lambda x: x.view(True, 6), r"view: sizes must be ints, got True"),
        (lambda x: x.view(-1, -1), r"view: \(-1, -1\) has more than one -1; only one size can be inferred"),
        (lambda x: x.view(-2, -3), r"view: got -2 in \(-2, -3\); each of the sizes is >= -1"),
        (lambda x: x.expand(2.0, 3), r"expand: sizes must be ints, got 2.0"),
        (lambda x: x.permute(1.0, 0), r"permute: dims must be ints, got 1.0 in \(1.0, 0\)$"),
        (lambda x: x.permute("a", "b"), r"permute: dims must be ints, got 'a'"),
    ],
)
def test_sizes_and_dims_that_are_not_ints_are_named(call, words):
    """Before: NumPy's "'float' object cannot be interpreted as an integer", or for view(-1, -1) and
    view(-2, -3) 'the number of elements must stay the same', which was not the problem."""
    x = Variable(np.ones((2, 3)))
    with pytest.raises(vf.ShapeError, match=words):
        call(x)
    assert x.view(3, 2).shape == x.view((3, 2)).shape == (3, 2) and x.permute(-1, 0).shape == (3, 2)


def test_size_and_keepdim_are_checked():
    """Before: x.size(5) raised 'tuple index out of range', keepdim='yes' NumPy's own TypeError."""
    x = Variable(np.ones((2, 3)))
    assert x.size(-1) == 3 and x.size() == (2, 3)
    with pytest.raises(vf.ShapeError, match=r"size: dim 5 is out of range .* use a dim from -2 to 1"):
        x.size(5)
    for call in (
        lambda: x.sum(0, keepdim="yes"),
        lambda: x.mean(0, keepdim=None),
        lambda: x.max(0, keepdim=1),
    ):
        with pytest.raises(TypeError, match=r"(sum|mean|max): keepdim must be True or False"):
            call()


def test_unsqueeze_of_no_dim_says_it_takes_one():
    """Before: 'names no dimension; use dim=None for all of them', and None was refused next."""
    with pytest.raises(vf.ShapeError, match=r"unsqueeze: takes one dim \(an int\), got \(\)"):
        Variable(np.ones(3)).unsqueeze(())
