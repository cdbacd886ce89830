"""varfunc.nn's losses: values, gradcheck, errors, the module forms, accuracy, against PyTorch."""

import re

import numpy as np
import pytest
from conftest import rand
from nn_models import const

import varfunc.nn as nn
from varfunc import DTypeError, ShapeError, Variable, gradcheck

# --- losses --------------------------------------------------------------------------------------

REGRESSION_LOSSES = [nn.mse_loss, nn.l1_loss, nn.smooth_l1_loss]


@pytest.mark.parametrize("loss", REGRESSION_LOSSES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_loss_gradcheck(loss, reduction):
    x, t = rand(4, 3, seed=5) * 2, rand(4, 3, seed=6) * 2  # differences on both sides of beta = 1
    assert gradcheck(lambda a, b: loss(a, b, reduction=reduction), (x, t))


def test_regression_loss_values():
    x, t = np.array([0.0, 0.5, 3.0, -2.0]), np.array([0.0, 0.0, 1.0, 0.0])
    d = x - t
    np.testing.assert_allclose(nn.mse_loss(const(x), t).item(), np.mean(d**2))
    np.testing.assert_allclose(nn.l1_loss(const(x), t).item(), np.mean(np.abs(d)))
    huber = np.where(np.abs(d) < 1, 0.5 * d**2, np.abs(d) - 0.5)
    np.testing.assert_allclose(nn.smooth_l1_loss(const(x), t, reduction="none").data, huber)
    huber2 = np.where(np.abs(d) < 2, 0.25 * d**2, np.abs(d) - 1)
    np.testing.assert_allclose(nn.smooth_l1_loss(const(x), t, reduction="sum", beta=2).item(), huber2.sum())


def test_cross_entropy_values_and_gradcheck():
    scores, labels = rand(5, 4, seed=7), np.array([0, 3, 1, 1, 2])
    shifted = scores - scores.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    expected = -logp[np.arange(5), labels]
    np.testing.assert_allclose(nn.cross_entropy(const(scores), labels, reduction="none").data, expected)
    np.testing.assert_allclose(nn.cross_entropy(const(scores), labels).item(), expected.mean())
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda s, r=reduction: nn.cross_entropy(s, labels, reduction=r), (scores,))
    assert gradcheck(lambda s: nn.nll_loss(nn.log_softmax(s, dim=1), const(labels)), (scores,))
    # Its gradient is softmax - onehot, divided by N.
    x = Variable(scores)
    nn.cross_entropy(x, labels).backward()
    softmax = np.exp(logp)
    np.testing.assert_allclose(x.grad, (softmax - np.eye(4)[labels]) / 5, atol=1e-12)


def test_cross_entropy_is_stable_for_huge_scores():
    x = Variable(np.array([[1e4, -1e4, 0.0], [-5e3, 5e3, 5e3]]))
    loss = nn.cross_entropy(x, np.array([0, 2]))
    loss.backward()
    np.testing.assert_allclose(loss.item(), np.log(2) / 2)
    assert np.all(np.isfinite(x.grad))


def test_loss_errors_are_clear():
    with pytest.raises(ShapeError, match=r"\(4, 1\).*\(4,\).*view"):
        nn.mse_loss(const(np.ones((4, 1))), np.ones(4))
    with pytest.raises(DTypeError, match=r"integer class indices, got dtype float64; use labels.astype"):
        nn.cross_entropy(const(np.ones((2, 3))), np.array([0.0, 1.0]))
    one_hot = np.eye(3)[[0, 2]]  # class probabilities: cross_entropy takes them, nll_loss does not
    with pytest.raises(DTypeError, match=r"one-hot rows pass labels.argmax\(axis=1\)"):
        nn.nll_loss(const(np.ones((2, 3))), one_hot)
    with pytest.raises(ValueError, match="class 3 but input has 3 classes"):
        nn.cross_entropy(const(np.ones((2, 3))), np.array([0, 3]))
    with pytest.raises(ShapeError, match=r"target must have shape \(2,\)"):
        nn.cross_entropy(const(np.ones((2, 3))), np.array([[0], [1]]))
    with pytest.raises(ShapeError, match=r"\(N, C\)"):
        nn.cross_entropy(const(np.ones(3)), np.array([0]))
    with pytest.raises(ValueError, match="reduction"):
        nn.l1_loss(const(np.ones(2)), np.ones(2), reduction="avg")
    with pytest.raises(DTypeError, match="Variable"):
        nn.mse_loss(np.ones(2), np.ones(2))


@pytest.mark.parametrize("loss", [nn.nll_loss, nn.cross_entropy], ids=lambda f: f.__name__)
def test_a_classification_loss_names_what_to_give_it(loss):
    name = loss.__name__
    with pytest.raises(
        DTypeError, match=rf"^{name}: input must be a Variable, got ndarray; wrap .* Variable\(array\)"
    ):
        loss(np.ones((2, 3)), np.array([0, 1]))
    for shape in [(3,), (2, 3, 4)]:
        with pytest.raises(
            ShapeError,
            match=rf"^{name}: input must .*\(N, C\).*got {re.escape(str(shape))}.*x.unsqueeze\(0\)",
        ):
            loss(const(np.ones(shape)), np.array([0]))


def test_loss_modules_and_accuracy():
    x, t = const(rand(3, 2)), rand(3, 2, seed=1)
    assert nn.MSELoss()(x, t).item() == pytest.approx(nn.mse_loss(x, t).item())
    assert nn.L1Loss(reduction="sum")(x, t).item() == pytest.approx(nn.l1_loss(x, t, reduction="sum").item())
    assert nn.SmoothL1Loss()(x, t).item() == pytest.approx(nn.smooth_l1_loss(x, t).item())
    labels = np.array([1, 0, 1])
    assert nn.CrossEntropyLoss()(x, labels).item() == pytest.approx(nn.cross_entropy(x, labels).item())
    assert nn.NLLLoss()(x, labels).item() == pytest.approx(nn.nll_loss(x, labels).item())
    assert "reduction='mean'" in repr(nn.MSELoss())
    assert nn.accuracy(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), labels) == 1.0
    assert nn.accuracy(np.array([[2.0], [-1.0], [-3.0]]), labels, threshold=0.0) == pytest.approx(2 / 3)


@pytest.mark.oracle
def test_losses_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, t, scores, labels = rand(6, 3, seed=8) * 2, rand(6, 3, seed=9), rand(6, 5, seed=10), np.arange(6) % 5
    for ours, theirs in [
        (nn.mse_loss, F.mse_loss),
        (nn.l1_loss, F.l1_loss),
        (nn.smooth_l1_loss, F.smooth_l1_loss),
    ]:
        for reduction in ("mean", "sum", "none"):
            a, ta = Variable(x), torch.tensor(x, requires_grad=True)
            out, tout = ours(a, t, reduction=reduction), theirs(ta, torch.tensor(t), reduction=reduction)
            np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
            out.backward(np.ones(out.shape))
            tout.backward(torch.ones_like(tout))
            np.testing.assert_allclose(a.grad, ta.grad.numpy(), atol=1e-12)
    a, ta = Variable(scores), torch.tensor(scores, requires_grad=True)
    out, tout = nn.cross_entropy(a, labels), F.cross_entropy(ta, torch.tensor(labels))
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), atol=1e-12)
    np.testing.assert_allclose(a.grad, ta.grad.numpy(), atol=1e-12)


def test_accuracy_takes_one_logit_per_row_in_either_shape():
    labels = np.array([1, 0, 1])
    assert nn.accuracy(np.array([2.0, -1.0, -3.0]), labels, threshold=0.0) == pytest.approx(2 / 3)
    assert nn.accuracy(np.array([[2.0], [-1.0], [-3.0]]), labels, threshold=0.0) == pytest.approx(2 / 3)
    with pytest.raises(
        ShapeError, match=r"accuracy: scores of shape \(3, 2\) give 3 predictions but there are 2"
    ):
        nn.accuracy(np.zeros((3, 2)), np.array([0, 1]))


def test_one_score_per_row_is_cut_where_the_caller_says_never_by_a_guess_from_the_values():
    labels = np.array([1, 0, 0, 1])
    probabilities = np.array([[0.9], [0.2], [0.45], [0.6]])  # a Sigmoid's outputs: all in [0, 1]
    assert nn.accuracy(probabilities, labels, threshold=0.5) == 1.0  # cut at 0 they would all be 1
    assert nn.classes_from_scores(probabilities, threshold=0.5).tolist() == [1, 0, 0, 1]
    overshoot = np.vstack([probabilities, [[1.02]]])  # trained toward 0/1 with mse: one row above 1
    assert nn.classes_from_scores(overshoot, threshold=0.5).tolist() == [1, 0, 0, 1, 1]  # the rest stay
    assert nn.classes_from_scores(np.array([0.9, -0.2, 0.45, 3.0]), threshold=0.0).tolist() == [1, 0, 1, 1]
    assert nn.classes_from_scores(np.array([[0.2, 0.7, 0.1]])).tolist() == [1]
    for read in (nn.classes_from_scores, lambda s: nn.accuracy(s, labels)):
        with pytest.raises(
            ValueError, match=r"one score per row \(shape \(4, 1\)\) .* threshold=0.5 .* threshold=0.0"
        ):
            read(probabilities)
    with pytest.raises(ValueError, match=r"accuracy: threshold is for one score per row; .* 3 per row"):
        nn.accuracy(np.eye(3), [0, 1, 2], threshold=0.5)
    model = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())
    X = np.random.default_rng(0).standard_normal((50, 2)).astype(np.float32)
    p = model(Variable(X)).data[:, 0]
    assert nn.accuracy(model(Variable(X)), (p > 0.5).astype(np.int64), threshold=0.5) == 1.0


def test_scores_with_a_dim_besides_the_rows_and_classes_are_refused_not_read_along_a_guess():
    """Before: (N, T, T) scores were read along their last dim, which is wrong for torch's (N, C, T)."""
    scores = np.random.default_rng(0).standard_normal((2, 3, 3))
    for read in (nn.classes_from_scores, lambda s: nn.accuracy(s, s.argmax(axis=1))):
        with pytest.raises(ShapeError, match=r"scores of shape \(2, 3, 3\) have more than one dim besides"):
            read(scores)
    flat = np.moveaxis(scores, 1, -1).reshape(-1, 3)  # what the message says to pass for (N, C, T)
    assert nn.accuracy(flat, scores.argmax(axis=1).reshape(-1)) == 1.0


@pytest.mark.parametrize("loss", [nn.CrossEntropyLoss, nn.NLLLoss])
def test_a_reduction_given_in_weights_place_is_refused_at_construction(loss):
    """Before: accepted, then the first call said "weight must be numbers ... got dtype <U3"."""
    with pytest.raises(
        DTypeError, match=r"the first argument is weight \(class weights\), got 'sum'; .*reduction='sum'"
    ):
        loss("sum")
    assert loss(reduction="sum").reduction == "sum"
