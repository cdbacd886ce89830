"""Each v0.1.x bug listed in the reference, reproduced as a case that the kit now gets right."""

import numpy as np

from varfunc import Function, Variable


def test_v011_aliasing_case_gives_right_gradients():
    """v0.1.1 accumulated into the first array that arrived: x.grad 6 and y.grad 6 (should be 4, 3)."""
    x, y = Variable(np.array(2.0)), Variable(np.array(3.0))
    r = x * y + (x + y)
    r.backward()
    assert (x.grad.item(), y.grad.item()) == (4.0, 3.0)


def test_the_callers_seed_gradient_is_never_modified():
    """v0.1.2-v0.1.4 summed into Add's shared gradient, which was the caller's seed (it became 3)."""
    x, y = Variable(np.array([2.0])), Variable(np.array([3.0]))
    r = x * y + (x + y)
    seed = np.array([1.0])
    r.backward(seed)
    assert seed.tolist() == [1.0]
    assert (x.grad.tolist(), y.grad.tolist()) == ([4.0], [3.0])


def test_add_backward_returning_one_array_twice_is_copied_before_summing():
    x = Variable(np.array([1.0]))
    a = x * 1
    out = (a + a) + a * 2  # Add hands the same gradient array to both of its slots
    out.backward()
    assert x.grad.tolist() == [4.0]


class TwoOutputsSecondNotDifferentiable(Function):
    def forward(self, x):
        second = x * 1.0
        self.mark_non_differentiable(second)
        return x * 1.0, second

    def backward(self, g0, g1):
        return g0


def test_a_consumer_that_does_not_require_grad_never_blocks_a_gradient():
    """v0.1.3 counted o1*o1 as a pending consumer that never ran: x.grad stayed 0 (expected 3)."""
    x = Variable(np.array([2.0]))
    o0, o1 = TwoOutputsSecondNotDifferentiable()(x)
    (o0 * 3 + o1 * o1).backward()
    assert x.grad.tolist() == [3.0]


class Scale(Function):
    def forward(self, x):
        return x * 2, x * 5

    def backward(self, g0, g1):
        total = 0
        if g0 is not None:
            total = total + g0 * 2
        if g1 is not None:
            total = total + g1 * 5
        return total


def test_the_root_may_be_a_non_first_output():
    """v0.1.3 always put the root gradient in slot 0."""
    x = Variable(np.array([1.0]))
    _, second = Scale()(x)
    second.backward()
    assert x.grad.tolist() == [5.0]


def test_a_multi_output_function_waits_for_all_its_outputs():
    """v0.1.3 asserted out_nr == 0 when a multi-output function became ready early."""
    x = Variable(np.array([1.0]))
    first, second = Scale()(x)
    (first * 3 + second * 7).backward()
    assert x.grad.tolist() == [2 * 3 + 5 * 7]


def test_pow_constant_with_the_tensor_as_exponent():
    """v0.1.3's c ** a backward returned an undefined name."""
    x = Variable(np.array([0.5, 2.0]))
    (3.0**x).sum().backward()
    np.testing.assert_allclose(x.grad, 3.0**x.data * np.log(3.0))


def test_max_and_min_with_dim_0_reduce_over_dim_0():
    """v0.1.3 read `dim or last dim`, so dim=0 silently reduced over the last dim."""
    data = np.array([[1.0, 9.0, 3.0], [4.0, 2.0, 6.0]])
    x = Variable(data)
    values, indices = x.max(dim=0)
    assert values.data.tolist() == [4.0, 9.0, 6.0] and indices.data.tolist() == [1, 0, 1]
    low, low_indices = x.min(dim=0)
    assert low.data.tolist() == [1.0, 2.0, 3.0] and low_indices.data.tolist() == [0, 1, 0]
    (values.sum() + low.sum()).backward()
    assert x.grad.tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


def test_mode_and_median_with_dim_0_reduce_over_dim_0():
    """The same `dim or last dim` bug was in mode and median (docs/differences.md row 6)."""
    x = Variable(np.array([[1.0, 5.0, 3.0], [1.0, 2.0, 6.0], [4.0, 2.0, 3.0]]))
    modes, mode_rows = x.mode(dim=0)
    assert modes.data.tolist() == [1.0, 2.0, 3.0] and x.data[mode_rows.data, [0, 1, 2]].tolist() == [
        1.0,
        2.0,
        3.0,
    ]
    medians, median_rows = x.median(dim=0)
    assert medians.data.tolist() == [1.0, 2.0, 3.0] and median_rows.data.shape == (3,)
    (modes.sum() + medians.sum()).backward()
    assert x.grad.sum(axis=0).tolist() == [2.0, 2.0, 2.0]  # one row per column for each, not per row


def test_v013s_camel_case_view_as_and_expand_as_are_there():
    x, row = Variable(np.arange(6.0)), Variable(np.ones((1, 3)))
    y = x.viewAs(Variable(np.ones((2, 3)))) * row.expandAs(Variable(np.ones((2, 3))))
    assert y.shape == (2, 3) and type(y.creator).__name__ == "Mul"
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 6 and row.grad.tolist() == [[3.0, 5.0, 7.0]]  # 0+3, 1+4, 2+5


def test_type_conversion_works_and_converts_the_gradient_back():
    """v0.1.3's Type called super(Copy, ...) and failed with a NameError."""
    x = Variable(np.array([1.5, 2.5]))
    y = x.type(np.float32)
    assert y.dtype == np.float32
    (y * 2).sum().backward()
    assert x.grad.dtype == np.float64 and x.grad.tolist() == [2.0, 2.0]


def test_hooks_on_leaves_work():
    """v0.1.1's Leaf called (hook, idx) tuples: a hook on a leaf failed with 'tuple is not callable'."""
    x = Variable(np.array([1.0]))
    seen = []
    x.register_hook("h", seen.append)
    (x * 2).backward()
    assert [g.tolist() for g in seen] == [[2.0]]
