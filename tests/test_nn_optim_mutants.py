"""Rules of nn, optim, fit and data that a mutation audit found no other test pinning down.

Each test below fails if one token of varfunc/nn, varfunc/optim, varfunc/train.py, inference.py or
varfunc/data changes in a way that the rest of the suite let through: a default (dropout's p, the
index NLLLoss ignores, zero_grad in place), a boundary (lr=0, weight_decay=1, batch_size=1, a loss
equal to stop_loss), a check that refuses a float count or a bool step counter.
"""

import linecache
import warnings

import numpy as np
import pytest

import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DTypeError, ShapeError, Variable
from varfunc.data import Minibatches, PolynomialTarget, minibatches, train_test_split, two_spirals
from varfunc.train import evaluate, fit, predict_classes

# --- data ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [2.5, 2.0], ids=["2.5", "2.0"])
def test_minibatches_refuses_a_float_batch_size(batch_size):
    """A float batch size is refused (as torch's DataLoader refuses it), not cut to an int."""
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        Minibatches(np.zeros((4, 2)), batch_size=batch_size)


def test_minibatches_of_one_row_each_are_allowed():
    """batch_size=1 (plain stochastic gradient descent) is a positive integer: one row per batch."""
    X = np.arange(6.0).reshape(3, 2)
    batches = list(Minibatches(X, batch_size=1, shuffle=False, variables=False))
    assert len(batches) == 3 and [b[0].tolist() for b in batches] == [[row] for row in X.tolist()]


def test_batches_default_to_32_rows():
    """Minibatches, minibatches() and PolynomialTarget.batch() give 32 rows per batch unless told
    otherwise (the 2017 example's get_batch(batch_size=32)); the last batch holds the rest."""
    X = np.zeros((70, 1))
    for made in (Minibatches(X), minibatches(X)):
        assert [len(x) for (x,) in made] == [32, 32, 6]
    features, targets = PolynomialTarget(degree=3).batch()
    assert features.shape == (32, 3) and targets.shape == (32, 1)


def test_two_spirals_turns_counts_the_turns_of_each_arm():
    """Without noise, an arm of turns=0.25 makes a quarter turn from the centre to radius 1: class 0
    stays in the first quadrant, class 1 (the same arm, mirrored) in the third."""
    X, y = two_spirals(100, turns=0.25, noise=0.0)
    assert np.all(X[y == 0] > 0) and np.all(X[y == 1] < 0)


@pytest.mark.parametrize("values", [["a", "b"], [1 + 2j, 3j]], ids=["strings", "complex"])
def test_arrays_of_what_is_not_a_real_number_are_refused(values):
    """Rows of strings or complex numbers cannot be inputs or labels: a TypeError names the argument."""
    with pytest.raises(TypeError, match="argument 0 is not an array of numbers"):
        Minibatches(np.array(values), np.zeros(2))
    with pytest.raises(TypeError, match="argument 0 is not an array of numbers"):
        train_test_split(np.array(values), np.zeros(2))


def test_train_test_split_refuses_a_test_fraction_of_zero():
    """test_fraction=0 would leave the test part empty; it is refused, not rounded up to one row."""
    with pytest.raises(ValueError, match=r"test_fraction must be in \(0, 1\), got 0"):
        train_test_split(np.zeros(8), test_fraction=0)


# --- nn: Modules, layers and losses --------------------------------------------------------------


def test_linear_refuses_float_sizes():
    """Linear(2.0, 3) is refused (torch refuses a float size too), not silently read as Linear(2, 3)."""
    for sizes in [(2.0, 3), (2, 3.0)]:
        with pytest.raises(ValueError, match="must be a positive integer"):
            nn.Linear(*sizes)


def test_a_shared_sub_module_is_listed_once_by_modules():
    """modules() and named_modules() list a Module registered twice once (as torch does), so that
    model.apply(init) or a count of layers sees each once."""
    torch = pytest.importorskip("torch")
    found = []
    for lib in (nn, torch.nn):
        layer = lib.Linear(2, 2)
        model = lib.Sequential(layer, lib.ReLU(), layer)
        found.append([name for name, _ in model.named_modules()])
        assert len(list(model.modules())) == 3
    assert found[0] == found[1] == ["", "0", "1"]


def test_apply_returns_the_model_for_chaining_as_torch():
    """model = Net().apply(init) keeps the model: apply returns self, after calling fn on every
    sub-Module (children first) and on the model, in torch's order."""
    torch = pytest.importorskip("torch")
    orders = []
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.Linear(2, 2), lib.Sequential(lib.ReLU(), lib.Linear(2, 1)))
        orders.append([])
        assert model.apply(lambda m, seen=orders[-1]: seen.append(type(m).__name__)) is model
    assert orders[0] == orders[1]


def test_the_warning_for_a_plain_list_of_layers_points_at_the_users_line():
    """The warning about an unregistered list names the line that assigned it, not varfunc's code."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2)]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Net()
    assert len(caught) == 1 and caught[0].filename == __file__
    assert linecache.getline(__file__, caught[0].lineno).strip() == "self.layers = [nn.Linear(2, 2)]"


@pytest.mark.parametrize("method, flag", [("zero_grad", "set_to_none"), ("requires_grad_", "requires_grad")])
def test_module_flags_that_are_not_bools_are_refused_before_anything_changes(method, flag):
    """A string such as 'no' would count as True (drop every gradient, or freeze nothing): refused,
    naming the method, and every gradient and flag is left as it was."""
    model = nn.Linear(2, 1)
    model(Variable(np.ones((1, 2)), requires_grad=False)).sum().backward()
    grads = [p.grad.copy() for p in model.parameters()]
    with pytest.raises(DTypeError, match=rf"{method}: {flag} must be True or False, got 'no'"):
        getattr(model, method)(**{flag: "no"})
    assert all(p.requires_grad and np.array_equal(p._grad, g) for p, g in zip(model.parameters(), grads))


def test_load_state_dict_strict_refuses_a_dict_that_only_lacks_names():
    """strict=True refuses a missing name even when no name is unexpected (torch's RuntimeError),
    and leaves the model as it was."""
    model = nn.Linear(2, 1)
    before = model.state_dict()
    partial = {"weight": np.zeros((1, 2))}
    with pytest.raises(RuntimeError, match=r"missing keys \['bias'\], unexpected keys \[\]"):
        model.load_state_dict(partial)
    np.testing.assert_array_equal(model.weight.data, before["weight"])
    assert model.load_state_dict(partial, strict=False) == (["bias"], [])


def test_dropout_defaults_to_p_one_half_as_torch():
    """nn.dropout(x) drops each element with probability 0.5 and doubles the rest, as torch's
    F.dropout(x) does."""
    torch = pytest.importorskip("torch")
    x = np.ones(20000)
    out = nn.dropout(Variable(x)).data
    theirs = torch.nn.functional.dropout(torch.ones(20000)).numpy()
    assert set(np.unique(out)) == set(np.unique(theirs)) == {0.0, 2.0}
    assert abs((out == 0).mean() - 0.5) < 0.02


def test_nll_loss_module_ignores_the_class_index_torch_ignores_by_default():
    """nn.NLLLoss() skips rows whose target is -100, as torch.nn.NLLLoss() does."""
    torch = pytest.importorskip("torch")
    scores = np.log(np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]))
    target = np.array([1, -100, 0])
    ours = nn.NLLLoss()(Variable(scores), target)
    theirs = torch.nn.NLLLoss()(torch.tensor(scores), torch.tensor(target))
    assert nn.NLLLoss().ignore_index == torch.nn.NLLLoss().ignore_index
    np.testing.assert_allclose(ours.item(), theirs.item())


@pytest.mark.parametrize("loss", [nn.mse_loss, nn.l1_loss, nn.smooth_l1_loss])
def test_a_regression_loss_of_unrelated_shapes_is_a_shape_error(loss):
    """Shapes that differ in every way (no (N, 1) against (N,) to hint at) give the ShapeError too."""
    with pytest.raises(ShapeError, match=r"input has shape \(3, 2\) but target has shape \(4, 5\)"):
        loss(Variable(np.zeros((3, 2))), np.zeros((4, 5)))


def test_cross_entropy_refuses_a_list_of_floats_as_class_indices():
    """A list target is read as an array: float labels ([1.0, 0.0]) are refused as a float array is
    (torch refuses a float (N,) target for (N, C) scores), not truncated to integers."""
    scores = Variable(np.zeros((2, 3)))
    for loss in (nn.cross_entropy, nn.nll_loss):
        with pytest.raises(DTypeError, match="target must hold integer class indices"):
            loss(scores, [1.0, 0.0])
    assert nn.cross_entropy(scores, [1, 0]).item() == pytest.approx(np.log(3))


# --- optim ---------------------------------------------------------------------------------------


def test_adam_takes_a_learning_rate_of_zero_as_torch_does():
    """lr=0 is valid (only a negative rate is refused): the step leaves the parameter where it was."""
    torch = pytest.importorskip("torch")
    torch.optim.Adam([torch.ones(2, requires_grad=True)], lr=0)
    w = Variable(np.array([1.0, -2.0]))
    optimizer = optim.Adam([w], lr=0)
    w.grad = np.array([0.5, 0.5])
    optimizer.step()
    assert w.data.tolist() == [1.0, -2.0]


@pytest.mark.parametrize("betas", [(False, 0.999), (0.9, True)], ids=["False", "True"])
def test_adam_refuses_a_bool_beta_as_torch_does(betas):
    """A bool is not a beta (torch: "betas must be either both floats or both Tensors"): False must
    not pass as 0.0."""
    with pytest.raises(ValueError, match="Adam: invalid beta at index"):
        optim.Adam([Variable(np.ones(2))], betas=betas)


def test_adam_with_weight_decay_one_steps_as_torch():
    """weight_decay=1.0 adds the whole parameter to its gradient (torch.optim.Adam's L2 rule); no
    value of weight_decay other than 0 may skip the penalty."""
    torch = pytest.importorskip("torch")
    start = np.array([1.0, -2.0, 3.0])
    grads = [np.array([0.1, 0.2, -0.3]), np.array([-0.5, 0.0, 0.4])]
    w, t = Variable(start.copy()), torch.tensor(start.copy(), requires_grad=True)
    ours, theirs = optim.Adam([w], lr=0.1, weight_decay=1.0), torch.optim.Adam([t], lr=0.1, weight_decay=1.0)
    for g in grads:
        w.grad, t.grad = g, torch.tensor(g)
        ours.step()
        theirs.step()
    np.testing.assert_allclose(w.data, t.detach().numpy(), rtol=0, atol=1e-12)


def test_optimizer_zero_grad_zeroes_the_gradient_in_place_by_default():
    """optimizer.zero_grad() keeps each gradient array and fills it with zeros (torch's
    set_to_none=False, this kit's default, documented as 2017's): an array read before still holds it."""
    w = Variable(np.ones(3))
    optimizer = optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    grad = w.grad
    optimizer.zero_grad()
    assert w._grad is grad and grad.tolist() == [0.0, 0.0, 0.0]


def test_a_parameter_group_without_params_is_refused_with_a_clear_error():
    """A group dict lacking 'params' is a DTypeError that says so, not a bare KeyError."""
    optimizer = optim.SGD([Variable(np.ones(2))], lr=0.1)
    with pytest.raises(DTypeError, match="a parameter group must be a dict with a 'params' key"):
        optimizer.add_param_group({"lr": 0.1})


def test_adam_refuses_a_step_count_of_true():
    """A step counter that is a bool (True) is refused before any parameter changes, as other
    non-integers are: True would silently count as step 1."""
    w = Variable(np.ones(2))
    optimizer = optim.Adam([w])
    w.grad = np.ones(2)
    optimizer.step()
    optimizer.state[w]["step"] = True
    with pytest.raises(DTypeError, match="'step' of a parameter of shape \\(2,\\) must be a whole number"):
        optimizer.step()


def test_adam_loads_a_state_at_step_zero_and_then_steps_as_a_fresh_one():
    """A saved step of 0 (with zero buffers) is a whole number >= 0: it loads, and the next step is
    the same as a new optimizer's first."""
    w, fresh = Variable(np.array([1.0, -1.0])), Variable(np.array([1.0, -1.0]))
    optimizer, new = optim.Adam([w], lr=0.1), optim.Adam([fresh], lr=0.1)
    zeros = np.zeros(2)
    optimizer.load_state_dict(
        {
            "state": {0: {"step": 0, "exp_avg": zeros, "exp_avg_sq": zeros}},
            "param_groups": new.state_dict()["param_groups"],
        }
    )
    w.grad = fresh.grad = np.array([0.3, -0.7])
    optimizer.step()
    new.step()
    np.testing.assert_array_equal(w.data, fresh.data)
    assert optimizer.state[w]["step"] == 1


# --- fit, evaluate, predict_classes --------------------------------------------------------------


def tiny_problem(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((8, 2)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)


def test_fit_takes_batches_given_as_lists():
    """train_data may be a list of [x, y] lists (not only tuples): each is one batch, one step."""
    X, y = tiny_problem()
    batches = [[Variable(X[:4]), Variable(y[:4])], [Variable(X[4:]), Variable(y[4:])]]
    model = nn.Linear(2, 1)
    history = fit(
        model, nn.mse_loss, optim.SGD(model.parameters(), lr=0.1), batches, epochs=2, progress=False
    )
    assert history.steps == 4 and history.epoch_ends == [2, 4]


def test_fit_stops_only_on_a_loss_below_stop_loss_not_equal_to_it():
    """stop_loss stops fit at a loss strictly below it (the 2017 example's loss < 1e-3)."""
    X, y = tiny_problem()

    def constant_loss(output, target):
        return (output * 0).sum() + 0.5  # depends on the model, and is exactly 0.5 at every step

    model = nn.Linear(2, 1)
    sgd = optim.SGD(model.parameters(), lr=0.1)
    history = fit(model, constant_loss, sgd, (X, y), epochs=2, batch_size=4, stop_loss=0.5, progress=False)
    assert history.steps == 4
    history = fit(
        model, constant_loss, sgd, (X, y), epochs=2, batch_size=4, stop_loss=0.50001, progress=False
    )
    assert history.steps == 1


def test_evaluate_gives_the_metrics_an_output_without_a_graph():
    """evaluate runs the model on volatile input: the output a metric gets neither requires grad nor
    keeps a graph (nothing to free, no backward possible)."""
    X, y = tiny_problem()
    seen = []

    def metric(output, target):
        seen.append((output.volatile, output.requires_grad))
        return 0.0

    evaluate(nn.Linear(2, 1), X, y, nn.mse_loss, {"seen": metric})
    assert seen == [(True, False)]


def test_a_model_without_parameters_can_be_evaluated_and_predict():
    """A model with no parameters (no dtype to cast the data to) takes the data as it is."""
    X = np.array([[1.0, 2.0], [3.0, 0.0]])
    model = nn.Sequential(nn.ReLU())
    assert predict_classes(model, X).tolist() == [1, 0]
    assert evaluate(model, X, np.array([1, 0]), metrics={"accuracy": nn.accuracy}) == {"accuracy": 1.0}
