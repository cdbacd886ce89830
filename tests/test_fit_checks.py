"""What fit checks before it changes anything, and what predict_classes and plot_decision_boundary
do with a model in training mode, one sample, or labels that are not all the classes."""

import numpy as np
import pytest
from nn_models import const

import varfunc.data as data
import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DTypeError, ShapeError, Variable
from varfunc.train import evaluate, fit, plot_decision_boundary, predict_classes


def spiral_problem(dropout=True):
    """Two spirals and a 2-8-2 classifier (with Dropout), seeded."""
    nn.manual_seed(0)
    X, y = data.two_spirals(25, dtype=np.float64)
    layers = [nn.Linear(2, 8, dtype=np.float64), nn.ReLU()]
    layers += [nn.Dropout(0.5)] if dropout else []
    model = nn.Sequential(*layers, nn.Linear(8, 2, dtype=np.float64))
    return X, y, model, optim.Adam(model.parameters(), lr=0.03)


def test_predict_classes_runs_in_eval_mode_and_puts_the_mode_back():
    X, y, model, optimizer = spiral_problem()
    fit(model, nn.cross_entropy, optimizer, (X, y), epochs=5, seed=0, progress=False)
    assert model.training  # fit leaves the model training, as the 2017 loop did
    first = predict_classes(model, X)
    assert model.training  # and so does predict_classes
    np.testing.assert_array_equal(predict_classes(model, X), first)  # Dropout off: the same classes
    model.eval()
    np.testing.assert_array_equal(predict_classes(model, X), first)


def test_predict_classes_wants_one_row_per_sample():
    X, _, model, _ = spiral_problem()
    with pytest.raises(
        ShapeError, match=r"predict_classes: X must hold one row per sample, got shape \(2,\)"
    ):
        predict_classes(model, X[0])  # once read as two binary scores: two "classes" for one sample
    assert predict_classes(model, X[:1]).shape == (1,)


class Recording(nn.Module):
    """A model that keeps every input it is given."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.seen = inner, []

    def forward(self, x):
        self.seen.append(x.data)
        return self.inner(x)


def test_the_points_have_their_regions_colours_and_integer_points_get_a_fine_grid():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, model, _ = spiral_problem(dropout=False)
    ones = np.ones(len(X), dtype=np.int64)  # every point of class 1: drawn in class 0's colour before
    ax = plot_decision_boundary(model, X, ones)
    points = ax.collections[-1]
    assert (points.norm.vmin, points.norm.vmax) == (-0.5, 1.5)
    recording = Recording(model)
    plot_decision_boundary(recording, np.array([[0, 0], [3, 3]]), np.array([0, 1]), resolution=50)
    assert len(np.unique(recording.seen[-1][:, 0])) == 50  # the integer points' grid was cut to {0, 1, 2, 3}
    plt.close("all")


@pytest.mark.parametrize(
    "change, error, words",
    [
        (lambda X, y: dict(val_data=(X[:0], y[:0])), ValueError, "fit: val_data has no rows"),
        (lambda X, y: dict(stop_loss="1e-3"), TypeError, "fit: stop_loss must be a number"),
        (
            lambda X, y: dict(callback=5),
            TypeError,
            r"fit: callback must be a function callback\(step, loss\)",
        ),
        (
            lambda X, y: dict(optimizer="sgd"),
            TypeError,
            r"fit: optimizer must have zero_grad\(\) and step\(\)",
        ),
        (lambda X, y: dict(train_data=(X, y.astype(float))), DTypeError, "integer class indices"),
        (lambda X, y: dict(train_data=(X[:, :1], y)), ShapeError, "Linear"),
    ],
    ids=["empty val_data", "stop_loss", "callback", "optimizer", "float labels", "one feature"],
)
def test_fit_refuses_a_mistake_before_it_changes_the_model_its_mode_or_nn_generator(change, error, words):
    # mistakes found at the first step came after model.train(), zero_grad() and a Dropout mask
    X, y, model, optimizer = spiral_problem()
    model.eval()
    for p in model.parameters():
        p.grad = np.ones_like(p.data)
    settings = dict(loss_fn=nn.cross_entropy, optimizer=optimizer, train_data=(X, y), progress=False)
    settings.update(change(X, y))
    weights = [p.data.copy() for p in model.parameters()]
    state = nn.default_rng().bit_generator.state
    with pytest.raises(error, match=words):
        fit(model, settings.pop("loss_fn"), settings.pop("optimizer"), settings.pop("train_data"), **settings)
    assert not model.training and nn.default_rng().bit_generator.state == state
    for p, w in zip(model.parameters(), weights):
        np.testing.assert_array_equal(p.data, w)
        np.testing.assert_array_equal(p.grad, np.ones_like(w))


@pytest.mark.parametrize("seed", [0, None], ids=["seed", "order from nn's generator"])
def test_fit_refuses_a_loss_cut_from_the_model(seed):
    """Refused at the first step, before it changes the weights, the gradients or nn's generator (the
    order's seed and the Dropout layer's mask drew from it)."""
    X, y, model, optimizer = spiral_problem()
    cut = lambda output, target: nn.cross_entropy(Variable(output.data), target)  # noqa: E731
    weights = [p.data.copy() for p in model.parameters()]
    for p in model.parameters():
        p.grad = np.ones_like(p.data)
    state = nn.default_rng().bit_generator.state
    with pytest.raises(ValueError, match="the loss does not depend on any parameter the optimizer holds"):
        fit(model, cut, optimizer, (X, y), seed=seed, progress=False)  # it once trained nothing, silently
    assert nn.default_rng().bit_generator.state == state
    for p, w in zip(model.parameters(), weights):
        np.testing.assert_array_equal(p.data, w)
        np.testing.assert_array_equal(p.grad, np.ones_like(w))  # refused before zero_grad


def test_fit_refuses_a_seed_its_batches_would_ignore():
    X, y, model, optimizer = spiral_problem()
    batches = data.Minibatches(X, y, batch_size=10, seed=1)
    with pytest.raises(
        ValueError,
        match=r"seed=99 is for cutting arrays \(X, y\) into batches, but train_data is Minibatches, which",
    ):
        fit(model, nn.cross_entropy, optimizer, batches, seed=99, progress=False)


def test_an_epoch_of_tuple_inputs_is_weighted_by_rows_not_by_inputs():
    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 1, dtype=np.float64)

        def forward(self, pair):
            a, b = pair
            return self.fc(a) + self.fc(b)

    model = TwoInputs()
    X = np.random.default_rng(0).standard_normal((50, 2))
    y = X.sum(1, keepdims=True)
    batches = [
        ((const(X[:40]), const(X[:40])), const(y[:40])),
        ((const(X[40:]), const(X[40:])), const(y[40:])),
    ]
    history = fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.0), batches, progress=False)
    expected = (40 * history.losses[0] + 10 * history.losses[1]) / 50
    assert history.epoch_losses == [pytest.approx(expected)]


def test_evaluate_refuses_no_rows():
    X, y, model, _ = spiral_problem()
    with pytest.raises(ValueError, match="evaluate: X has no rows"):
        evaluate(model, X[:0], y[:0], nn.cross_entropy)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns on the 0 / 0
def test_a_batch_whose_targets_are_all_ignored_is_named_as_a_cause_of_a_nan_loss():
    """Before: fit said to lower the learning rate or look for inf/nan in the inputs: neither is it."""
    X = np.random.default_rng(0).standard_normal((6, 2))
    y = np.array([0, 1, -100, -100, 2, 1])  # the second batch of 2 holds ignored rows only
    nn.manual_seed(0)
    model = nn.Linear(2, 3, dtype=np.float64)
    batches = data.Minibatches(X, y, batch_size=2, shuffle=False)
    with pytest.raises(FloatingPointError, match=r"at step 2; .*every target of this batch is ignored"):
        fit(model, nn.cross_entropy, optim.SGD(model.parameters(), lr=0.1), batches, progress=False)


def test_weights_that_are_no_longer_finite_are_named_as_the_cause():
    X, y = np.ones((4, 2)), np.zeros(4, dtype=np.int64)
    model = nn.Linear(2, 2, dtype=np.float64)
    model.weight.data[0, 0] = np.inf
    batches = [(Variable(X), y)]  # made by hand: fit tries no arrays before the first step
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match="weights are no longer finite"):
        fit(model, nn.cross_entropy, optim.SGD(model.parameters(), lr=0.1), batches, progress=False)
