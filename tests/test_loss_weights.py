"""Class weights, ignore_index and label smoothing in nll_loss and cross_entropy: against the formula
written out in NumPy, numerical differences and PyTorch 2.13; the rows torch ignores or divides by
zero on."""

import warnings

import numpy as np
import pytest

import varfunc.nn as nn
from varfunc import DTypeError, ShapeError, Variable, gradcheck

REDUCTIONS = ["mean", "sum", "none"]


def numpy_nll(log_probs, target, weight, ignore_index, reduction):
    """The loss written out row by row: -w[t] * x[i, t], ignored rows left out of sum and count."""
    kept = [i for i, t in enumerate(target) if t != ignore_index]
    w = np.ones(log_probs.shape[1]) if weight is None else weight
    per_row = np.zeros(len(target))
    for i in kept:
        per_row[i] = -w[target[i]] * log_probs[i, target[i]]
    if reduction == "none":
        return per_row
    if reduction == "sum":
        return per_row.sum()
    return per_row.sum() / sum(w[target[i]] for i in kept)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_weights_and_ignored_rows_follow_the_formula(reduction, ignore_index):
    rng = np.random.default_rng(3)
    log_probs = rng.standard_normal((6, 4))
    target = np.array([0, 2, ignore_index, 3, 2, 1])
    weight = np.array([0.5, 2.0, 1.5, 0.25])
    loss = nn.nll_loss(Variable(log_probs), target, reduction, weight=weight, ignore_index=ignore_index)
    np.testing.assert_allclose(loss.data, numpy_nll(log_probs, target, weight, ignore_index, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_label_smoothing_mixes_in_the_uniform_target_as_torch_writes_it(reduction, weighted):
    rng = np.random.default_rng(6)
    scores = rng.standard_normal((5, 3))
    target = np.array([1, -100, 0, 2, 2])
    weight = np.array([0.3, 1.0, 2.5]) if weighted else None
    e = 0.2
    loss = nn.cross_entropy(Variable(scores), target, reduction, weight=weight, label_smoothing=e)
    log_probs = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    w = np.ones(3) if weight is None else weight
    uniform = np.where(target == -100, 0.0, -(log_probs * w).sum(axis=1))
    kept_weight = sum(w[t] for t in target if t != -100)
    reduce = {"none": lambda v: v, "sum": np.sum, "mean": lambda v: np.sum(v) / kept_weight}[reduction]
    nll = numpy_nll(log_probs, target, weight, -100, reduction)
    np.testing.assert_allclose(loss.data, (1 - e) * nll + e / 3 * reduce(uniform))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_weighted_ignoring_and_smoothed_losses_pass_gradcheck(reduction, weighted, smoothing):
    rng = np.random.default_rng(4)
    scores = Variable(rng.standard_normal((5, 3)))
    target = np.array([1, -100, 0, 2, -100])
    weight = np.array([0.3, 1.0, 2.5]) if weighted else None

    def loss(s):
        return nn.cross_entropy(s, target, reduction, weight=weight, label_smoothing=smoothing).sum()

    assert gradcheck(loss, (scores,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("smoothing", [None, 0.1])
def test_every_row_ignored_gives_nan_and_zero_gradients_as_in_torch(dtype, smoothing):
    x = Variable(np.zeros((2, 3), dtype=dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch says nothing either
        if smoothing is None:
            loss = nn.nll_loss(x, np.array([-100, -100]))
        else:
            loss = nn.cross_entropy(x, np.array([-100, -100]), label_smoothing=smoothing)
        loss.backward()
    assert np.isnan(loss.item()) and loss.data.dtype == dtype
    np.testing.assert_array_equal(x.grad, np.zeros((2, 3)))
    assert x.grad.dtype == dtype


def test_an_ignored_row_adds_0_even_where_its_log_probability_is_minus_inf():
    x = Variable(np.array([[-np.inf, 0.0], [-1.0, -2.0]]))
    loss = nn.nll_loss(x, np.array([-100, 1]), reduction="sum")
    assert loss.item() == 2.0
    loss.backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0], [0.0, -1.0]])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_an_ignored_row_of_minus_inf_scores_adds_0_with_label_smoothing_too(reduction):
    # 'none' once multiplied the smoothing term by 0 for an ignored row: -inf * 0 gave nan
    x = Variable(np.array([[-np.inf, 1.0, 2.0], [0.5, 0.1, 0.2], [0.3, 0.2, -1.0]]))
    target = np.array([-100, 2, 0])
    loss = nn.cross_entropy(x, target, reduction, label_smoothing=0.1)
    kept = nn.cross_entropy(Variable(x.data[1:]), target[1:], "none", label_smoothing=0.1).data
    expected = {"none": np.concatenate([[0.0], kept]), "sum": kept.sum(), "mean": kept.mean()}[reduction]
    np.testing.assert_allclose(loss.data, expected, rtol=1e-12)
    (loss.sum() if reduction == "none" else loss).backward()
    assert np.isfinite(x.grad).all() and not x.grad[0].any()


def test_weights_keep_float32_and_the_module_forms_pass_them_on():
    x = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)
    target, weight = np.array([2, 0, -100, 1]), [1.0, 3.0, 0.5]
    loss = nn.cross_entropy(Variable(x), target, weight=weight)
    assert loss.data.dtype == np.float32
    module = nn.CrossEntropyLoss(weight, reduction="sum")
    expected = nn.cross_entropy(Variable(x), target, "sum", weight=weight).item()
    assert module(Variable(x), target).item() == pytest.approx(expected)
    ignoring = nn.NLLLoss(ignore_index=0)
    assert ignoring(Variable(x), np.array([0, 0, 1, 2])).item() == pytest.approx(-(x[2, 1] + x[3, 2]) / 2)
    smoothed = nn.CrossEntropyLoss(label_smoothing=0.25)(Variable(x), target)
    assert smoothed.data.dtype == np.float32
    assert smoothed.item() == pytest.approx(
        nn.cross_entropy(Variable(x), target, label_smoothing=0.25).item()
    )


def test_class_weight_and_ignore_index_errors():
    x = Variable(np.zeros((2, 3)))
    with pytest.raises(ShapeError, match=r"weight must have one entry per class, shape \(3,\), got \(2,\)"):
        nn.cross_entropy(x, np.array([0, 1]), weight=np.ones(2))
    with pytest.raises(DTypeError, match="weight is a constant and gets no gradient"):
        nn.nll_loss(x, np.array([0, 1]), weight=Variable(np.ones(3)))
    with pytest.raises(DTypeError, match="weight must be numbers"):
        nn.nll_loss(x, np.array([0, 1]), weight=["a", "b", "c"])
    with pytest.raises(TypeError, match="pass class weights by name: weight="):
        nn.cross_entropy(x, np.array([0, 1]), np.ones(3))  # torch's positional weight
    for smoothing in (-0.1, 1.5, "0.1", True, float("nan")):
        with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0"):
            nn.cross_entropy(x, np.array([0, 1]), label_smoothing=smoothing)
    with pytest.raises(TypeError, match="ignore_index must be an int, got None"):
        nn.nll_loss(x, np.array([0, 1]), ignore_index=None)
    with pytest.raises(ValueError, match="target holds class -100 but input has 3 classes"):
        nn.nll_loss(x, np.array([0, -100]), ignore_index=1)
    with pytest.raises(ValueError, match="target holds class 3"):
        nn.nll_loss(x, np.array([3, -100]))


@pytest.mark.parametrize("seed", range(4))
def test_weights_and_ignore_index_against_torch(seed):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(seed)
    for trial in range(60):
        n, c = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        dtype = (np.float32, np.float64)[trial % 2]
        x = rng.standard_normal((n, c)).astype(dtype)
        target = rng.integers(0, c, n)
        ignore_index = int(rng.choice([-100, rng.integers(0, c)]))
        target[rng.random(n) < 0.4] = ignore_index
        weight = None if trial % 3 == 0 else rng.random(c) * (rng.random(c) > 0.2)  # some weights 0
        reduction = REDUCTIONS[trial % 3]
        smoothing = {"label_smoothing": float(rng.choice([0.0, 0.1, 1.0, rng.random()]))}
        for ours, theirs, more in (
            (nn.cross_entropy, F.cross_entropy, smoothing),
            (nn.nll_loss, F.nll_loss, {}),
        ):
            v, t = Variable(x.copy()), torch.tensor(x, requires_grad=True)
            out = ours(v, target, reduction, weight=weight, ignore_index=ignore_index, **more)
            tw = None if weight is None else torch.tensor(weight, dtype=t.dtype)
            want = theirs(
                t, torch.tensor(target), weight=tw, ignore_index=ignore_index, reduction=reduction, **more
            )
            seed_grad = rng.standard_normal(out.shape).astype(dtype)
            out.backward(seed_grad)
            want.backward(torch.tensor(seed_grad))
            tol = {"rtol": 1e-4, "atol": 1e-6, "equal_nan": True}
            np.testing.assert_allclose(out.data, want.detach().numpy(), **tol)
            np.testing.assert_allclose(v.grad, t.grad.numpy(), **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weights_ignore_index_and_smoothing_give_the_same_on_every_device(device, reduction):
    from conftest import on_device

    from varfunc.backend import device_of

    x = np.random.default_rng(8).standard_normal((6, 4)).astype(np.float32)
    target, weight = np.array([0, 3, -100, 1, 3, 2]), np.array([1.0, 0.5, 2.0, 0.0])
    results = []
    for where in ("cpu", device):
        v = Variable(on_device(where, x.copy()))
        loss = nn.cross_entropy(v, target, reduction, weight=weight, label_smoothing=0.1)
        loss.backward(on_device(where, np.ones(loss.shape, dtype=np.float32)))
        assert loss.device == v.device == device_of(v.grad)
        results.append([on_device("cpu", a) for a in (loss.data, v.grad)])
    for ours, cpu in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, cpu, rtol=1e-5, atol=1e-7)
