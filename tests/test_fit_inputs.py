"""fit's inputs (the forms of train_data and val_data it takes, clear errors before any step for the rest)
and where History puts each epoch's end."""

import time

import numpy as np
import pytest
from nn_models import const

import varfunc.data as data
import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import Variable
from varfunc.errors import ShapeError
from varfunc.train import History, fit


def test_fit_refuses_a_one_shot_iterator_for_several_epochs():
    X, y, _, _ = data.linear_regression(12, 2, seed=1)
    model = nn.Linear(2, 1)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    batches = lambda: ((const(X[i : i + 4]), const(y[i : i + 4])) for i in range(0, 12, 4))  # noqa: E731
    with pytest.raises(ValueError, match="one-shot iterator"):
        fit(model, nn.mse_loss, optimizer, batches(), epochs=3, progress=False)
    assert fit(model, nn.mse_loss, optimizer, batches(), epochs=1, progress=False).steps == 3
    assert fit(model, nn.mse_loss, optimizer, list(batches()), epochs=3, progress=False).steps == 9


def linear_problem(n=12):
    X, y, _, _ = data.linear_regression(n, 2, seed=1)
    nn.manual_seed(0)
    model = nn.Linear(2, 1)
    return X, y, model, optim.SGD(model.parameters(), lr=0.01)


def batch_orders(train_data, problem=None, **kwargs):
    """The targets of every batch fit trains on, in order (a loss_fn that records them)."""
    _, _, model, optimizer = problem or linear_problem()
    seen = []

    def loss_fn(output, target):
        if not target.volatile:  # fit's trial before the first step is volatile: not a batch
            seen.append(target.data.ravel().tolist())
        return nn.mse_loss(output, target)

    fit(model, loss_fn, optimizer, train_data, progress=False, **kwargs)
    return seen


def test_fit_draws_its_shuffling_seed_from_nn_unless_given():
    problem = linear_problem()  # nn.manual_seed(0), then the model
    X, y = problem[:2]
    first = batch_orders((X, y), problem, batch_size=4)
    assert batch_orders((X, y), problem, batch_size=4) != first  # the next call sees a new order
    assert batch_orders((X, y), batch_size=4) == first  # after nn.manual_seed(0) again: the same
    seeded = [sum(yb.data.tolist(), []) for _, yb in data.Minibatches(X, y, batch_size=4, seed=5)]
    assert batch_orders((X, y), problem, batch_size=4, seed=5) == seeded  # an explicit seed, every call
    assert batch_orders((X, y), problem, batch_size=4, seed=5) == seeded


def test_fit_accepts_the_arrays_as_a_list_or_as_lists():
    X, y, _, _ = linear_problem()
    reference = batch_orders((X, y), batch_size=5, seed=3)
    assert batch_orders([X, y], batch_size=5, seed=3) == reference
    assert batch_orders((X.tolist(), y.tolist()), batch_size=5, seed=3) == reference
    batches = [(const(X[:6]), const(y[:6])), (const(X[6:]), const(y[6:]))]  # two batches, not (X, y)
    assert batch_orders(batches) == [y[:6].ravel().tolist(), y[6:].ravel().tolist()]


def assert_refused(error, words, model, *args, **kwargs):
    """fit(model, *args) raises error, matching words, and leaves the model's weights as they were."""
    before = [p.data.copy() for p in model.parameters()]
    with pytest.raises(error, match=words):
        fit(model, *args, progress=False, **kwargs)
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.data, b)


def test_fit_explains_train_data_it_cannot_use():
    X, y, model, optimizer = linear_problem()
    three = (X, y, np.ones(len(X)))
    assert_refused(
        ValueError,
        r"train_data is a tuple of 3 arrays; give the pair \(X, y\)",
        model,
        nn.mse_loss,
        optimizer,
        three,
    )
    shapes = r"fit: the arrays of train_data have shapes \(12, 2\) and \(11, 1\)"
    assert_refused(ValueError, shapes, model, nn.mse_loss, optimizer, [X, y[:-1]])


@pytest.mark.parametrize(
    "train_data, words",
    [
        (
            data.Minibatches(np.ones((10, 2)), np.ones((10, 1)), batch_size=32, drop_last=True),
            "10 rows, batch_size=32, drop_last=True",
        ),
        ((np.ones((0, 2)), np.ones((0, 1))), r"train_data has no rows \(shapes \(0, 2\) and \(0, 1\)\)"),
        ([], r"train_data \(list\) gives no batches"),
        ((b for b in []), r"train_data \(generator\) gives no batches"),
    ],
)
def test_fit_refuses_data_that_gives_no_batches(train_data, words):
    _, _, model, optimizer = linear_problem()
    assert_refused(ValueError, words, model, nn.mse_loss, optimizer, train_data)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"max_steps": 0}, ValueError, "fit: max_steps must be at least 1, got 0"),
        ({"epochs": 0}, ValueError, "fit: epochs must be at least 1, got 0"),
        ({"epochs": 2.0}, TypeError, r"fit: epochs must be an int, got 2.0 \(float\)"),
        ({"epochs": True}, TypeError, r"fit: epochs must be an int, got True \(bool\)"),
        ({"max_steps": 5.0}, TypeError, r"fit: max_steps must be an int, got 5.0 \(float\)"),
        ({"batch_size": False}, TypeError, r"fit: batch_size must be an int, got False \(bool\)"),
        ({"history": {}}, TypeError, r"fit: history must be a History \(from an earlier fit\), got dict"),
    ],
)
def test_fit_checks_its_counts_before_training(kwargs, error, words):
    X, y, model, optimizer = linear_problem()
    assert_refused(error, words, model, nn.mse_loss, optimizer, (X, y), **kwargs)
    assert fit(model, nn.mse_loss, optimizer, (X, y), max_steps=1, progress=False).steps == 1


def test_fit_wants_val_data_as_an_x_y_pair():
    X, y, model, optimizer = linear_problem()
    val = r"fit: val_data must be an \(X, y\) pair of arrays, got Minibatches"
    assert_refused(TypeError, val, model, nn.mse_loss, optimizer, (X, y), val_data=data.Minibatches(X, y))
    history = fit(model, nn.mse_loss, optimizer, (X, y), val_data=[X, y], progress=False)
    assert len(history.val_metrics["loss"]) == 1


def test_fit_wants_a_one_element_loss():
    X, y, model, optimizer = linear_problem()
    per_row = lambda output, target: nn.mse_loss(output, target, reduction="none")  # noqa: E731
    words = r"loss_fn must return a one-element Variable, got shape \({}, 1\)"
    tried = r"fit \(tried on the data before training\): " + words.format(len(X))
    assert_refused(ValueError, tried, model, per_row, optimizer, (X, y), batch_size=4)
    assert_refused(ValueError, tried, model, per_row, optimizer, data.Minibatches(X, y, batch_size=4))
    by_hand = [(const(X[:4]), const(y[:4]))]  # batches made by hand: found at the first step
    assert_refused(ValueError, "fit: " + words.format(4), model, per_row, optimizer, by_hand)


def test_metrics_get_y_as_an_array_and_history_seconds_count_them():
    X, y, model, optimizer = linear_problem()
    seen = {}

    def loss_fn(output, target):
        seen.setdefault("loss_fn", type(target))
        return nn.mse_loss(output, target)

    def slow_metric(output, target):
        seen.setdefault("metric", type(target))
        time.sleep(0.05)
        return 0.0

    history = fit(model, loss_fn, optimizer, (X, y), epochs=2, metrics={"m": slow_metric}, progress=False)
    assert seen == {"loss_fn": Variable, "metric": np.ndarray}
    assert history.seconds >= 2 * 0.05  # the evaluation after each epoch is counted


def test_history_plots_validation_where_each_epoch_ended():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, model, optimizer = linear_problem()
    steps, evaluated_at = [], []

    def counting_loss(output, target):  # val_data's loss runs once after each epoch
        if target.volatile:
            evaluated_at.append(len(steps))
        return nn.mse_loss(output, target)

    steps_of = lambda step, loss: steps.append(step)  # noqa: E731
    # 4 steps per epoch (batches of 3); max_steps cuts the second epoch short
    kwargs = dict(epochs=3, batch_size=3, max_steps=6, val_data=(X, y), callback=steps_of, progress=False)
    history = fit(model, counting_loss, optimizer, (X, y), **kwargs)
    assert evaluated_at == [
        0,
        0,
        4,
        6,
    ]  # 0, 0: fit tries the loss on train and val rows before the first step
    validation = history.plot().get_lines()[-1]
    assert validation.get_label() == "validation loss"
    assert validation.get_xdata().tolist() == [4, 6]
    assert history.epoch_ends == history.val_ends == [4, 6]
    plt.close("all")


def test_an_interrupted_fit_leaves_its_steps_in_the_history_it_was_given():
    X, y, model, optimizer = linear_problem()  # 12 rows: 3 steps per epoch in batches of 4

    def interrupt_at_step_5(step, loss):
        if step == 5:
            raise KeyboardInterrupt  # what the notebook's stop button raises

    history = History()
    run = dict(epochs=5, batch_size=4, history=history, progress=False)
    with pytest.raises(KeyboardInterrupt):
        fit(model, nn.mse_loss, optimizer, (X, y), callback=interrupt_at_step_5, **run)
    assert history.steps == 5 and history.epoch_ends == [3] and history.seconds > 0
    losses, seconds = history.losses[:], history.seconds

    # the same History goes on: steps keep counting, max_steps counts this call's steps, times add up
    steps = []
    again = fit(
        model, nn.mse_loss, optimizer, (X, y), max_steps=2, callback=lambda s, _: steps.append(s), **run
    )
    assert again is history
    assert steps == [6, 7] and history.losses[:5] == losses
    assert history.epoch_ends == [3, 7] and history.seconds > seconds


def test_fit_tries_val_data_and_metrics_before_the_first_step():
    X, y, model, optimizer = linear_problem()
    words = r"mse_loss: input has shape \(12, 1\) but target has shape \(12,\)"
    assert_refused(ShapeError, words, model, nn.mse_loss, optimizer, (X, y), val_data=(X, y[:, 0]))
    wide = r"expected input of shape \(N, 2\).*got shape \(12, 3\)"
    assert_refused(ShapeError, wide, model, nn.mse_loss, optimizer, (X, y), val_data=(np.ones((12, 3)), y))

    def broken(output, target):
        return output.data.sum(axis=3)

    assert_refused(
        np.exceptions.AxisError, "axis 3", model, nn.mse_loss, optimizer, (X, y), metrics={"m": broken}
    )


def test_an_epoch_is_recorded_whole_or_not_at_all():
    X, y, model, optimizer = linear_problem()
    calls = []

    def interrupted_on_its_second_evaluation(output, target):  # the first is fit's check
        calls.append(len(target))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return 0.0

    history = History()
    with pytest.raises(KeyboardInterrupt):
        fit(
            model,
            nn.mse_loss,
            optimizer,
            (X, y),
            metrics={"m": interrupted_on_its_second_evaluation},
            batch_size=4,
            history=history,
            progress=False,
        )
    assert calls == [12, 12] and history.steps == 3
    assert history.epoch_losses == history.epoch_ends == history.val_ends == [] and history.metrics == {}


def test_a_history_continued_with_val_data_plots_it_where_it_was_measured():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, model, optimizer = linear_problem()  # 12 rows, batches of 4: 3 steps per epoch
    history = fit(model, nn.mse_loss, optimizer, (X, y), epochs=2, batch_size=4, progress=False)
    fit(model, nn.mse_loss, optimizer, (X, y), batch_size=4, val_data=(X, y), history=history, progress=False)
    assert history.epoch_ends == [3, 6, 9] and history.val_ends == [9]
    line = history.plot().get_lines()[-1]
    assert line.get_label() == "validation loss" and line.get_xdata().tolist() == [9]
    plt.close("all")


def test_fit_refuses_an_optimizer_made_for_another_model():
    X, y, model, _ = linear_problem()
    other = optim.SGD(nn.Linear(3, 3).parameters(), lr=0.1)
    words = r"the optimizer holds 2 parameter\(s\), none of them the model's"
    assert_refused(ValueError, words, model, nn.mse_loss, other, (X, y))
    head_only = optim.SGD([model.bias], lr=0.1)  # a part of the model's parameters is fine
    assert fit(model, nn.mse_loss, head_only, (X, y), max_steps=1, progress=False).steps == 1


def test_fit_refuses_a_batch_size_its_batches_would_ignore():
    X, y, model, optimizer = linear_problem()
    words = r"batch_size=7 is for cutting arrays \(X, y\) into batches, but train_data is Minibatches "
    words += r"\(batch_size=4\)"
    assert_refused(
        ValueError, words, model, nn.mse_loss, optimizer, data.Minibatches(X, y, batch_size=4), batch_size=7
    )


class DtypeRecorder(nn.Module):
    """A Linear that records the dtype of every input it is given."""

    def __init__(self, dtype):
        super().__init__()
        self.fc, self.seen = nn.Linear(2, 1, dtype=dtype), set()

    def forward(self, x):
        self.seen.add(x.dtype)
        return self.fc(x)


def test_fit_gives_a_float32_model_float32_batches_and_evaluation():
    X, y, _, _ = data.linear_regression(12, 2, seed=1, dtype=np.float64)
    model = DtypeRecorder(np.float32)
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    losses = []
    fit(
        model,
        lambda o, t: losses.append(t.dtype) or nn.mse_loss(o, t),
        optimizer,
        (X, y),
        val_data=(X, y),
        progress=False,
    )
    assert model.seen == {np.dtype(np.float32)} and set(losses) == {np.dtype(np.float32)}
    model64 = DtypeRecorder(np.float64)
    fit(
        model64,
        nn.mse_loss,
        optim.SGD(model64.parameters(), lr=0.01),
        (X.astype(np.float32), y),
        progress=False,
    )
    assert model64.seen == {np.dtype(np.float64)}


@pytest.mark.parametrize("train_data", [None, {"X": 1}, 3.0])
def test_fit_names_train_data_that_is_neither_arrays_nor_batches(train_data):
    """Before: 'NoneType' object is not iterable, or for a dict 'not enough values to unpack'."""
    _, _, model, optimizer = linear_problem()
    words = r"fit: train_data must be the arrays \(X, y\) or an iterable of \(x, y\) batches"
    assert_refused(TypeError, words, model, nn.mse_loss, optimizer, train_data)


def test_fit_given_a_loss_class_says_to_make_one():
    """Before: CrossEntropyLoss.__init__() takes from 1 to 2 positional arguments but 3 were given."""
    X, y, model, optimizer = linear_problem()
    words = r"fit: loss_fn is the class MSELoss; pass an instance, MSELoss\(\)"
    assert_refused(TypeError, words, model, nn.MSELoss, optimizer, (X, y))


def test_fit_given_one_array_says_to_pass_the_pair():
    """Before: its rows were taken for (x, y) batches: 'Linear: expected a Variable, got float32'."""
    X, y, model, optimizer = linear_problem()
    assert_refused(
        TypeError, r"fit: train_data is one array; pass the pair \(X, y\)", model, nn.mse_loss, optimizer, X
    )
