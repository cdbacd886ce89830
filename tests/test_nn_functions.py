"""nn's one-node Functions (Linear, NLLLoss) give what the core's ops composed give, with fewer nodes."""

import numpy as np
import pytest
from conftest import on_device, rand

import varfunc.nn as nn
from varfunc import InplaceError, ShapeError, Variable, gradcheck
from varfunc.modern import modern_name
from varfunc.nn import functions


def composed_linear(x, w, b=None):
    out = x.matmul(w.t())
    return out if b is None else out + b


def composed_nll(logp, labels, reduction):
    picked = -logp[np.arange(logp.shape[0]), labels]
    return {"mean": picked.mean, "sum": picked.sum, "none": lambda: picked}[reduction]()


INPUT_SHAPES = [(5, 4), (4,), (2, 3, 4), (0, 4)]
# (input, weight) shapes with no features on one side: every gradient is empty or zero
EMPTY_LAYERS = [((5, 0), (3, 0)), ((5, 4), (0, 4))]


@pytest.mark.parametrize("shape", INPUT_SHAPES[:3], ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
def test_linear_gradcheck(shape, bias):
    x, w, b = rand(*shape, seed=1), rand(3, 4, seed=2), rand(3, seed=3)
    inputs = (x, w, b) if bias else (x, w)
    assert gradcheck(lambda *v: nn.linear(*v), inputs)


@pytest.mark.parametrize("shape", INPUT_SHAPES, ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
def test_linear_matches_the_composed_ops(device, shape, bias):
    arrays = [on_device(device, a) for a in (rand(*shape, seed=4), rand(3, 4, seed=5), rand(3, seed=6))]
    seed = on_device(device, rand(*shape[:-1], 3, seed=7))
    results = []
    for op in (nn.linear, composed_linear):
        leaves = [Variable(a.copy()) for a in (arrays if bias else arrays[:2])]
        out = op(*leaves)
        out.backward(seed)
        results.append([out.data] + [v.grad for v in leaves])
    for ours, composed in zip(*results):
        np.testing.assert_allclose(on_device("cpu", ours), on_device("cpu", composed), atol=1e-12)


@pytest.mark.parametrize("x_shape, w_shape", EMPTY_LAYERS, ids=str)
def test_linear_with_no_in_or_out_features(x_shape, w_shape):
    results = []
    for op in (nn.linear, composed_linear):
        leaves = [Variable(np.ones(shape)) for shape in (x_shape, w_shape, w_shape[:1])]
        out = op(*leaves)
        out.sum().backward()
        results.append([out.data] + [v.grad for v in leaves])
    for ours, composed in zip(*results):
        assert ours.shape == composed.shape
        np.testing.assert_array_equal(ours, composed)


def test_a_weight_changed_between_forward_and_backward_is_an_inplace_error():
    layer = nn.Linear(4, 3, dtype=np.float64)
    x = Variable(rand(5, 4))
    out = layer(x)
    layer.weight.data -= 0.1  # an optimizer step before backward
    with pytest.raises(InplaceError, match="saved tensor 1 .*modified by an in-place operation"):
        out.sum().backward()


@pytest.fixture
def returned(monkeypatch):
    """What each Linear.backward returns, in call order."""
    grads = []
    backward = functions.Linear.backward
    monkeypatch.setattr(functions.Linear, "backward", lambda *a: grads.append(backward(*a)) or grads[-1])
    return grads


def test_linear_is_one_node_and_skips_the_gradients_nobody_needs(returned):
    layer = nn.Linear(4, 3, dtype=np.float64)
    x = Variable(rand(5, 4), requires_grad=False)
    out = layer(x)
    assert type(out.creator) is functions.Linear
    assert [type(fn).__name__ for fn, _ in out.creator.previous_functions] == ["Leaf"] * 3
    assert out.creator.needs_input_grad == (False, True, True)
    out.sum().backward()
    assert returned[0][0] is None and x.grad is None  # the input's product is never computed
    np.testing.assert_allclose(layer.weight.grad, np.ones((5, 3)).T @ x.data)


def test_the_weight_keeps_its_gradient_uncopied(returned):
    layer = nn.Linear(4, 3, dtype=np.float64)
    layer(Variable(rand(5, 4), requires_grad=False)).sum().backward()
    assert layer.weight.grad is returned[0][1]
    assert layer.bias.grad is returned[0][2]
    np.testing.assert_allclose(layer.bias.grad, np.full(3, 5.0))


def test_linear_output_dtype_follows_numpys_promotion():
    x, w = Variable(rand(2, 4).astype(np.float32)), Variable(rand(3, 4).astype(np.float32))
    for b_dtype, expected in ((np.float32, np.float32), (np.float64, np.float64)):
        b = Variable(rand(3).astype(b_dtype))
        out = nn.linear(x, w, b)
        assert out.dtype == composed_linear(x, w, b).dtype == expected
        out.sum().backward()
        assert w.grad.dtype == np.float32 and b.grad.dtype == b_dtype
        w.grad = b.grad = None


@pytest.mark.parametrize(
    "x_shape, w_shape, b_shape, message",
    [
        ((5, 4), (3, 4, 1), (3,), r"weight must be \(out_features, in_features\), got shape \(3, 4, 1\)"),
        ((5, 2), (3, 4), (3,), r"input of shape \(5, 2\) does not fit weight \(3, 4\).*in_features = 4"),
        ((), (3, 4), (3,), r"input of shape \(\) does not fit"),
        ((5, 4), (3, 4), (4,), r"bias must have shape \(3,\) for weight \(3, 4\), got \(4,\)"),
    ],
)
def test_linear_shape_errors_name_the_sizes_and_record_nothing(x_shape, w_shape, b_shape, message):
    x, w, b = Variable(np.ones(x_shape)), Variable(np.ones(w_shape)), Variable(np.ones(b_shape))
    fn = functions.Linear()
    with pytest.raises(ShapeError, match=message):
        fn(x, w, b)
    assert fn.output_ids is None and fn.previous_functions is None


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_matches_the_composed_ops_and_gradcheck(device, reduction):
    scores, labels = rand(6, 4, seed=8), np.array([0, 3, 1, 1, 2, 3])
    logp = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    results = []
    for op in (nn.nll_loss, lambda v, t, reduction: composed_nll(v, t, reduction)):
        x = Variable(on_device(device, logp))
        out = op(x, on_device(device, labels), reduction=reduction)
        out.backward(on_device(device, rand(*out.shape, seed=9)))
        results.append((on_device("cpu", out.data), on_device("cpu", x.grad)))
    for ours, composed in zip(*results):
        np.testing.assert_array_equal(ours, composed)
    if device == "cpu":
        assert gradcheck(lambda v: nn.nll_loss(v, labels, reduction=reduction), (logp,))


def test_nll_loss_keeps_the_labels_it_was_given():
    x = Variable(rand(4, 3))
    labels = np.array([0, 1, 2, 0])
    label_variable = Variable(labels.copy(), requires_grad=False)
    losses = [nn.nll_loss(x, labels, "sum"), nn.nll_loss(x, label_variable, "sum")]
    labels[:] = 2
    label_variable.add_(1)
    for loss in losses:
        x.grad = None
        loss.backward()
        np.testing.assert_array_equal(x.grad, -np.eye(3)[[0, 1, 2, 0]])


def test_nll_loss_keeps_float32_and_refuses_a_bad_reduction_before_recording():
    x = Variable(rand(3, 2).astype(np.float32))
    loss = nn.nll_loss(x, np.array([0, 1, 1]))
    assert loss.dtype == np.float32 and type(loss.creator) is functions.NLLLoss
    loss.backward()
    assert x.grad.dtype == np.float32
    with pytest.raises(ValueError, match=r"nll_loss: reduction must be one of .*'average'"):
        nn.nll_loss(x, np.array([0, 1, 1]), reduction="average")


def test_cross_entropy_is_two_nodes():
    loss = nn.cross_entropy(Variable(rand(3, 4)), np.array([0, 1, 2]))
    assert type(loss.creator) is functions.NLLLoss
    assert [type(fn).__name__ for fn, _ in loss.creator.previous_functions] == ["LogSoftmax"]


@pytest.mark.oracle
def test_linear_and_nll_loss_match_torch_values_gradients_and_names():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, w, b, labels = rand(5, 4, seed=10), rand(3, 4, seed=11), rand(3, seed=12), np.array([0, 2, 1, 1, 0])
    ours = [Variable(a) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = nn.nll_loss(nn.linear(*ours).log_softmax(dim=1), labels)
    tout = F.nll_loss(F.linear(*theirs).log_softmax(dim=1), torch.tensor(labels))
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), atol=1e-12)
    for v, t in zip(ours, theirs):
        np.testing.assert_allclose(v.grad, t.grad.numpy(), atol=1e-12)
    assert modern_name(out.creator) == tout.grad_fn.name()


@pytest.mark.oracle
@pytest.mark.parametrize("shape", INPUT_SHAPES + [(6, 2, 3, 4)], ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
def test_linear_is_named_as_torch_names_f_linear(shape, bias):
    torch = pytest.importorskip("torch")
    arrays = (rand(*shape), rand(3, 4), rand(3))[: 3 if bias else 2]
    ours = nn.linear(*(Variable(a) for a in arrays)).creator
    theirs = torch.nn.functional.linear(*(torch.tensor(a, requires_grad=True) for a in arrays)).grad_fn
    assert ours.name() == theirs.name()
