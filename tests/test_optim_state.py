"""An optimizer's per-parameter state: load_state_dict refuses what step() could not use, and a step
refuses a state edited by hand before it changes any parameter."""

import copy
import re

import numpy as np
import pytest
from test_optim import run_ours

import varfunc.optim as optim
from varfunc import DTypeError, ShapeError, Variable

SGD_MOMENTUM = (optim.SGD, dict(lr=0.1, momentum=0.9))
ADAM = (optim.Adam, dict(lr=0.01))
AMSGRAD = (optim.Adam, dict(lr=0.01, amsgrad=True))


def snapshot(params, optimizer):
    """Copies of everything a load or a step could change."""
    return [p.data.copy() for p in params], copy.deepcopy(optimizer.state_dict())


def assert_unchanged(params, optimizer, before):
    data, state = before
    for p, d in zip(params, data):
        np.testing.assert_array_equal(p.data, d)
    now = optimizer.state_dict()
    assert now["param_groups"] == state["param_groups"]
    assert now["state"].keys() == state["state"].keys()
    for key, entry in state["state"].items():
        assert now["state"][key].keys() == entry.keys()
        for name, value in entry.items():
            np.testing.assert_array_equal(now["state"][key][name], value)


@pytest.mark.parametrize(
    "make, entry, missing",
    [
        (ADAM, {"step": 3}, "['exp_avg', 'exp_avg_sq']"),
        (ADAM, {"exp_avg": np.zeros(4), "exp_avg_sq": np.zeros(4)}, "['step']"),
        (AMSGRAD, {"step": 3, "max_exp_avg_sq": np.zeros(4)}, "['exp_avg', 'exp_avg_sq']"),
    ],
    ids=["only a step", "no step", "amsgrad without the averages"],
)
def test_load_state_dict_refuses_a_state_that_lacks_a_buffer_before_loading_anything(make, entry, missing):
    """Before: loaded; the next step updated parameter 0, raised KeyError: 'exp_avg' at parameter 1
    and had moved its step count on."""
    cls, config = make
    params, optimizer = run_ours(cls, config)
    saved = optimizer.state_dict()
    saved["param_groups"][0]["lr"] = 0.5
    saved["state"][1] = entry  # parameter 1 has shape (4,)
    before = snapshot(params, optimizer)
    with pytest.raises(
        ValueError,
        match=r"Adam.load_state_dict: the state of parameter 1 holds .* but lacks " + re.escape(missing),
    ):
        optimizer.load_state_dict(saved)
    assert_unchanged(params, optimizer, before)
    optimizer.step()  # the state it kept still works


def test_load_state_dict_takes_an_empty_state_as_a_fresh_start():
    params, optimizer = run_ours(*ADAM)
    saved = optimizer.state_dict()
    saved["state"][1] = {}
    optimizer.load_state_dict(saved)
    optimizer.step()
    assert optimizer.state[params[1]]["step"] == 1 and optimizer.state[params[0]]["step"] == 13


@pytest.mark.parametrize(
    "key",
    ["a", 1.5, True, None, (1,)],
    ids=["a str", "a float", "a bool", "None", "a tuple"],
)
def test_load_state_dict_names_a_state_key_that_is_not_a_parameter_position(key):
    """Before: int('a') raised a bare ValueError, 1.5 and True were read as parameter 1, None and a
    tuple gave int()'s TypeError."""
    params, optimizer = run_ours(*SGD_MOMENTUM)
    saved = optimizer.state_dict()
    saved["state"][key] = saved["state"].pop(1)
    before = snapshot(params, optimizer)
    with pytest.raises(
        ValueError,
        match=r"SGD.load_state_dict: the state dict's 'state' has the key " + re.escape(repr(key)) + ".*"
        r"parameter positions, the integers its param_groups list \(\[0, 1, 2, 3\]\)",
    ):
        optimizer.load_state_dict(saved)
    assert_unchanged(params, optimizer, before)


def test_load_state_dict_takes_a_position_as_a_numpy_integer_or_as_digits():
    params, optimizer = run_ours(*SGD_MOMENTUM)
    saved = optimizer.state_dict()
    saved["state"] = {np.int64(0): saved["state"][0], "1": saved["state"][1]}  # as JSON leaves it
    optimizer.load_state_dict(saved)
    assert set(optimizer.state) == set(params[:2])
    saved["state"][1] = saved["state"]["1"]
    with pytest.raises(ValueError, match=r"state for parameter 1 twice, under the keys '1' and 1"):
        optimizer.load_state_dict(saved)


@pytest.mark.parametrize(
    "state, words",
    [
        ([], r"the state dict's 'state' must be a dict \{parameter position: \{name: value\}\}, got a list"),
        ({0: np.zeros((3, 4))}, r"the state of parameter 0 must be a dict \{name: value\}, got a ndarray"),
    ],
)
def test_load_state_dict_names_a_state_that_is_not_a_dict(state, words):
    """Before: AttributeError: 'list' (or 'numpy.ndarray') object has no attribute 'items'."""
    params, optimizer = run_ours(*SGD_MOMENTUM)
    before = snapshot(params, optimizer)
    with pytest.raises(DTypeError, match="SGD.load_state_dict: " + words):
        optimizer.load_state_dict({"state": state, "param_groups": optimizer.state_dict()["param_groups"]})
    assert_unchanged(params, optimizer, before)


def drop(name):
    def edit(state):
        del state[name]

    return edit


def put(name, value):
    def edit(state):
        state[name] = value

    return edit


def only(name, value):
    def edit(state):
        state.clear()
        state[name] = value

    return edit


@pytest.mark.parametrize(
    "make, edit, error, words",
    [
        (ADAM, drop("exp_avg"), ValueError, r"holds \['exp_avg_sq', 'step'\] but lacks \['exp_avg'\]"),
        (ADAM, drop("step"), ValueError, r"but lacks \['step'\]; Adam keeps all of"),
        (ADAM, put("exp_avg", np.zeros(5)), ShapeError, r"the 'exp_avg' of a parameter of shape \(4,\) has "),
        (ADAM, put("exp_avg_sq", 0.0), ShapeError, r"the 'exp_avg_sq' .* is a float, where a buffer is an"),
        (ADAM, put("step", "3"), DTypeError, r"the 'step' of a parameter of shape \(4,\) must be a whole"),
        (AMSGRAD, put("max_exp_avg_sq", np.zeros(1)), ShapeError, r"'max_exp_avg_sq' .* has shape \(1,\)"),
        (SGD_MOMENTUM, only("note", 1), ValueError, r"holds \['note'\] but lacks \['momentum_buffer'\]"),
        (SGD_MOMENTUM, put("momentum_buffer", np.zeros(2)), ShapeError, r"has shape \(2,\)"),
    ],
    ids=[
        "no exp_avg",
        "no step",
        "exp_avg of another shape",
        "a float exp_avg_sq",
        "a str step",
        "max_exp_avg_sq of another shape",
        "a note but no momentum_buffer",
        "momentum_buffer of another shape",
    ],
)
def test_a_step_refuses_a_state_edited_by_hand_before_changing_any_parameter(make, edit, error, words):
    """Before: parameter 0 was updated (and Adam's step counts moved on), then a KeyError, NumPy's
    broadcast error or a TypeError at parameter 1; a float buffer was rebound, never kept."""
    cls, config = make
    params, optimizer = run_ours(cls, config)
    edit(optimizer.state[params[1]])  # parameter 1 has shape (4,)
    before = [p.data.copy() for p in params]
    steps = [optimizer.state[p].get("step") for p in params]
    with pytest.raises(error, match=rf"{cls.__name__}.step: .*{words}"):
        optimizer.step()
    for p, b, s in zip(params, before, steps):
        np.testing.assert_array_equal(p.data, b)
        assert optimizer.state[p].get("step") == s
    del optimizer.state[params[1]]  # what the message says to do
    optimizer.step()
    assert not np.array_equal(params[0].data, before[0])


def test_a_0d_parameters_state_is_checked_as_any_other():
    w = Variable(np.array(1.0))
    optimizer = optim.Adam([w], lr=0.1)
    w.grad = np.array(1.0)
    optimizer.step()
    assert optimizer.state[w]["exp_avg"].shape == ()
    optimizer.step()  # the buffers of a 0-d parameter stay 0-d arrays, which the check accepts
    assert optimizer.state[w]["step"] == 2


def test_state_of_a_parameter_no_step_reached_is_an_empty_dict_as_in_torch():
    """Before: optimizer.state[p] was a KeyError until the first step; torch's state is a defaultdict."""
    w = Variable(np.ones(2))
    optimizer = optim.SGD([w], lr=0.1, momentum=0.9)
    assert optimizer.state[w] == {}
    w.grad = np.ones(2)
    optimizer.step()  # an empty state starts afresh
    np.testing.assert_array_equal(optimizer.state[w]["momentum_buffer"], np.ones(2))
    fresh = optim.SGD([Variable(np.ones(2))], lr=0.1, momentum=0.9)
    fresh.load_state_dict(optimizer.state_dict())
    assert fresh.state[Variable(np.ones(1))] == {}  # still a defaultdict after loading
    torch = pytest.importorskip("torch")
    tw = torch.ones(2, requires_grad=True)
    assert torch.optim.SGD([tw], lr=0.1, momentum=0.9).state[tw] == {}


def test_state_dict_is_a_copy_that_does_not_follow_later_steps():
    """The kit's deep copy (docs/differences.md, row 51); torch's holds the buffers themselves."""
    w = Variable(np.ones(2))
    optimizer = optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = np.ones(2)
    optimizer.step()
    saved = optimizer.state_dict()
    optimizer.step()
    np.testing.assert_array_equal(saved["state"][0]["momentum_buffer"], np.ones(2))
    torch = pytest.importorskip("torch")
    tw = torch.ones(2, requires_grad=True)
    theirs = torch.optim.SGD([tw], lr=0.1, momentum=0.9)
    tw.grad = torch.ones(2)
    theirs.step()
    their_saved = theirs.state_dict()
    theirs.step()
    assert their_saved["state"][0]["momentum_buffer"] is theirs.state[tw]["momentum_buffer"]  # followed


def test_sgd_without_lr_says_it_is_required_as_in_2017():
    """Kept (differences.md, row 47): 2017's torch.optim.SGD required lr; torch 2.13 defaults to 0.001."""
    with pytest.raises(ValueError, match=r"SGD: the setting 'lr' is required, as in 2017's .*0.001.*lr=0.01"):
        optim.SGD([Variable(np.ones(2))])
    torch = pytest.importorskip("torch")
    assert torch.optim.SGD([torch.ones(2, requires_grad=True)]).defaults["lr"] == 0.001


def _no_params(saved):
    del saved["param_groups"][0]["params"]


def _group_a_str(saved):
    saved["param_groups"][0] = "abc"


def _groups_a_str(saved):
    saved["param_groups"] = "abc"


@pytest.mark.parametrize("edit", [_no_params, _group_a_str, _groups_a_str])
def test_load_state_dict_names_param_groups_that_are_not_dicts_with_params(edit):
    """Before: a bare KeyError: 'params', or Python's 'string indices must be integers'."""
    params, optimizer = run_ours(*SGD_MOMENTUM)
    before = snapshot(params, optimizer)
    saved = optimizer.state_dict()
    edit(saved)
    with pytest.raises(
        DTypeError, match=r"SGD.load_state_dict: the state dict's 'param_groups' must be a list"
    ):
        optimizer.load_state_dict(saved)
    assert_unchanged(params, optimizer, before)
