"""Habits from NumPy and today's PyTorch (varfunc/habits.py, operators.py): each is either what
PyTorch does, or an error that says what to write here, raised before anything changes."""

import re

import numpy as np
import pytest

import varfunc as vf
from varfunc import BackwardError, DTypeError, Variable

torch = None
try:
    import torch
except ImportError:
    pass


def leaf_and_graph():
    x = Variable(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]))
    return x, x * 2


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda h: h.sum(axis=1), "sum"),
        (lambda h: h.sum(1, keepdims=True), "sum"),
        (lambda h: h.mean(axis=(0, 1)), "mean"),
        (lambda h: h.max(axis=0), "max"),
        (lambda h: h.min(axis=0, keepdims=True), "min"),
        (lambda h: h.median(axis=1), "median"),
        (lambda h: h.mode(axis=1), "mode"),
        (lambda h: h.softmax(axis=1), "softmax"),
        (lambda h: h.log_softmax(axis=-1), "log_softmax"),
        (lambda h: h[None].squeeze(axis=0), "squeeze"),
        (lambda h: h.unsqueeze(axis=0), "unsqueeze"),
        (lambda h: vf.cat([h, h], axis=1), "cat"),
    ],
)
def test_numpys_axis_and_keepdims_name_dim_and_keepdim(call, name):
    x, h = leaf_and_graph()
    with pytest.raises(
        TypeError, match=rf"{name}: got NumPy's keywords \(.*\); a Variable's {name} takes PyTorch's dim"
    ):
        call(h)
    assert h.creator.output_ids is not None and x.grad.tolist() == [[0.0] * 3] * 2


def test_keepdims_is_named_too_and_the_kit_names_still_work():
    _, h = leaf_and_graph()
    with pytest.raises(TypeError, match="keepdim= for keepdims="):
        h.sum(1, keepdims=True)
    assert h.sum(dim=1, keepdim=True).shape == (2, 1) and h.max(dim=0)[0].shape == (3,)
    assert vf.cat([h, h], dim=1).shape == (2, 6)


@pytest.mark.parametrize("function", [np.sum, np.mean, np.max])
def test_numpys_reductions_on_a_variable_say_to_use_its_method(function):
    _, h = leaf_and_graph()
    name = function.__name__.replace("amax", "max")
    with pytest.raises(TypeError, match=rf"np\.{name}\(x\) calls x\.{name} with NumPy's keywords"):
        function(h)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("detach", "Variable(x.data, requires_grad=False)"),
        ("retain_grad", "register_hook"),
        ("zero_", "x.grad[...] = 0"),
        ("flatten", "x.view(-1)"),
        ("argmax", "x.max(dim).indices"),
        ("astype", "x.type(np.float32)"),
        ("relu_", "x = x.relu()"),
    ],
)
def test_todays_names_say_what_to_write_here(name, words):
    x, _ = leaf_and_graph()
    with pytest.raises(AttributeError, match=rf"a Variable has no {name} .*{re.escape(words)}"):
        getattr(x, name)
    assert not hasattr(x, name)


@pytest.mark.parametrize(
    ("name", "code", "numpy"),
    [
        ("int", "x.type(np.int32)", lambda a, b: a.astype(np.int32)),
        ("half", "x.type(np.float16)", lambda a, b: a.astype(np.float16)),
        ("bool", "x != 0", lambda a, b: a.astype(bool)),
        ("type_as", "x.type(y.dtype)", lambda a, b: a.astype(b.dtype)),
        ("minimum", "x.cmin(y)", np.minimum),
        ("maximum", "x.cmax(y)", np.maximum),
        ("square", "x ** 2", lambda a, b: np.square(a)),
        ("rsqrt", "x.sqrt().reciprocal()", lambda a, b: 1 / np.sqrt(a)),
        ("norm", "(x ** 2).sum().sqrt()", lambda a, b: np.linalg.norm(a)),
        ("var", "((x - x.mean(dim, keepdim=True)) ** 2).sum(dim) / (n - 1)", lambda a, b: a.var(1, ddof=1)),
        (
            "std",
            "((x - x.mean(dim, keepdim=True)) ** 2).sum(dim).div(n - 1).sqrt()",
            lambda a, b: a.std(1, ddof=1),
        ),
        ("eq", "x == y", np.equal),
        ("flip", "x[:, ::-1]", lambda a, b: np.flip(a, 1)),
        ("sort", "x[np.argsort(x.data)]", lambda a, b: np.sort(a)),  # its hint is for a 1-d x
        ("mT", "x.transpose(-2, -1)", lambda a, b: a.swapaxes(-2, -1)),
        ("repeat", "varfunc.cat([x, x], dim)", lambda a, b: np.concatenate([a, a], 1)),
        ("zeros_like", "Variable(np.zeros_like(x.data))", lambda a, b: np.zeros_like(a)),
    ],
)
def test_the_code_a_hint_gives_computes_what_the_missing_method_does(name, code, numpy):
    """A hint is only as good as its code: each is run and compared with NumPy's answer (for var and
    std, PyTorch's default: divided by n - 1)."""
    a = np.array([[1.0, 4.0, 2.25], [9.0, 0.5, 3.0]])
    a = a[0] if name == "sort" else a
    b = np.array([[2.0, 3.0, 2.25], [1.0, 0.5, 4.0]], dtype=np.float32)
    hint = str(pytest.raises(AttributeError, getattr, Variable(a), name).value)
    assert code in hint
    names = {"x": Variable(a), "y": Variable(b), "np": np, "varfunc": vf, "Variable": Variable}
    names.update(dim=1, n=3)
    got = eval(code, names)
    want = numpy(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.data, want, rtol=1e-15)


def test_another_missing_name_is_pythons_own_error():
    x, _ = leaf_and_graph()
    with pytest.raises(AttributeError, match=r"^'Variable' object has no attribute 'sume'$"):
        x.sume()


@pytest.mark.parametrize(
    "keywords", [{"retain_graph": True}, {"retain_variables": True}, {"create_graph": True}]
)
def test_todays_backward_keywords_say_the_graph_is_kept(keywords):
    x, h = leaf_and_graph()
    loss = h.sum()
    with pytest.raises(BackwardError, match="keeps the graph after backward, as v0.1.3 did"):
        loss.backward(**keywords)
    assert x._grad is None  # refused before the engine ran
    loss.backward()
    loss.backward()  # twice without retain_graph: the graph is kept
    assert x.grad.tolist() == [[4.0] * 3] * 2


def test_an_unknown_backward_keyword_lists_the_ones_it_takes():
    _, h = leaf_and_graph()
    with pytest.raises(BackwardError, match="it takes gradient, and engine= and recorder="):
        h.sum().backward(grad=np.ones(()))


@pytest.mark.parametrize("flag", [True, False])
def test_a_positional_requires_grad_is_refused(flag):
    with pytest.raises(DTypeError, match=rf"second argument is creator .*requires_grad={flag}"):
        Variable(np.ones(3), flag)


def test_numpy_of_a_variable_that_requires_grad_is_refused_as_in_torch():
    x, h = leaf_and_graph()
    y = (h * h).sum()
    with pytest.raises(DTypeError, match=r"numpy: the Variable requires grad \(shape \(2, 3\)\)"):
        h.numpy()  # its array was h's own data: a change to it would make x's gradient wrong
    y.backward()
    np.testing.assert_array_equal(x.grad, 8 * x.data)
    plain = Variable(np.arange(3.0), requires_grad=False)
    assert plain.numpy() is plain.data


@pytest.mark.parametrize(
    ("symbol", "update"), [("**=", lambda w: w.__ipow__(2)), ("@=", lambda w: w.__imatmul__(w))]
)
def test_power_and_matmul_in_place_are_refused_not_a_new_variable(symbol, update):
    w = Variable(np.eye(2) * 2)
    with pytest.raises(DTypeError, match=re.escape(symbol) + r": this kit has no in-place op for it"):
        update(w)
    assert w.data.tolist() == [[2.0, 0.0], [0.0, 2.0]] and w._version[0] == 0


def test_in_compares_elementwise_as_in_torch():
    x, _ = leaf_and_graph()
    assert 4.0 in x and 7.0 not in x and np.float32(0.5) in x and None not in x and "4" not in x


def test_masks_combine_with_and_or_xor_and_invert():
    x, _ = leaf_and_graph()
    inside = (x > 0) & (x < 3.5)
    assert inside.data.tolist() == [[True, False, True], [True, False, False]] and not inside.requires_grad
    assert ((x < 0) | (x > 3.5)).data.tolist() == (~inside).data.tolist()
    assert ((x > 0) ^ True).data.tolist() == (x <= 0).data.tolist()
    assert (np.array(True) & (x > 0)).data.tolist() == (x > 0).data.tolist()
    selected = x[inside]
    (selected * selected).sum().backward()
    np.testing.assert_array_equal(x.grad, np.where(inside.data, 2 * x.data, 0.0))


@pytest.mark.parametrize("call", [lambda x: x & (x > 0), lambda x: ~x, lambda x: (x > 0) | 0.5])
def test_logic_on_floats_is_refused(call):
    x, _ = leaf_and_graph()
    with pytest.raises((DTypeError, TypeError), match=r"boolean or integer|unsupported operand"):
        call(x)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_mask_selection_and_transpose_match_torch():
    a = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    x, t = Variable(a), torch.tensor(a, requires_grad=True)
    ((x[(x > 0) & (x < 3.5)] ** 2).sum() + (x.T * x.T).sum()).backward()
    ((t[(t > 0) & (t < 3.5)] ** 2).sum() + (t.T * t.T).sum()).backward()
    np.testing.assert_allclose(x.grad, t.grad.numpy())


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"engine": vf.ExecutionEngine}, "engine must be an ExecutionEngine object"),
        ({"engine": "fifo"}, "engine must be an ExecutionEngine object"),
        ({"recorder": vf.EventLog}, "recorder must be an object with a record"),
        ({"recorder": object()}, "recorder must be an object with a record"),
    ],
)
def test_an_engine_or_recorder_given_as_a_class_or_a_wrong_object_is_refused_first(options, words):
    x, h = leaf_and_graph()
    with pytest.raises(BackwardError, match=words):
        h.sum().backward(**options)
    assert x._grad is None
