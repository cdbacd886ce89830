"""Which gradients zero_grad touches, and settings refused before anything changes (optim and nn.Module)."""

import numpy as np
import pytest
from test_optim import OPTIMIZERS_THAT_MOVE_ZERO_GRADS, SHAPES, make_params, one_unused_param_run, run_ours

import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DTypeError, ShapeError, Variable


class Holder(nn.Module):
    """A Module whose parameters are the given Variables (one_unused_param_run makes plain ones)."""

    def __init__(self, params):
        super().__init__()
        for index, param in enumerate(params):
            self._parameters[f"p{index}"] = param


@pytest.mark.parametrize("name, config", OPTIMIZERS_THAT_MOVE_ZERO_GRADS, ids=str)
def test_module_zero_grad_makes_no_gradient_for_a_parameter_no_backward_reached(name, config):
    """Module.zero_grad before any backward made zeros, which weight decay and Adam then stepped on."""

    def make(params):
        make.module = Holder(params)
        return getattr(optim, name)(params, **config)

    by_optimizer = one_unused_param_run(make, lambda o: o.zero_grad())
    by_module = one_unused_param_run(make, lambda o: make.module.zero_grad())
    assert [t[2] for t in by_module[:3]] == [3.0, 3.0, 3.0]  # b: untouched until a backward reaches it
    np.testing.assert_array_equal(by_module, by_optimizer)


@pytest.mark.parametrize("zero_grad", ["optimizer", "module"])
def test_zero_grad_clears_a_frozen_parameters_gradient_as_torch_does(zero_grad):
    w = nn.Parameter(np.ones(2))
    model = Holder([w, nn.Parameter(np.ones(1))])
    optimizer = optim.SGD([w], lr=0.1)
    (w * 5).sum().backward()
    optimizer.step()  # w = 1 - 0.1 * 5
    w.requires_grad = False
    (optimizer if zero_grad == "optimizer" else model).zero_grad()
    w.requires_grad = True
    (w * 1).sum().backward()
    optimizer.step()  # torch: 0.5 - 0.1 * 1; a gradient kept while frozen gave 0.5 - 0.1 * 6
    np.testing.assert_allclose(w.data, [0.4, 0.4])


def test_moving_a_model_makes_no_gradients_and_keeps_a_frozen_ones():
    model = nn.Linear(3, 2)
    model.to("cpu")
    assert model.weight._grad is None and model.bias._grad is None
    model(Variable(np.ones((1, 3), np.float32))).sum().backward()
    model.weight.requires_grad = False
    model.to("cpu")
    np.testing.assert_array_equal(model.weight._grad, np.ones((2, 3)))


@pytest.mark.parametrize(
    "betas, words",
    [
        ((0.9, 0.99, 0.5), r"Adam: betas must be a pair \(beta1, beta2\), got \(0.9, 0.99, 0.5\)"),
        ((0.9,), r"got \(0.9,\)"),
        (0.9, "got 0.9"),
        ((0.9, 1.0), r"invalid beta at index 1: 1.0"),
    ],
)
def test_adam_refuses_betas_that_are_not_a_pair_before_any_step(betas, words):
    a, b = Variable(np.ones(2)), Variable(np.ones(2))
    with pytest.raises(ValueError, match=words):
        optim.Adam([a], betas=betas)
    optimizer = optim.Adam([a], lr=0.1)
    with pytest.raises(ValueError, match=words):
        optimizer.add_param_group({"params": [b], "betas": betas})
    assert len(optimizer.param_groups) == 1
    assert optim.Adam([b], betas=[0.8, 0.9]).param_groups[0]["betas"] == (0.8, 0.9)


def test_module_type_refuses_a_non_float_dtype_before_converting_anything():
    model = nn.Linear(2, 2)
    model.weight.requires_grad = False
    with pytest.raises(DTypeError, match="Linear.type: parameters hold floating-point data, got int64"):
        model.type(np.int64)
    assert model.weight.dtype == np.float32 and model.bias.dtype == np.float32
    assert model.type(np.float64).weight.dtype == np.float64


def test_parameter_and_linear_name_what_they_need():
    with pytest.raises(DTypeError, match=r"Parameter: int64 data .* or pass requires_grad=False"):
        nn.Parameter(np.arange(3))
    assert not nn.Parameter(np.arange(3), requires_grad=False).requires_grad
    with pytest.raises(ValueError, match="Linear: in_features must be a positive integer, got True"):
        nn.Linear(True, 3)


def test_load_state_dict_refuses_another_optimizers_settings_and_bad_values_before_changing_anything():
    w = Variable(np.ones(2))
    sgd = optim.SGD([w], lr=0.1, momentum=0.9)
    adam = optim.Adam([w], lr=0.01)
    before = adam.state_dict()
    with pytest.raises(ValueError, match=r"Adam.load_state_dict: group 0 has the settings \['dampening'"):
        adam.load_state_dict(sgd.state_dict())
    saved = adam.state_dict()
    saved["param_groups"][0]["lr"] = -1.0
    with pytest.raises(ValueError, match="Adam: invalid learning rate -1.0"):
        adam.load_state_dict(saved)
    assert adam.state_dict() == before


def test_a_module_with_settings_and_children_prints_as_torch_does():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 1)

        def extra_repr(self):
            return "k=1"

    assert repr(Block()) == "Block(\n  k=1\n  (fc): Linear(in_features=2, out_features=1, bias=True)\n)"


def test_load_state_dict_mismatch_errors():
    _, optimizer = run_ours(optim.SGD, dict(lr=0.1, momentum=0.9))
    state = optimizer.state_dict()
    with pytest.raises(ValueError, match=f"group 0 has {len(SHAPES)} parameter"):
        optim.SGD(make_params()[:2], lr=0.1).load_state_dict(state)
    with pytest.raises(ValueError, match="1 parameter group"):
        optim.SGD([{"params": make_params()[:1]}, {"params": make_params(1)[1:]}], lr=0.1).load_state_dict(
            state
        )
    unknown = {"state": {7: {"momentum_buffer": np.zeros(3)}}, "param_groups": state["param_groups"]}
    with pytest.raises(ValueError, match="state for parameter 7, which none of its param_groups lists"):
        optim.SGD(make_params(), lr=0.1).load_state_dict(unknown)
    wrong = [Variable(np.zeros(s[::-1])) for s in SHAPES]
    with pytest.raises(ShapeError, match="momentum_buffer"):
        optim.SGD(wrong, lr=0.1).load_state_dict(state)


@pytest.mark.parametrize(
    "name, value, error, words",
    [
        ("momentum_buffer", np.zeros(()), ShapeError, r" has shape \(\), the parameter has \(3, 4\)"),
        ("momentum_buffer", 0.5, ShapeError, " has shape float"),
        (
            "momentum",
            np.zeros((3, 4)),
            ValueError,
            r": SGD keeps no such state \(it keeps \['momentum_buffer'\]\)",
        ),
        # Each of these used to load as a buffer of other numbers (NaN, a real part, inf):
        ("momentum_buffer", np.full((3, 4), None), DTypeError, " holds object data, which is not real"),
        ("momentum_buffer", np.zeros((3, 4)) + 1j, DTypeError, " holds complex128 data"),
    ],
)
def test_load_state_dict_refuses_a_bad_entry_before_anything_changes(name, value, error, words):
    params, optimizer = run_ours(optim.SGD, dict(lr=0.1, momentum=0.9))
    state = optimizer.state_dict()
    state["param_groups"][0]["lr"] = 0.5
    state["state"][0][name] = value  # parameter 0 has shape (3, 4)
    before = {id(p): buf.copy() for p, buf in ((p, optimizer.state[p]["momentum_buffer"]) for p in params)}
    with pytest.raises(error, match=f"SGD.load_state_dict: '{name}' of parameter 0{words}"):
        optimizer.load_state_dict(state)
    assert optimizer.param_groups[0]["lr"] == 0.1
    for p in params:
        np.testing.assert_array_equal(optimizer.state[p]["momentum_buffer"], before[id(p)])


def test_a_loaded_numpy_scalar_buffer_of_a_0d_parameter_keeps_changing():
    w = Variable(np.array(1.0))
    optimizer = optim.SGD([w], lr=0.1, momentum=0.9)
    optimizer.load_state_dict(
        {
            "state": {0: {"momentum_buffer": np.float64(2.0)}},
            "param_groups": optimizer.state_dict()["param_groups"],
        }
    )
    for _ in range(2):
        w.grad = np.array(1.0)
        optimizer.step()
    assert optimizer.state[w]["momentum_buffer"] == pytest.approx(0.9 * (0.9 * 2.0 + 1) + 1)


@pytest.mark.parametrize("step", [1.5, -1, True, "3"])
def test_load_state_dict_refuses_an_adam_step_that_is_not_a_count(step):
    params, optimizer = run_ours(optim.Adam, dict(lr=0.01))
    state = optimizer.state_dict()
    state["state"][0]["step"] = step
    with pytest.raises(DTypeError, match="'step' of parameter 0 must be a whole number >= 0"):
        optimizer.load_state_dict(state)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda ps: optim.SGD(ps, lr="0.1"), "SGD: lr must be a number, got '0.1'"),
        (lambda ps: optim.SGD(ps, lr=0.1, momentum=None), "SGD: momentum must be a number, got None"),
        (lambda ps: optim.Adam(ps, lr=None), "Adam: lr must be a number, got None"),
        (lambda ps: optim.Adam(ps, eps=True), "Adam: eps must be a number, got True"),
    ],
)
def test_a_setting_that_is_not_a_number_is_named(make, words):
    # a comparison with 0 raised a bare TypeError that named neither the optimizer nor the setting
    with pytest.raises(DTypeError, match=words):
        make(make_params())


def test_adam_refuses_a_beta_that_is_not_a_number():
    with pytest.raises(
        ValueError, match=r"Adam: invalid beta at index 1: '0.9' \(must be a number in \[0, 1\)\)"
    ):
        optim.Adam(make_params(), betas=(0.9, "0.9"))


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda ps: optim.SGD(ps, lr=float("nan")), "SGD: lr must be a finite number, got nan"),
        (lambda ps: optim.SGD(ps, lr=0.1, momentum=float("inf")), "SGD: momentum must be a finite number"),
        (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=float("nan")), "SGD: weight_decay must be a finite"),
        (lambda ps: optim.Adam(ps, lr=float("inf")), "Adam: lr must be a finite number, got inf"),
        (lambda ps: optim.Adam(ps, eps=float("nan")), "Adam: eps must be a finite number, got nan"),
    ],
)
def test_a_setting_that_is_nan_or_inf_is_refused(make, words):
    """Before: accepted, and the first step made every weight nan or inf."""
    with pytest.raises(ValueError, match=words):
        make(make_params())


def test_a_fraction_or_numpy_setting_becomes_a_float():
    """Before: lr=Fraction(1, 10) passed the number check, then step() raised a raw UFuncTypeError."""
    from fractions import Fraction

    p = Variable(np.array([1.0, 2.0]))
    p.grad = np.array([10.0, 20.0])
    opt = optim.SGD([p], lr=Fraction(1, 10), momentum=np.float32(0.5))
    assert type(opt.param_groups[0]["lr"]) is float and type(opt.param_groups[0]["momentum"]) is float
    opt.step()
    np.testing.assert_allclose(p.data, [0.0, 0.0])


@pytest.mark.parametrize(
    "make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps)], ids=["SGD", "Adam"]
)
def test_a_step_that_cannot_update_one_parameter_updates_none(make):
    """Before: the parameters before the read-only one were updated, their buffers made (and Adam's
    step count of the read-only one went up), then NumPy's 'output array is read-only'."""
    read_only = np.array([1.0, 2.0, 3.0])
    read_only.setflags(write=False)
    w1, w2 = Variable(np.array([1.0, 2.0, 3.0])), Variable(read_only)
    ((w1 * w1).sum() + (w2 * w2).sum()).backward()
    opt = make([w1, w2])
    with pytest.raises(ValueError, match=r"step: a parameter of shape \(3,\) holds read-only data.*copy\(\)"):
        opt.step()
    np.testing.assert_array_equal(w1.data, [1.0, 2.0, 3.0])
    assert opt.state == {}
    w2.data = w2.data.copy()
    opt.step()
    assert (w1.data < [1.0, 2.0, 3.0]).all() and (w2.data < [1.0, 2.0, 3.0]).all()


@pytest.mark.parametrize(
    "make, words",
    [
        (
            lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov="no"),
            "SGD: nesterov must be True or False",
        ),
        (lambda ps: optim.Adam(ps, amsgrad="no"), "Adam: amsgrad must be True or False, got 'no'"),
        (lambda ps: optim.SGD(None, lr=0.1), r"SGD: params must be an iterable of Variables .* got NoneType"),
        (
            lambda ps: optim.SGD([{"params": None}], lr=0.1),
            r"SGD: params must be an iterable .* got NoneType",
        ),
    ],
)
def test_a_flag_or_a_parameter_list_of_the_wrong_kind_is_named(make, words):
    """Before: amsgrad="no" switched AMSGrad on (a non-empty string is true), and SGD(None) raised
    Python's "'NoneType' object is not iterable"."""
    with pytest.raises(DTypeError, match=words):
        make(make_params())


@pytest.mark.parametrize(
    "load, words",
    [
        (
            lambda opt, model: opt.load_state_dict(model.state_dict()),
            r"expected an optimizer's state dict.*'weight'",
        ),
        (lambda opt, model: opt.load_state_dict({"param_groups": []}), r"expected an optimizer's state dict"),
        (lambda opt, model: opt.load_state_dict([1]), r"got a list; a model's goes to model.load_state_dict"),
    ],
)
def test_an_optimizer_given_what_is_not_its_state_dict_says_so(load, words):
    """Before: KeyError: 'param_groups' (or 'state'), or a list's TypeError."""
    model = nn.Linear(2, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=words):
        load(opt, model)


def test_an_optimizer_given_the_model_says_to_pass_its_parameters():
    """Before: TypeError: 'Linear' object is not iterable."""
    for model in (nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2))):
        with pytest.raises(
            DTypeError, match=rf"SGD: got the model {type(model).__name__}; pass model.parameters"
        ):
            optim.SGD(model, lr=0.1)


@pytest.mark.parametrize(
    "make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), optim.Adam], ids=["SGD", "Adam"]
)
def test_a_model_converted_after_steps_has_its_optimizer_state_refused_until_converted(make):
    """Before: the buffers stayed float32 under float64 parameters and training went on (torch
    raises for Adam). The state dict round trip converts them."""
    model = nn.Linear(2, 1)
    opt = make(model.parameters())
    x, y = np.ones((4, 2), dtype=np.float32), np.ones((4, 1), dtype=np.float32)
    nn.mse_loss(model(Variable(x)), y).backward()
    opt.step()
    model.double()
    nn.mse_loss(model(Variable(x.astype(np.float64))), y.astype(np.float64)).backward()
    before = [p.data.copy() for p in model.parameters()]
    with pytest.raises(
        DTypeError,
        match=r"step: the '\w+' of a parameter of shape \(1, 2\) is float32, the parameter float64",
    ):
        opt.step()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.data, b)
    opt.load_state_dict(opt.state_dict())
    opt.step()
    assert all(v.dtype == np.float64 for s in opt.state.values() for v in s.values() if hasattr(v, "dtype"))


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: optim.SGD(p, lr=0.1, momentum=-0.9), r"^SGD: invalid momentum -0.9 \(must be >= 0\)"),
        (lambda p: optim.SGD(p, lr=0.1, weight_decay=-1e-4), r"^SGD: invalid weight_decay -0.0001 "),
        (lambda p: optim.Adam(p, eps=-1e-8), r"^Adam: invalid eps -1e-08 \(must be >= 0\)"),
        (lambda p: optim.Adam(p, weight_decay=-0.01), r"^Adam: invalid weight_decay -0.01 \(must be >= 0\)"),
    ],
    ids=["sgd-momentum", "sgd-weight_decay", "adam-eps", "adam-weight_decay"],
)
def test_a_negative_setting_is_refused_by_name(make, words):
    """A negative momentum or weight decay would push the parameters uphill; a negative eps could divide
    by zero."""
    with pytest.raises(ValueError, match=words):
        make([nn.Parameter(np.ones(2))])
