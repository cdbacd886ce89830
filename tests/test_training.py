"""Training end to end: the 2017 regression example, spirals, fit(), History plots, progress bars.

The thresholds are stated here with the values measured when they were chosen (seeded, CPU);
an untrained model fails each of them.
"""

import contextlib
import re

import numpy as np
import pytest
from conftest import on_device
from nn_models import const

import varfunc.data as data
import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import Variable
from varfunc.train import History, evaluate, fit, plot_decision_boundary, predict_classes

# Polynomial regression (pytorch/examples regression/main.py, 2017): Linear(4, 1), smooth L1,
# p.data -= 0.1 * p.grad, fresh batches of 32. Stop rule: batch loss < 1e-3.
POLY_MAX_STEPS = 2000  # measured: stops after 400 steps
POLY_HELD_OUT = 1e-2  # smooth L1 on 1000 fresh points; measured 2.0e-3; untrained 6.9
POLY_WEIGHT_TOL = 0.1  # |fitted - true| per coefficient; measured at most 0.04

# Two spirals (200 points per class, 1.5 turns): 2-32-32-2 Tanh MLP, Adam(lr=0.02), full batch.
SPIRAL_STEPS = 300
SPIRAL_TRAIN_ACC = 0.97  # measured 1.00 from step 150 on (0.96 at step 100); untrained 0.41
SPIRAL_TEST_ACC = 0.93  # on a fresh draw (seed 1); measured 1.00


def test_polynomial_regression_as_in_the_2017_example():
    nn.manual_seed(0)
    target = data.PolynomialTarget(seed=0)
    fc = nn.Linear(4, 1)
    held_out_x = data.make_features(np.random.default_rng(1).standard_normal(1000)).astype(np.float32)
    held_out_y = target.f(held_out_x).astype(np.float32)

    def held_out_loss():
        return nn.smooth_l1_loss(
            fc(Variable(held_out_x, volatile=True)), Variable(held_out_y, volatile=True)
        ).item()

    assert held_out_loss() > 1.0  # untrained
    for _ in range(POLY_MAX_STEPS):
        batch_x, batch_y = target.batch(32)
        fc.zero_grad()
        output = nn.smooth_l1_loss(fc(const(batch_x)), const(batch_y))
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data -= 0.1 * param.grad
        if loss < 1e-3:
            break
    else:
        pytest.fail(f"the batch loss is still {loss} after {POLY_MAX_STEPS} steps")
    assert held_out_loss() < POLY_HELD_OUT
    np.testing.assert_allclose(fc.weight.data.reshape(-1), target.weight.reshape(-1), atol=POLY_WEIGHT_TOL)
    np.testing.assert_allclose(fc.bias.data, target.bias, atol=POLY_WEIGHT_TOL)
    # The printed description (as the example prints it) reads back as the true coefficients.
    printed = [float(c) for c in re.findall(r"[+-]\d+\.\d\d", data.poly_desc(fc.weight.data, fc.bias.data))]
    true = np.append(target.weight.reshape(-1), target.bias)
    np.testing.assert_allclose(printed, true, atol=POLY_WEIGHT_TOL + 0.005)


def spiral_model():
    nn.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 2))


def test_spirals_classifier_reaches_stated_accuracy(device):
    X, y = data.two_spirals(200, seed=0)
    X_test, y_test = data.two_spirals(200, seed=1)
    model = spiral_model().to(device)
    x = const(on_device(device, X))
    assert nn.accuracy(model(x), y) < 0.65  # untrained
    optimizer = optim.Adam(model.parameters(), lr=0.02)
    for _ in range(SPIRAL_STEPS):
        optimizer.zero_grad()
        loss = nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    assert nn.accuracy(model(x), y) >= SPIRAL_TRAIN_ACC
    assert evaluate(model, X_test, y_test, metrics={"acc": nn.accuracy})["acc"] >= SPIRAL_TEST_ACC
    assert all(p.device == x.device and type(p.grad) is type(p.data) for p in model.parameters())


def test_fit_on_moons_with_minibatches(device):
    X, y = data.moons(300, noise=0.1, seed=0)
    X_val, y_val = data.moons(200, noise=0.1, seed=1)
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
    batches = data.Minibatches(X, y, batch_size=32, seed=0, device=device)
    history = fit(
        model,
        nn.cross_entropy,
        optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        batches,
        epochs=20,
        val_data=(X_val, y_val),
        metrics={"accuracy": nn.accuracy},
        progress=False,
    )
    assert isinstance(history, History)
    assert history.steps == 20 * len(batches) == len(history.losses)
    assert len(history.epoch_losses) == 20 and len(history.metrics["accuracy"]) == 20
    assert set(history.val_metrics) == {"loss", "accuracy"}
    assert history.metrics["accuracy"][0] < history.metrics["accuracy"][-1]
    assert history.val_metrics["accuracy"][0] < 0.9  # measured 0.845 after one epoch
    assert history.val_metrics["accuracy"][-1] >= 0.95  # measured 0.985 (a linear model: 0.855)
    assert history.epoch_losses[-1] < 0.5 * history.epoch_losses[0]
    assert history.seconds > 0 and "History(steps=200" in repr(history)
    assert model.training  # evaluate() restored the mode


def test_fit_on_digits_from_arrays(device):
    """(X, y) arrays on the CPU: fit cuts them into batches on the model's device."""
    X, y = data.digits(seed=0)
    X_val, y_val = data.digits(500, seed=1)
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    history = fit(
        model,
        nn.cross_entropy,
        optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        (X, y),
        epochs=10,
        batch_size=32,
        val_data=(X_val, y_val),
        metrics={"accuracy": nn.accuracy},
        progress=False,
    )
    assert history.val_metrics["accuracy"][0] < 0.8  # measured 0.64 after one epoch
    assert history.val_metrics["accuracy"][-1] >= 0.9  # measured 0.95 after ten


def test_fit_stops_on_max_steps_and_stop_loss():
    X, y, _, _ = data.linear_regression(64, 2, noise=0.0, seed=0)
    model = nn.Linear(2, 1)
    seen = []
    history = fit(
        model,
        nn.mse_loss,
        optim.SGD(model.parameters(), lr=0.1),
        (X, y),
        epochs=50,
        batch_size=16,
        max_steps=10,
        progress=False,
        callback=lambda step, loss: seen.append(step),
    )
    assert history.steps == 10 and seen == list(range(1, 11)) and len(history.epoch_losses) == 3
    history = fit(
        model,
        nn.mse_loss,
        optim.SGD(model.parameters(), lr=0.1),
        (X, y),
        epochs=500,
        batch_size=16,
        stop_loss=1e-4,
        progress=False,
    )
    assert history.losses[-1] < 1e-4 and history.steps < 500 * 4


@pytest.mark.parametrize("how", ["finished", "interrupted", "refused before the first step"])
def test_fit_trains_in_training_mode_and_gives_back_the_modes_it_found(how):
    """Before: fit called model.train() and left every Module in training mode, so a model put in
    eval mode came back with its Dropout on (and fit's try before the first step, in eval mode, had
    switched a lone sub-Module in training mode off)."""
    X, y, _, _ = data.linear_regression(32, 2, seed=0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.5), nn.Linear(8, 1))
    model.eval()
    model[2].train()
    before = [m.training for m in model.modules()]
    seen = {"step": set(), "metric": set()}

    def callback(step, loss):
        seen["step"].add(tuple(m.training for m in model.modules()))
        if how == "interrupted":
            raise KeyboardInterrupt

    def metric(output, target):
        seen["metric"].add(tuple(m.training for m in model.modules()))
        if how.startswith("refused"):
            raise ValueError("a metric with a mistake")
        return 0.0

    optimizer = optim.SGD(model.parameters(), lr=0.01)
    stops = {"interrupted": KeyboardInterrupt, "refused before the first step": ValueError}
    with pytest.raises(stops[how]) if how in stops else contextlib.nullcontext():
        fit(
            model,
            nn.mse_loss,
            optimizer,
            (X, y),
            epochs=2,
            batch_size=16,
            val_data=(X, y),
            metrics={"m": metric},
            progress=False,
            callback=callback,
        )
    assert seen["step"] == (set() if how.startswith("refused") else {(True,) * 4})
    assert seen["metric"] == {(False,) * 4}
    assert [m.training for m in model.modules()] == before == [False, False, False, True]


def test_fit_reports_a_diverging_loss():
    X, y, _, _ = data.linear_regression(32, 1, seed=0)
    model = nn.Linear(1, 1)
    with pytest.raises(FloatingPointError, match="lower the learning rate"):
        with np.errstate(all="ignore"):
            fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=1e6), (X, y), epochs=20, progress=False)


def test_fit_shows_a_tqdm_progress_bar(capsys):
    pytest.importorskip("tqdm")
    X, y = data.moons(64, seed=0)
    model = nn.Linear(2, 2)
    fit(model, nn.cross_entropy, optim.Adam(model.parameters()), (X, y), epochs=2, batch_size=16)
    err = capsys.readouterr().err
    assert "fit" in err and "8/8" in err and "loss=" in err


def test_history_and_decision_boundary_plots():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = data.two_spirals(50, seed=0)
    model = spiral_model()
    history = fit(
        model,
        nn.cross_entropy,
        optim.Adam(model.parameters(), lr=0.02),
        (X, y),
        epochs=3,
        batch_size=25,
        val_data=(X, y),
        progress=False,
    )
    ax = history.plot(smooth=2)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["loss per step", "mean of 2 steps", "validation loss"]
    assert len(ax.get_lines()[0].get_xdata()) == history.steps
    ax = plot_decision_boundary(model, X, y, resolution=40)
    assert len(ax.collections) >= 2  # the coloured regions and the points
    assert predict_classes(model, X).shape == (100,)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        plot_decision_boundary(model, np.ones((3, 3)), y[:3])
    plt.close("all")


def test_an_epoch_loss_weights_each_batch_by_its_rows():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((10, 3)), rng.standard_normal((10, 1))
    nn.manual_seed(0)
    model = nn.Linear(3, 1, dtype=np.float64)
    history = fit(
        model,
        nn.mse_loss,
        optim.SGD(model.parameters(), lr=0.0),
        (X, Y),
        batch_size=4,
        progress=False,
        val_data=(X, Y),
    )  # lr 0: the model stays fixed, so the epoch's mean is the loss over all ten rows
    assert len(history.losses) == 3  # batches of 4, 4 and 2 rows
    assert history.epoch_losses[0] == pytest.approx(history.val_metrics["loss"][0], rel=1e-12)


def test_a_non_finite_loss_stops_fit_before_the_step():
    """The weights that gave the bad loss stay, to be inspected."""
    X, y, _, _ = data.linear_regression(10, 2, seed=1)
    X[3] = np.nan
    model = nn.Linear(2, 1)
    before = [p.data.copy() for p in model.parameters()]
    batches = [(Variable(X), Variable(y))]  # made by hand: fit tries no arrays before the first step
    with pytest.raises(FloatingPointError, match="at step 1; this batch.s inputs hold inf or nan"):
        fit(model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.1), batches, progress=False)
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.data, b)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy warns on the inf, then on the nan
@pytest.mark.parametrize(
    "bad", ["nan in a late row", "a label out of range in a late row", "inf in val_data"]
)
def test_bad_rows_anywhere_stop_fit_before_the_first_step(bad):
    """Before: fit tried the first 8 rows only, so training ran (weights changed, momentum buffers
    made) until the batch holding the bad row."""
    X, y = data.moons(200, seed=0)
    X_val = X[:20].copy()
    if bad == "nan in a late row":
        X[150] = np.nan
    elif bad == "a label out of range in a late row":
        y[150] = 5
    else:
        X_val[7] = np.inf
    model = nn.Linear(2, 2)
    before = [p.data.copy() for p in model.parameters()]
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    words = {"nan in a late row": "the loss on the training data is nan before the first step",
             "a label out of range in a late row": "class 5",
             "inf in val_data": "the loss on the val_data is nan before the first step"}[bad]  # fmt: skip
    with pytest.raises((FloatingPointError, ValueError), match=words):
        fit(model, nn.cross_entropy, optimizer, (X, y), val_data=(X_val, y[:20]), seed=0, progress=False)
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.data, b)
    assert optimizer.state == {}


class OneScorePerRow(nn.Module):
    """A binary classifier whose output is (N,): one logit per row, flattened."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1, dtype=np.float64)

    def forward(self, x):
        return self.fc(x).view(-1)


def test_predict_classes_reads_one_score_per_row_as_accuracy_does():
    X = np.random.default_rng(3).standard_normal((5, 2))
    nn.manual_seed(0)
    model = OneScorePerRow()
    logits = model(Variable(X)).data
    assert logits.min() < 0 < logits.max()  # logits, not probabilities
    predicted = predict_classes(model, X, threshold=0.0)
    assert predicted.tolist() == (logits > 0).astype(int).tolist()  # 5 predictions, not one argmax
    assert nn.accuracy(model(Variable(X)), predicted, threshold=0.0) == 1.0
    with pytest.raises(ValueError, match=r"predict_classes: one score per row .* threshold=0.5"):
        predict_classes(model, X)


@pytest.mark.parametrize("use", ["evaluate", "predict_classes"])
def test_evaluating_gives_each_sub_module_back_the_mode_it_had(use):
    """Before: evaluate and predict_classes ended with model.train(was_training), which set every
    sub-Module to the top Module's mode (a Dropout left in eval mode came back in training mode)."""
    X, y, _, _ = data.linear_regression(8, 2, seed=0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.5), nn.Linear(8, 1))
    model[1].eval()
    before = [m.training for m in model.modules()]
    if use == "evaluate":
        evaluate(model, X, y, loss_fn=nn.mse_loss)
    else:
        predict_classes(model, X, threshold=0.0)
    assert [m.training for m in model.modules()] == before == [True, True, False, True]
