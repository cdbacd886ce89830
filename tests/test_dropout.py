"""nn.Dropout and nn.dropout: the mask's rate and scale, its gradient, eval mode, nn.manual_seed."""

import warnings

import numpy as np
import pytest

import varfunc.nn as nn
from varfunc import DTypeError, Variable, gradcheck
from varfunc.nn import functions
from varfunc.train import evaluate


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_zeroes_a_fraction_p_and_scales_the_rest(p, dtype):
    nn.manual_seed(0)
    x = Variable(np.full((400, 250), 2.0, dtype=dtype))
    y = nn.dropout(x, p)
    dropped = y.data == 0
    assert abs(dropped.mean() - p) < 0.01  # 100,000 draws: the standard error is at most 0.0016
    np.testing.assert_allclose(y.data[~dropped], 2.0 / (1 - p), rtol=1e-6)
    assert y.data.dtype == dtype


def test_dropout_backward_uses_the_same_mask():
    nn.manual_seed(1)
    x = Variable(np.linspace(1.0, 2.0, 12).reshape(3, 4))
    y = nn.dropout(x, 0.4)
    weights = np.arange(12.0).reshape(3, 4)
    (y * weights).sum().backward()
    np.testing.assert_allclose(x.grad, weights * y.data / x.data)  # d(x * noise)/dx = noise


def test_dropout_with_a_fixed_mask_passes_gradcheck():
    x = Variable(np.random.default_rng(2).standard_normal((3, 5)))
    # a generator made anew for each call: gradcheck calls the function many times, with one mask
    assert gradcheck(lambda v: functions.Dropout(0.3, np.random.default_rng(7))(v), (x,))


def test_eval_mode_p_0_and_training_false_give_the_input_itself():
    x = Variable(np.ones(5))
    layer = nn.Dropout(0.5)
    assert layer.eval()(x) is x
    assert nn.Dropout(0.0)(x) is x
    assert nn.dropout(x, 0.9, training=False) is x
    layer.train()
    nn.manual_seed(3)
    assert (layer(x).data == 0).any()


def test_p_1_drops_everything_without_a_warning():
    x = Variable(np.ones(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = nn.dropout(x, 1.0)
        y.sum().backward()
    np.testing.assert_array_equal(y.data, np.zeros(4))
    np.testing.assert_array_equal(x.grad, np.zeros(4))


def test_manual_seed_repeats_the_masks():
    x = Variable(np.ones((4, 6)))
    nn.manual_seed(5)
    first = [nn.dropout(x, 0.5).data for _ in range(3)]
    nn.manual_seed(5)
    again = [nn.dropout(x, 0.5).data for _ in range(3)]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], first[1])  # each call draws a new mask


def test_dropout_errors():
    for p in (-0.1, 1.5, True, "0.5", None):
        with pytest.raises(ValueError, match="dropout: p is a probability, between 0 and 1"):
            nn.Dropout(p)
        with pytest.raises(ValueError, match="dropout: p is a probability"):
            nn.dropout(Variable(np.ones(2)), p)
    with pytest.raises(DTypeError, match="dropout: input must hold floating-point numbers, got int64"):
        nn.dropout(Variable(np.arange(3)), 0.5)


def test_evaluate_runs_a_dropout_model_in_eval_mode_and_puts_training_back():
    nn.manual_seed(4)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
    X = np.random.default_rng(6).standard_normal((20, 3))
    y = np.arange(20) % 2
    first = evaluate(model, X, y, nn.cross_entropy)
    assert evaluate(model, X, y, nn.cross_entropy) == first  # no mask: the same loss every time
    assert model.training and model[2].training
    assert repr(model[2]) == "Dropout(p=0.5)"


def test_the_same_seed_draws_the_same_mask_on_every_device(device):
    from conftest import on_device

    results = []
    for where in ("cpu", device):
        nn.manual_seed(9)
        x = Variable(on_device(where, np.ones((3, 4), dtype=np.float32)))
        y = nn.dropout(x, 0.25)
        y.sum().backward()
        assert y.device == x.device
        results.append([on_device("cpu", a) for a in (y.data, x.grad)])
    for ours, cpu in zip(results[1], results[0]):
        np.testing.assert_array_equal(ours, cpu)


def test_training_must_be_true_or_false():
    """Before: training="no" dropped elements (a non-empty string is true)."""
    with pytest.raises(TypeError, match="dropout: training must be True or False, got 'no'"):
        nn.dropout(Variable(np.ones(4)), 0.5, training="no")
