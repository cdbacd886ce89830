"""varfunc.optim: SGD and Adam step for step against torch.optim, state_dict round trips, errors."""

import copy

import numpy as np
import pytest

import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DTypeError, InplaceError, Variable

SHAPES = [(3, 4), (4,), (2, 2, 3), ()]  # () : a 0-d parameter (NumPy scalars from its arithmetic)
STEPS = 12

SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.1, momentum=0.8, weight_decay=0.05),
    dict(lr=0.02, momentum=0.95, weight_decay=0.1, nesterov=True),
    dict(lr=0.1, momentum=0.5, dampening=0.5, weight_decay=0.02),
]
ADAM_CONFIGS = [
    dict(),
    dict(lr=0.01),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.05, betas=(0.5, 0.9), eps=1e-6),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.02, weight_decay=0.05, amsgrad=True, betas=(0.8, 0.99)),
]


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    return [Variable(rng.standard_normal(shape)) for shape in SHAPES]


def gradient_sequence(seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(shape) for shape in SHAPES] for _ in range(STEPS)]


def run_ours(cls, config, params=None, grads=None):
    params = params or make_params()
    optimizer = cls(params, **config)
    for step_grads in grads or gradient_sequence():
        for p, g in zip(params, step_grads):
            p.grad = g
        optimizer.step()
    return params, optimizer


def run_torch(torch, cls_name, config):
    params = [torch.tensor(p.data, requires_grad=True) for p in make_params()]
    optimizer = getattr(torch.optim, cls_name)(params, **config)
    trajectory = []
    for step_grads in gradient_sequence():
        for p, g in zip(params, step_grads):
            p.grad = torch.tensor(g)
        optimizer.step()
        trajectory.append([p.detach().numpy().copy() for p in params])
    return trajectory


def assert_steps_match(torch, cls, config):
    ours_params = make_params()
    optimizer = cls(ours_params, **config)
    expected = run_torch(torch, cls.__name__, config)
    for step, (step_grads, theirs) in enumerate(zip(gradient_sequence(), expected), 1):
        for p, g in zip(ours_params, step_grads):
            p.grad = g
        optimizer.step()
        for index, (p, t) in enumerate(zip(ours_params, theirs)):
            np.testing.assert_allclose(p.data, t, rtol=0, atol=1e-6, err_msg=f"step {step}, param {index}")


@pytest.mark.oracle
@pytest.mark.parametrize("config", SGD_CONFIGS, ids=str)
def test_sgd_matches_torch_step_for_step(config):
    torch = pytest.importorskip("torch")
    assert_steps_match(torch, optim.SGD, config)


@pytest.mark.oracle
@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=str)
def test_adam_matches_torch_step_for_step(config):
    torch = pytest.importorskip("torch")
    assert_steps_match(torch, optim.Adam, config)


@pytest.mark.oracle
@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam], ids=lambda c: c.__name__)
def test_param_groups_match_torch(cls):
    torch = pytest.importorskip("torch")
    ours = make_params()
    theirs = [torch.tensor(p.data, requires_grad=True) for p in ours]
    extra = {"momentum": 0.9} if cls is optim.SGD else {"betas": (0.8, 0.9)}
    groups = lambda ps: [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.5, **extra}]  # noqa: E731
    a, b = cls(groups(ours), lr=0.1), getattr(torch.optim, cls.__name__)(groups(theirs), lr=0.1)
    for step_grads in gradient_sequence():
        for p, t, g in zip(ours, theirs, step_grads):
            p.grad, t.grad = g, torch.tensor(g)
        a.step()
        b.step()
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=0, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "cls, config",
    [(optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)), (optim.Adam, dict(lr=0.01, weight_decay=0.01))],
)
def test_training_a_model_matches_torch(cls, config):
    """Same model, same data: the gradients come from each library's own backward."""
    torch = pytest.importorskip("torch")
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2)).double()
    reference = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()
    with torch.no_grad():
        for (_, p), t in zip(model.named_parameters(), reference.parameters()):
            t.copy_(torch.tensor(p.data))
    ours, theirs = (
        cls(model.parameters(), **config),
        getattr(torch.optim, cls.__name__)(reference.parameters(), **config),
    )
    rng = np.random.default_rng(0)
    for _ in range(10):
        x, y = rng.standard_normal((16, 3)), rng.integers(0, 2, 16)
        ours.zero_grad()
        nn.cross_entropy(model(Variable(x, requires_grad=False)), y).backward()
        ours.step()
        theirs.zero_grad()
        torch.nn.functional.cross_entropy(reference(torch.tensor(x)), torch.tensor(y)).backward()
        theirs.step()
    for p, t in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.data, t.detach().numpy(), rtol=0, atol=1e-6)


def test_plain_sgd_is_p_minus_lr_g():
    params, _ = run_ours(optim.SGD, dict(lr=0.1))
    expected = [p.data - 0.1 * sum(g[i] for g in gradient_sequence()) for i, p in enumerate(make_params())]
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.data, e)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_follows_its_rule_on_every_shape(nesterov):
    # the docstring's rule in Python floats, element by element; on a 0-d parameter the buffer was
    # once a NumPy scalar that stopped changing after the first step
    lr, momentum, decay = 0.1, 0.9, 0.05
    params, _ = run_ours(optim.SGD, dict(lr=lr, momentum=momentum, weight_decay=decay, nesterov=nesterov))
    for i, (p, start) in enumerate(zip(params, make_params())):
        for index in np.ndindex(start.shape):
            w, buf = float(start.data[index]), None
            for step_grads in gradient_sequence():
                g = float(step_grads[i][index]) + decay * w
                buf = g if buf is None else momentum * buf + g
                w -= lr * (g + momentum * buf if nesterov else buf)
            assert p.data[index] == pytest.approx(w, rel=1e-12), (SHAPES[i], index)


def test_first_adam_step_moves_each_element_by_lr():
    params = make_params()
    before = [p.data.copy() for p in params]
    run_ours(optim.Adam, dict(lr=0.01), params, gradient_sequence()[:1])
    for p, b, g in zip(params, before, gradient_sequence()[0]):
        np.testing.assert_allclose(p.data - b, -0.01 * np.sign(g), rtol=0, atol=1e-7)  # eps aside


@pytest.mark.parametrize(
    "cls, config",
    [
        (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
        (optim.Adam, dict(lr=0.01, weight_decay=0.01, amsgrad=True)),
    ],
    ids=["SGD", "Adam"],
)
def test_optimizer_state_dict_round_trip(cls, config):
    grads = gradient_sequence()
    params, optimizer = run_ours(cls, config, grads=grads[:6])
    saved_params = [p.data.copy() for p in params]
    state = optimizer.state_dict()
    assert state["param_groups"][0]["params"] == list(range(len(SHAPES)))
    assert set(state["state"]) == set(range(len(SHAPES)))
    frozen = copy.deepcopy(state)
    for step_grads in grads[6:]:  # the original goes on
        for p, g in zip(params, step_grads):
            p.grad = g
        optimizer.step()
    for key, entry in state["state"].items():  # state_dict() copied the buffers
        for name, value in entry.items():
            np.testing.assert_array_equal(value, frozen["state"][key][name])
    # A fresh optimizer over copies of the step-6 parameters, loaded with the state, ends the same.
    resumed = [Variable(d.copy()) for d in saved_params]
    other = cls(resumed, lr=123.0)
    other.load_state_dict(frozen)
    assert other.param_groups[0]["lr"] == config["lr"]
    for step_grads in grads[6:]:
        for p, g in zip(resumed, step_grads):
            p.grad = g
        other.step()
    for p, q in zip(params, resumed):
        np.testing.assert_array_equal(p.data, q.data)


def test_zero_grad_and_model_parameters():
    model = nn.Linear(3, 2)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    model(Variable(np.ones((2, 3)), requires_grad=False)).sum().backward()
    assert np.abs(model.weight.grad).sum() > 0
    optimizer.zero_grad()
    assert all(np.all(p.grad == 0) for p in model.parameters())
    assert "lr: 0.1" in repr(optimizer) and repr(optimizer).startswith("SGD (")


def test_step_is_seen_by_a_graph_that_saved_the_old_weights():
    """The update goes through .data, which bumps the version: a stale graph cannot backprop silently."""
    w = Variable(np.ones(3))
    optimizer = optim.SGD([w], lr=0.1)
    x = Variable(np.arange(3.0))
    out = (x * w).sum()  # Mul saves w for x's gradient
    w.grad = np.ones(3)
    optimizer.step()
    with pytest.raises(InplaceError, match="modified by an in-place operation"):
        out.backward()


def test_optimizer_errors_are_clear():
    params = make_params()
    with pytest.raises(ValueError, match="'lr' is required"):
        optim.SGD(params)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(params, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(params, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="learning rate"):
        optim.SGD(params, lr=-1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(DTypeError, match="single Variable"):
        optim.Adam(params[0])
    with pytest.raises(DTypeError, match="not a Variable"):
        optim.Adam([np.ones(3)])
    with pytest.raises(DTypeError, match="parameter 0 holds int64 data, which can never require grad"):
        optim.Adam([Variable(np.arange(3))])
    with pytest.raises(ValueError, match="appears twice"):
        optim.Adam([params[0], params[0]])
    with pytest.raises(ValueError, match="beta at index 1"):
        optim.Adam(params, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="unknown setting 'momentum'"):
        optim.Adam([{"params": params, "momentum": 0.9}])


def test_an_optimizer_refuses_a_computed_variable():
    x = Variable(np.ones(2))
    with pytest.raises(ValueError, match=r"parameter 0 \(shape \(2,\)\) was computed by MulConstant"):
        optim.SGD([x * 2], lr=0.5)


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps)])
def test_a_parameter_frozen_after_the_optimizer_was_made_is_left_alone(make):
    frozen, trained = Variable(np.ones(2)), Variable(np.ones(2))
    optimizer = make([frozen, trained])
    frozen.requires_grad = False
    optimizer.zero_grad()
    ((frozen + trained) ** 2).sum().backward()
    optimizer.step()
    assert frozen.data.tolist() == [1.0, 1.0] and frozen.grad is None
    assert (trained.data < 1.0).all()


def freeze_then_unfreeze_run(make_optimizer, new_param, requires_grad_):
    """a and b are trained on one loss; b is frozen before the optimizer is made, unfrozen at step 3."""
    a, b = new_param([1.0, -2.0]), new_param([3.0])
    requires_grad_(b, False)
    optimizer = make_optimizer([a, b])
    trajectory = []
    for step in range(6):
        if step == 3:
            requires_grad_(b, True)
        optimizer.zero_grad()
        ((a * a).sum() + (b * b * a[0]).sum()).backward()
        optimizer.step()
        trajectory.append([a.data.tolist(), b.data.tolist()])
    return trajectory


FREEZE_CONFIGS = [("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)), ("Adam", dict(lr=0.1))]


@pytest.mark.parametrize("name, config", FREEZE_CONFIGS, ids=str)
def test_a_parameter_frozen_before_the_optimizer_was_made_trains_once_unfrozen(name, config):
    make = lambda ps: getattr(optim, name)(ps, **config)  # noqa: E731
    trajectory = freeze_then_unfreeze_run(
        make, lambda values: Variable(np.array(values)), lambda v, flag: setattr(v, "requires_grad", flag)
    )
    assert all(b == [3.0] for _, b in trajectory[:3])  # frozen: not stepped, even by weight decay
    assert trajectory[3][1] != [3.0] and trajectory[4][1] != trajectory[3][1]


@pytest.mark.oracle
@pytest.mark.parametrize("name, config", FREEZE_CONFIGS, ids=str)
def test_freezing_and_unfreezing_matches_torch(name, config):
    torch = pytest.importorskip("torch")
    ours = freeze_then_unfreeze_run(
        lambda ps: getattr(optim, name)(ps, **config),
        lambda values: Variable(np.array(values)),
        lambda v, flag: setattr(v, "requires_grad", flag),
    )
    theirs = freeze_then_unfreeze_run(
        lambda ps: getattr(torch.optim, name)(ps, **config),
        lambda values: torch.tensor(values, dtype=torch.float64, requires_grad=True),
        lambda t, flag: t.requires_grad_(flag),
    )
    np.testing.assert_allclose([a + b for a, b in ours], [a + b for a, b in theirs], rtol=0, atol=1e-12)


def one_unused_param_run(make_optimizer, zero_grad):
    """Steps 1-3 train a alone; b (weight decay, momentum or Adam state would move it) joins at step 4."""
    a, b = Variable(np.array([1.0, -2.0])), Variable(np.array([3.0]))
    optimizer = make_optimizer([a, b])
    trajectory = []
    for step in range(6):
        zero_grad(optimizer)
        loss = (a * a).sum() if step < 3 else (a * a).sum() + (b * b * b).sum()
        loss.backward()
        optimizer.step()
        trajectory.append(np.concatenate([a.data, b.data]))
    return trajectory


OPTIMIZERS_THAT_MOVE_ZERO_GRADS = [
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True)),
]


@pytest.mark.parametrize("name, config", OPTIMIZERS_THAT_MOVE_ZERO_GRADS, ids=str)
def test_a_parameter_no_backward_reached_is_not_stepped(name, config):
    make = lambda ps: getattr(optim, name)(ps, **config)  # noqa: E731
    trajectory = one_unused_param_run(make, lambda o: o.zero_grad())
    assert [t[2] for t in trajectory[:3]] == [3.0, 3.0, 3.0]  # b: untouched, with no state, until used
    assert trajectory[3][2] != 3.0
    optimizer = make([Variable(np.ones(2)), Variable(np.ones(2))])
    optimizer.zero_grad()
    optimizer.step()
    assert not any(optimizer.state.values())  # no backward yet: no step taken, no state made


@pytest.mark.oracle
@pytest.mark.parametrize("name, config", OPTIMIZERS_THAT_MOVE_ZERO_GRADS, ids=str)
def test_a_parameter_no_backward_reached_matches_torch(name, config):
    torch = pytest.importorskip("torch")
    ours = one_unused_param_run(lambda ps: getattr(optim, name)(ps, **config), lambda o: o.zero_grad())
    a = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([3.0], dtype=torch.float64, requires_grad=True)
    optimizer = getattr(torch.optim, name)([a, b], **config)
    for step, mine in enumerate(ours):
        optimizer.zero_grad(set_to_none=False)  # zeroes the gradients that exist, as ours does
        loss = (a * a).sum() if step < 3 else (a * a).sum() + (b * b * b).sum()
        loss.backward()
        optimizer.step()
        theirs = torch.cat([a, b]).detach().numpy()
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12, err_msg=f"step {step + 1}")


def test_a_gradient_set_to_none_skips_the_parameter():
    p = Variable(np.ones(2))
    optimizer = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = np.ones(2)
    optimizer.step()
    moved = p.data.copy()
    p.grad = None
    optimizer.step()
    np.testing.assert_array_equal(p.data, moved)


def test_amsgrad_switched_on_between_steps():
    p = Variable(np.ones(2))
    optimizer = optim.Adam([p], lr=0.1)
    p.grad = np.array([1.0, -2.0])
    optimizer.step()
    optimizer.param_groups[0]["amsgrad"] = True
    optimizer.step()
    state = optimizer.state[p]
    assert state["step"] == 2
    np.testing.assert_array_equal(state["max_exp_avg_sq"], state["exp_avg_sq"])
