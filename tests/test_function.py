"""Function: custom ops, the recorded graph, saved tensors, hooks and their errors (in-place ops:
test_function_inplace.py)."""

import numpy as np
import pytest

import varfunc as vf
from varfunc import Function, Variable


class MyReLU(Function):
    """The v0.1-era custom Function pattern."""

    def forward(self, x):
        self.save_for_backward(x)
        return np.maximum(x, 0)

    def backward(self, grad_output):
        (x,) = self.saved_tensors
        return grad_output * (x > 0)


def test_custom_function_forward_backward_and_gradcheck():
    x = Variable(np.array([-1.0, 0.5, 2.0]))
    y = MyReLU()(x)
    assert y.data.tolist() == [0.0, 0.5, 2.0] and isinstance(y.creator, MyReLU)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]
    assert vf.gradcheck(lambda v: MyReLU()(v), (Variable(np.array([-1.0, 0.5, 2.0])),))


def test_forward_records_the_graph_as_v013():
    a = Variable(np.ones(2))
    b = Variable(np.ones(2), requires_grad=False)
    fn = vf.functions.Mul()
    out = fn(a, b)
    # v0.1.3 kept a list; a tuple holds the same pairs (see docs/differences.md)
    assert fn.previous_functions == ((a.creator, id(a)), (b.creator, id(b)))
    assert fn.output_ids == {id(out): 0}
    assert fn.needs_input_grad == (True, False) and fn.requires_grad
    assert fn.input_shapes == ((2,), (2,))


def test_inputs_must_be_variables():
    with pytest.raises(vf.DTypeError, match=r"Mul: every input must be a Variable.*input 1: ndarray"):
        vf.functions.Mul()(Variable(np.ones(2)), np.ones(2))


def test_outputs_never_share_memory_with_inputs():
    x = Variable(np.arange(6.0))
    views = [x.view(2, 3), x[1:3], x.view(6).squeeze(), x.unsqueeze(0)]
    for v in views:
        assert not np.shares_memory(v.data, x.data)


class SavesAnIntermediate(Function):
    def forward(self, x):
        tmp = x * 2
        self.save_for_backward(tmp)
        return x + 1

    def backward(self, g):
        return g


def test_saving_something_that_is_neither_input_nor_output_is_a_clear_error():
    with pytest.raises(vf.VarfuncError, match="neither an input nor an output.*attributes"):
        SavesAnIntermediate()(Variable(np.ones(2)))


class SavesATuple(Function):
    def forward(self, a, b):
        self.save_for_backward((a, b))
        return a * b

    def backward(self, g):
        return g, g


def test_saving_a_tuple_of_inputs_says_to_pass_the_arrays_themselves():
    """Before: the advice was to keep them as attributes, which Exercise 1's check then refuses."""
    with pytest.raises(vf.VarfuncError, match=r"argument 0 .*save_for_backward\(a, b\), not a tuple"):
        SavesATuple()(Variable(np.ones(2)), Variable(np.ones(2)))


class MarksACopy(Function):
    def forward(self, a):
        mask = a > 0
        self.mark_non_differentiable(mask)
        return a * 2, mask.astype(a.dtype)  # a new array: not the one marked

    def backward(self, g, g_mask):
        return g * 2


def test_marking_an_array_forward_does_not_return_is_a_clear_error_before_any_change():
    """Before: silently ignored (as torch 2.13 does), so the returned mask required grad."""
    x = Variable(np.array([1.0, -1.0]))
    with pytest.raises(
        vf.VarfuncError, match=r"MarksACopy\(\).mark_non_differentiable: argument 0 \(shape \(2,\)\)"
    ):
        MarksACopy()(x)
    assert x.is_leaf and x.grad_fn is None and x._version[0] == 0  # no graph, no count
    values, mask = TwoOutputs()(x)  # a Function that marks what it returns is untouched
    assert not mask.requires_grad


class TwoOutputs(Function):
    def forward(self, x):
        values = x * 2
        indices = np.arange(x.size)
        self.mark_non_differentiable(indices)
        return values, indices

    def backward(self, g_values, g_indices):
        assert g_indices is None  # nothing can send a gradient to a non-differentiable output
        return g_values * 2


def test_multiple_outputs_and_non_differentiable_outputs():
    x = Variable(np.array([1.0, 2.0]))
    values, indices = TwoOutputs()(x)
    assert values.requires_grad and not indices.requires_grad
    assert values.creator is indices.creator
    assert values.creator.output_ids == {id(values): 0, id(indices): 1}
    (values * indices.data).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0]


class RoundToInt(Function):
    """Rounds to integers, with a straight-through backward that would pass the gradient on."""

    def forward(self, x):
        return np.round(x).astype(np.int64), x * 3

    def backward(self, g_rounded, g_tripled):
        assert g_rounded is None  # an integer output never receives a gradient
        return g_tripled * 3


def test_integer_outputs_do_not_require_grad_as_in_torch():
    x = Variable(np.array([1.4, 2.6]))
    rounded, tripled = RoundToInt()(x)
    assert not rounded.requires_grad and tripled.requires_grad
    assert x.requires_grad and rounded.creator.requires_grad  # the Function is still differentiable
    (rounded * 2.0 + tripled).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]  # nothing came through the integer output
    with pytest.raises(vf.BackwardError, match="integer or boolean data, which has no gradient"):
        (RoundToInt()(x)[0] * 2.0).sum().backward()


def test_hooks_as_in_v013_test_hooks():
    x = Variable(np.ones((5, 5)))
    y = Variable(np.ones((5, 5)) * 4)
    counter = [0]

    def bw_hook(inc, grad):
        assert isinstance(grad, np.ndarray)
        counter[0] += inc

    z = x * x + x * 2 + x * y + y
    z.register_hook("test", lambda *args: bw_hook(1, *args))
    z.backward(np.ones((5, 5)))
    assert counter[0] == 1
    z.register_hook("test2", lambda *args: bw_hook(2, *args))
    z.backward(np.ones((5, 5)))
    assert counter[0] == 4
    z.remove_hook("test2")
    z.backward(np.ones((5, 5)))
    assert counter[0] == 5


def test_leaf_hooks_see_the_summed_gradient_once():
    x = Variable(np.array([1.0]))
    seen = []
    x.register_hook("record", lambda g: seen.append(g.copy()))
    (x * 2 + x * 3).backward()
    assert [g.tolist() for g in seen] == [[5.0]]


def test_a_hook_may_return_a_replacement_gradient():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 3
    h.register_hook("double", lambda g: g * 2)
    h.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_a_replacement_of_the_wrong_shape_is_an_error():
    x = Variable(np.array([1.0, 2.0]))
    h = x * 3
    h.register_hook("bad", lambda g: g.sum())
    with pytest.raises(vf.ShapeError, match="hook"):
        h.sum().backward()


def test_function_hooks_get_grad_input_and_grad_output():
    a, b = Variable(np.array([2.0])), Variable(np.array([5.0]))
    out = a * b
    seen = {}
    out.creator.register_hook("both", lambda gi, go: seen.update(gi=gi, go=go))
    out.backward()
    assert [g.tolist() for g in seen["gi"]] == [[5.0], [2.0]] and seen["go"][0].tolist() == [1.0]


def test_function_hooks_chain_as_variable_hooks_do():
    """Each hook saw backward's own grad_input, so the last replacement won (x.grad 30, not 40)."""
    x = Variable(np.array([1.0, 2.0]))
    h = x * 3
    h.creator.register_hook("plus1", lambda gi, go: (gi[0] + 1,))
    h.creator.register_hook("times10", lambda gi, go: (gi[0] * 10,))
    h.sum().backward()
    assert x.grad.tolist() == [40.0, 40.0]


def test_hook_name_errors():
    x = Variable(np.ones(1))
    x.register_hook("h", lambda g: None)
    with pytest.raises(vf.VarfuncError, match="already registered"):
        x.register_hook("h", lambda g: None)
    with pytest.raises(vf.VarfuncError, match="no hook named 'nope'"):
        x.remove_hook("nope")
    with pytest.raises(vf.BackwardError, match="doesn't require grad"):
        Variable(np.ones(1), requires_grad=False).register_hook("h", print)
    with pytest.raises(vf.BackwardError, match="volatile"):
        Variable(np.ones(1), volatile=True).register_hook("h", print)


def test_remove_hook_removes_only_this_outputs_hook():
    x = Variable(np.array([[1.0, 3.0], [4.0, 2.0]]))
    values, indices = x.max(1)
    seen = []
    values.register_hook("h", lambda g: seen.append(g))
    sibling = (
        r"no hook named 'h' on this output of Max\(dim=1\) "
        r"\(registered there: \[\]; 'h' is registered by its output 0\)"
    )
    with pytest.raises(vf.VarfuncError, match=sibling):  # the list named the sibling's 'h' as this one's
        indices.remove_hook("h")
    values.sum().backward()
    assert len(seen) == 1  # still registered
    values.remove_hook("h")
    with pytest.raises(vf.BackwardError, match="volatile Variable has no hooks"):
        Variable(np.ones(1), volatile=True).remove_hook("h")


def test_an_index_array_changed_after_indexing_does_not_move_the_gradient():
    x = Variable(np.arange(4.0))
    idx = Variable(np.array([0, 1]))
    key = np.array([0, 0, 3])
    y = x[idx] * 1 + x[key].sum()
    idx.add_(2)
    key[:] = 1
    y.sum().backward()
    assert x.grad.tolist() == [1.0 + 4.0, 1.0, 0.0, 2.0]


class ReturnsAs(Function):
    """Doubles its input; backward returns convert(gradient): another dtype, or a NumPy scalar."""

    def __init__(self, convert):
        self.convert = convert

    def forward(self, a):
        return a * 2

    def backward(self, g):
        return self.convert(g * 2)


@pytest.mark.parametrize("dtype", [np.bool_, np.int64, np.float16, np.float32])
def test_a_gradient_in_another_dtype_is_cast_to_its_input_dtype(dtype):
    """As torch does: bools would be OR-ed and float16 would round everything upstream."""
    x = Variable(np.array([1.0, 2.0]))
    (ReturnsAs(dtype)(x * (1 + 1e-6)) + ReturnsAs(dtype)(x)).sum().backward()
    expected = 1 + (1 + 1e-6) if dtype is np.bool_ else 2 + 2 * (1 + 1e-6)  # backward's g * 2: True for bool
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad, [expected, expected], rtol=1e-12)


def test_a_hook_replacement_in_another_float_dtype_is_cast():
    """(A boolean or integer one is refused: test_hook_results.py.)"""
    x = Variable(np.array([1.0, 2.0]))
    y = x * (1 + 1e-6)
    y.register_hook("f16", lambda g: g.astype(np.float16))
    z = Variable(np.array([1.0, 2.0]))
    z.register_hook("f32", lambda g: np.ones(g.shape, np.float32))
    (y + z + z).sum().backward()
    np.testing.assert_allclose(x.grad, [1 + 1e-6] * 2, rtol=1e-12)
    assert z.grad.dtype == np.float64 and z.grad.tolist() == [1.0, 1.0]


class ReturnsVariable(Function):
    def forward(self, a):
        return a * 2

    def backward(self, g):
        return Variable(g * 2)


class ReturnsList(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, g):
        return [g, g]


def test_backward_returning_a_variable_or_a_list_is_a_clear_error():
    with pytest.raises(
        vf.ShapeError,
        match=r"returned a Variable, not an array, for input 0, .*\(its \.data, not a Variable\)",
    ):
        ReturnsVariable()(Variable(np.ones(2))).sum().backward()
    with pytest.raises(vf.VarfuncError, match="it returned a list: return a tuple"):
        ReturnsList()(Variable(np.ones(2)), Variable(np.ones(2))).sum().backward()
    x = Variable(np.ones(2))
    x.register_hook("h", lambda g: Variable(g))
    with pytest.raises(vf.ShapeError, match=r"returned a Variable .*\(not a Variable\)"):
        (x * 3).sum().backward()
    with pytest.raises(vf.VarfuncError, match="must be callable, got 5"):
        x.register_hook("h2", 5)
    with pytest.raises(
        vf.VarfuncError, match=r"register_hook\('h2'\) needs the hook too: .* not a decorator"
    ):

        @x.register_hook("h2")  # today's decorator habit: v0.1's register_hook takes the hook at once
        def clip(g):
            return g

    for name in (None, 5, ["clip"]):  # a list gave Python's bare "unhashable type"
        with pytest.raises(vf.VarfuncError, match=r"register_hook: the name is a string, .* got "):
            x.register_hook(name, lambda g: g)
    assert list(x.creator.backward_hooks) == ["h"]


class OneGradient(vf.Function):
    """backward returns what the test puts in self.answer, for a (2, 3) input and a (3,) one."""

    def forward(self, a, b):
        return a + b

    def backward(self, g):
        return self.answer(g)


@pytest.mark.parametrize(
    "answer, words",
    [
        (
            lambda g: (None, g.sum(0)),
            r"None for input 0, .*; compute it \(None is for inputs whose needs_input",
        ),
        (lambda g: (g, g), r"shape \(2, 3\) for input 1, .*; sum it over the dimensions forward broadcast"),
        (lambda g: (g.T, g.sum(0)), r"shape \(3, 2\) for input 0, .*each other's transpose; .* \.T"),
        (
            lambda g: (g[:1], g.sum(0)),
            r"shape \(1, 3\) for input 0, .*; return an array of the input's shape",
        ),
        (lambda g: ([[0.0] * 3] * 2, g.sum(0)), r"a list, not an array, for input 0, .*; return an array$"),
    ],
    ids=["None", "broadcast", "transposed", "other shape", "list"],
)
def test_a_wrong_gradient_from_backward_is_told_what_to_do_about_it(answer, words):
    fn = OneGradient()
    fn.answer = answer
    with pytest.raises(vf.ShapeError, match=r"OneGradient\(\)\.backward returned (a gradient of )?" + words):
        fn(Variable(np.ones((2, 3))), Variable(np.ones(3))).sum().backward()


@pytest.mark.parametrize("on", ["leaf", "function"])
def test_a_hook_that_removes_itself_beside_another_hook(on):
    x = Variable(np.array([1.0, 2.0]))
    target = x if on == "leaf" else x * 2

    def once(g):
        target.remove_hook("once")
        return g * 10

    target.register_hook("once", once)
    target.register_hook("other", lambda g: g + 1)
    (target * 1.0).sum().backward()
    expected = [11.0, 11.0] if on == "leaf" else [22.0, 22.0]  # torch: 22, 22 for the function case
    assert x.grad.tolist() == expected
    x.grad = None
    (target * 1.0).sum().backward()  # "once" is gone
    assert x.grad.tolist() == ([2.0, 2.0] if on == "leaf" else [4.0, 4.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_numpy_scalar_gradient_for_a_0d_input(dtype):
    x = Variable(np.array(1.5))
    y = ReturnsAs(dtype)(x * 1.0)  # dtype(0-d array): a NumPy scalar
    y.backward()
    assert x.grad.dtype == np.float64 and x.grad.shape == () and float(x.grad) == 2.0


def test_a_function_without_forward_or_backward_says_which_to_define():
    class Half(Function):
        pass

    x = Variable(np.array([1.0, 2.0]))
    with pytest.raises(
        NotImplementedError, match=r"^Half has no forward\(\); define forward\(self, \*arrays\)"
    ):
        Half()(x)
    with pytest.raises(
        NotImplementedError, match=r"^Half has no backward\(\); define backward\(self, \*grad_"
    ):
        Half().backward(np.ones(2))
