"""cross_entropy with class probabilities as the target (torch 2's second form): against the formula
written out in NumPy, the index form, numerical differences and PyTorch 2.13, and its errors."""

import numpy as np
import pytest

import varfunc.nn as nn
from varfunc import DTypeError, ShapeError, Variable, gradcheck

REDUCTIONS = ["mean", "sum", "none"]


def probabilities(rng, n, c, dtype=np.float64):
    """n rows of c class probabilities (each row sums to 1)."""
    p = rng.random((n, c)) + 0.05
    return (p / p.sum(axis=1, keepdims=True)).astype(dtype)


def numpy_soft_loss(scores, target, weight, smoothing, reduction):
    """-sum_c w_c * t_c * log_softmax(scores)_c per row, t smoothed first; 'mean' divides by N."""
    log_probs = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    t = target * (1 - smoothing) + smoothing / scores.shape[1]
    w = np.ones(scores.shape[1]) if weight is None else weight
    per_row = -(w * t * log_probs).sum(axis=1)
    return {"none": per_row, "sum": per_row.sum(), "mean": per_row.mean()}[reduction]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_probability_targets_follow_the_formula(reduction, weighted, smoothing):
    rng = np.random.default_rng(1)
    scores, target = rng.standard_normal((5, 4)), probabilities(rng, 5, 4)
    weight = np.array([0.5, 2.0, 1.5, 0.0]) if weighted else None
    loss = nn.cross_entropy(Variable(scores), target, reduction, weight=weight, label_smoothing=smoothing)
    np.testing.assert_allclose(loss.data, numpy_soft_loss(scores, target, weight, smoothing, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_one_hot_rows_give_what_their_indices_give(reduction, smoothing):
    rng = np.random.default_rng(2)
    scores, labels = rng.standard_normal((6, 3)), np.array([0, 2, 1, 1, 0, 2])
    results = []
    for target in (labels, np.eye(3)[labels]):
        x = Variable(scores.copy())
        loss = nn.cross_entropy(x, target, reduction, label_smoothing=smoothing)
        loss.backward(np.ones(loss.shape))
        results.append((loss.data, x.grad))
    for by_index, by_row in zip(*results):
        np.testing.assert_allclose(by_row, by_index, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_scores_and_a_target_that_requires_grad_pass_gradcheck(reduction, weighted):
    rng = np.random.default_rng(3)
    scores = Variable(rng.standard_normal((4, 3)), requires_grad=True)
    target = Variable(probabilities(rng, 4, 3), requires_grad=True)
    weight = np.array([0.3, 1.0, 2.5]) if weighted else None

    def loss(s, t):
        return nn.cross_entropy(s, t, reduction, weight=weight, label_smoothing=0.2).sum()

    assert gradcheck(loss, (scores, target))


@pytest.mark.parametrize("seed", range(3))
def test_probability_targets_against_torch(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    for trial in range(40):
        n, c = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        dtype = (np.float32, np.float64)[trial % 2]
        scores, target = rng.standard_normal((n, c)).astype(dtype), probabilities(rng, n, c, dtype)
        if trial % 4 == 3:
            target = rng.standard_normal((n, c)).astype(dtype)  # any numbers: torch does not check
        weight = None if trial % 3 == 0 else rng.random(c)
        options = {"reduction": REDUCTIONS[trial % 3], "label_smoothing": float(rng.choice([0.0, 0.3]))}
        x, t = Variable(scores.copy(), requires_grad=True), Variable(target.copy(), requires_grad=True)
        tx, tt = (torch.tensor(a, requires_grad=True) for a in (scores, target))
        out = nn.cross_entropy(x, t, weight=weight, **options)
        tw = None if weight is None else torch.tensor(weight, dtype=tx.dtype)
        want = torch.nn.functional.cross_entropy(tx, tt, weight=tw, **options)
        seed_grad = rng.standard_normal(out.shape).astype(dtype)
        out.backward(seed_grad)
        want.backward(torch.tensor(seed_grad))
        tol = {"rtol": 1e-4, "atol": 1e-6}
        assert out.data.dtype == dtype
        np.testing.assert_allclose(out.data, want.detach().numpy(), **tol)
        np.testing.assert_allclose(x.grad, tx.grad.numpy(), **tol)
        np.testing.assert_allclose(t.grad, tt.grad.numpy(), **tol)


def test_the_module_form_takes_probabilities():
    rng = np.random.default_rng(4)
    scores, target = rng.standard_normal((3, 4)).astype(np.float32), probabilities(rng, 3, 4, np.float32)
    module = nn.CrossEntropyLoss(reduction="sum", label_smoothing=0.1)
    expected = nn.cross_entropy(Variable(scores), target, "sum", label_smoothing=0.1).item()
    assert module(Variable(scores), target).item() == pytest.approx(expected)


def test_probability_target_errors():
    x = Variable(np.zeros((2, 3)))
    soft = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match=r"ignore_index=1 needs class indices; .*probabilities of 0"):
        nn.cross_entropy(x, soft, ignore_index=1)
    with pytest.raises(TypeError, match="pass class weights by name: weight="):
        nn.cross_entropy(x, soft, np.ones(3))
    with pytest.raises(ShapeError, match=r"weight must have one entry per class"):
        nn.cross_entropy(x, soft, weight=np.ones(2))
    with pytest.raises(DTypeError, match=r"got dtype float64; .*go to cross_entropy, which takes scores"):
        nn.nll_loss(x, soft)
    with pytest.raises(DTypeError, match=r"got dtype bool; for one-hot rows pass labels.argmax\(axis=1\)"):
        nn.cross_entropy(x, soft > 0)
    with pytest.raises(ShapeError, match=r"got \(2, 3\) \(one-hot rows\? pass labels.argmax\(axis=1\)\)"):
        nn.cross_entropy(x, np.eye(3, dtype=np.int64)[[0, 2]])
    with pytest.raises(DTypeError, match=r"integer class indices, got dtype float64; use labels.astype"):
        nn.cross_entropy(x, np.array([0.0, 1.0]))  # floats of another shape: indices meant
    with pytest.raises(DTypeError, match=r"probabilities must have the input's shape \(2, 3\), got \(3, 3\)"):
        nn.cross_entropy(x, np.full((3, 3), 1 / 3))  # probabilities meant, for the wrong number of rows


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_probability_targets_give_the_same_on_every_device(device, reduction):
    from conftest import on_device

    rng = np.random.default_rng(8)
    scores, target = rng.standard_normal((6, 4)).astype(np.float32), probabilities(rng, 6, 4, np.float32)
    results = []
    for where in ("cpu", device):
        x = Variable(on_device(where, scores.copy()))
        loss = nn.cross_entropy(x, on_device(where, target), reduction, weight=[1, 0.5, 2, 0])
        loss.backward(on_device(where, np.ones(loss.shape, dtype=np.float32)))
        results.append([on_device("cpu", a) for a in (loss.data, x.grad)])
    for ours, cpu in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, cpu, rtol=1e-5, atol=1e-7)
