"""varfunc.nn: Module registry, Linear and its 2017 initialisation, activations, a light import.

Losses are in test_nn_losses.py, state and files in test_nn_state.py."""

import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from conftest import rand
from nn_models import TwoLayer, const

import varfunc.nn as nn
from varfunc import DTypeError, ShapeError, VarfuncError, Variable, gradcheck

ROOT = Path(__file__).resolve().parents[1]


# --- Module -------------------------------------------------------------------------------------


def test_registry_names_and_order():
    model = TwoLayer()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [name for name, _ in model.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(model.children()) == [model.fc1, model.act, model.fc2]
    assert model.num_parameters() == 2 + 3 * 4 + 4 + 4 * 2 + 2
    assert "note" not in dict(model.named_parameters())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in model.parameters())


def test_shared_parameters_are_listed_once_and_reassignment_replaces():
    layer = nn.Linear(2, 2)
    model = nn.Sequential(layer, nn.ReLU(), layer)
    assert len(list(model.parameters())) == 2
    layer.bias = nn.Parameter(np.zeros(2))
    assert layer.bias.data.tolist() == [0.0, 0.0]
    layer.bias = None  # a plain value replaces the registered parameter
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    del layer.weight
    assert list(layer.parameters()) == []


def test_module_needs_super_init():
    class Broken(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(VarfuncError, match="super\\(\\).__init__"):
        Broken()


def test_register_parameter_checks_type():
    module = nn.Module()
    with pytest.raises(DTypeError, match="Parameter"):
        module.register_parameter("w", np.ones(2))
    module.register_parameter("w", nn.Parameter(np.ones(2)))
    assert module.w.shape == (2,)
    with pytest.raises(NotImplementedError):
        module(const(np.ones(2)))


def test_parameter_is_a_leaf_variable():
    p = nn.Parameter(np.arange(3.0))
    assert isinstance(p, Variable) and p.requires_grad and p.creator.__class__.__name__ == "Leaf"
    assert repr(p).startswith("Parameter containing:")
    assert nn.Parameter(Variable(np.ones(2))).shape == (2,)


def test_zero_grad_train_eval():
    model = TwoLayer()
    model(const(rand(5, 3))).sum().backward()
    assert any(np.abs(p.grad).sum() > 0 for p in model.parameters())
    model.zero_grad()
    assert all(np.all(p.grad == 0) for p in model.parameters())
    assert model.eval() is model and not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_repr_nests():
    text = repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1, bias=False))))
    assert "(0): Linear(in_features=2, out_features=3, bias=True)" in text
    assert "(2): Sequential(\n    (0): Linear(in_features=3, out_features=1, bias=False)" in text


# --- Linear and Sequential ---------------------------------------------------------------------


def test_linear_computes_x_wt_plus_b():
    layer = nn.Linear(3, 2, dtype=np.float64)
    x = rand(4, 3)
    out = layer(const(x))
    np.testing.assert_allclose(out.data, x @ layer.weight.data.T + layer.bias.data)
    assert layer.weight.shape == (2, 3) and layer.bias.shape == (2,)
    assert layer(const(rand(2, 5, 3))).shape == (2, 5, 2)  # any leading dims


def test_linear_init_is_uniform_within_one_over_sqrt_fan_in():
    nn.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    w = layer.weight.data
    assert w.dtype == np.float32 and layer.bias.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(layer.bias.data).max() <= bound
    assert np.abs(w).max() > 0.99 * bound  # fills the whole interval
    np.testing.assert_allclose(w.std(), bound / np.sqrt(3), rtol=0.02)  # std of uniform(-a, a)
    assert abs(w.mean()) < 0.01 * bound


def test_linear_init_is_seeded():
    nn.manual_seed(3)
    a = nn.Linear(5, 4)
    nn.manual_seed(3)
    b = nn.Linear(5, 4)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    c = nn.Linear(5, 4, rng=np.random.default_rng(3))
    d = nn.Linear(5, 4, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(c.bias.data, d.bias.data)
    assert not np.array_equal(nn.Linear(5, 4).weight.data, nn.Linear(5, 4).weight.data)


def test_linear_wrong_width_names_layer_and_shapes():
    layer = nn.Linear(4, 8)
    with pytest.raises(ShapeError) as info:
        layer(const(np.ones((2, 3))))
    message = str(info.value)
    assert "Linear(in_features=4, out_features=8" in message
    assert "(N, 4)" in message and "(2, 3)" in message
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(4, 1))
    with pytest.raises(ShapeError, match=r"layer \(2\): Linear\(in_features=4.*got shape \(2, 5\)"):
        model(const(np.ones((2, 3))))
    with pytest.raises(DTypeError, match="expected a Variable"):
        layer(np.ones((2, 4)))
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(0, 3)


def test_sequential_indexing_and_ordereddict():
    model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.Sigmoid())]))
    assert [n for n, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]
    assert model[0] is model.fc and model[-1] is model.act and len(model) == 2
    assert isinstance(model[:1], nn.Sequential) and len(model[:1]) == 1
    assert list(model) == [model.fc, model.act]
    model.append(nn.Linear(3, 1))
    assert model(const(np.ones((4, 2)))).shape == (4, 1)
    with pytest.raises(IndexError):
        model[5]
    with pytest.raises(
        TypeError,
        match=r"Sequential: index it with an int \(model\[0\], model\[-1\]\) or read a slice .*, got .fc.",
    ):
        model["fc"]  # a name is an attribute: model.fc


def test_a_slice_of_a_sequential_keeps_the_layer_names():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    tail = model[1:]
    assert list(tail.state_dict()) == ["2.weight", "2.bias"]  # torch's names for the same slice
    assert tail[1] is model[2]


def test_assigning_a_non_module_over_a_submodule_is_refused():
    model = nn.Sequential(nn.Linear(2, 3))
    with pytest.raises(TypeError, match="as submodule '0' of Sequential"):
        setattr(model, "0", 3)
    assert list(model.state_dict()) == ["0.weight", "0.bias"]
    model.fc = nn.Linear(3, 1)
    model.fc = None  # None is allowed, as for a parameter
    assert list(model.state_dict()) == ["0.weight", "0.bias"]


@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradcheck(bias):
    w, b, x = rand(3, 4, seed=1), rand(3, seed=2), rand(5, 4, seed=3)
    if bias:
        assert gradcheck(lambda x, w, b: nn.linear(x, w, b), (x, w, b))
    else:
        assert gradcheck(lambda x, w: nn.linear(x, w), (x, w))


def test_linear_module_backward_gives_the_formula_gradients():
    layer = nn.Linear(4, 3).double()
    x = rand(2, 4)
    layer(const(x)).sum().backward()
    np.testing.assert_allclose(layer.weight.grad, np.ones((2, 3)).T @ x)
    np.testing.assert_allclose(layer.bias.grad, np.full(3, 2.0))


@pytest.mark.parametrize("module", [nn.ReLU(), nn.Tanh(), nn.Sigmoid()], ids=lambda m: type(m).__name__)
def test_activation_gradcheck_and_values(module):
    x = rand(4, 3, seed=4)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from relu's kink
    assert gradcheck(lambda v: module(v), (x,))
    expected = {"ReLU": np.maximum(x, 0), "Tanh": np.tanh(x), "Sigmoid": 1 / (1 + np.exp(-x))}
    np.testing.assert_allclose(module(const(x)).data, expected[type(module).__name__])


def test_sequential_mlp_gradcheck():
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2), nn.Sigmoid()).double()
    assert gradcheck(lambda x: model(x), (rand(2, 3),))


@pytest.mark.oracle
def test_linear_init_has_torchs_bounds():
    """torch.nn.Linear draws from the same interval: same largest |value|, same spread."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    nn.manual_seed(0)
    theirs, ours = torch.nn.Linear(400, 300), nn.Linear(400, 300)
    for name in ("weight", "bias"):
        t, o = getattr(theirs, name).detach().numpy(), getattr(ours, name).data
        np.testing.assert_allclose(np.abs(o).max(), np.abs(t).max(), rtol=0.02, err_msg=name)
        np.testing.assert_allclose(o.std(), t.std(), rtol=0.1 if name == "bias" else 0.02, err_msg=name)


@pytest.mark.oracle
def test_linear_matches_torch_given_the_same_weights():
    torch = pytest.importorskip("torch")
    layer = nn.Linear(5, 3, dtype=np.float64)
    reference = torch.nn.Linear(5, 3).double()
    with torch.no_grad():
        reference.weight.copy_(torch.tensor(layer.weight.data))
        reference.bias.copy_(torch.tensor(layer.bias.data))
    x = rand(4, 5)
    np.testing.assert_allclose(layer(const(x)).data, reference(torch.tensor(x)).detach().numpy(), atol=1e-12)


# --- the house rules -----------------------------------------------------------------------------


def test_import_stays_light():
    code = (
        "import sys, varfunc.nn, varfunc.optim, varfunc.data, varfunc.train\n"
        "heavy = [m for m in ('matplotlib', 'tqdm', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_parameter_can_only_be_replaced_by_a_parameter_or_none():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign a Variable as parameter 'weight' of Linear"):
        layer.weight = Variable(np.ones((2, 2), dtype=np.float32))
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    layer.bias = None
    assert [name for name, _ in layer.named_parameters()] == ["weight"]


@pytest.mark.parametrize("module", [nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Linear(3, 2)], ids=repr)
def test_a_layer_given_an_array_says_to_wrap_it(module):
    """Before (activations): AttributeError: 'numpy.ndarray' object has no attribute 'relu'."""
    with pytest.raises(DTypeError, match=r"expected a Variable, got ndarray; wrap the array with Variable"):
        module(np.ones((2, 3), dtype=np.float32))


@pytest.mark.parametrize("device", [np.float64, None])
def test_module_to_a_dtype_says_how_to_change_a_dtype(device):
    """Before: AttributeError: ... has no attribute 'startswith'."""
    from varfunc import DeviceError

    with pytest.raises(DeviceError, match=r"unknown device .*a dtype changes with .double\(\), .float\(\)"):
        nn.Linear(2, 2).to(device)


@pytest.mark.parametrize(
    "scores, labels, error, words",
    [
        (None, None, DTypeError, "accuracy: takes scores and class labels, arrays of numbers, got object"),
        (np.array(1.0), np.array(1), ShapeError, "accuracy: the scores are one number"),
    ],
)
def test_accuracy_refuses_what_is_not_scores_and_labels(scores, labels, error, words):
    """Before: both gave an accuracy of 0.0."""
    with pytest.raises(error, match=words):
        nn.accuracy(scores, labels)


def test_a_layer_or_a_parameter_assigned_again_keeps_its_place():
    """Before: it moved to the end of its registry, so a Sequential ran its layers in another order
    (Tanh, Linear, new Linear) and parameters() listed a reassigned weight last, which gave one
    parameter another's optimizer state after a checkpoint; torch keeps the place."""
    model = nn.Sequential(nn.Linear(4, 4, dtype=np.float64), nn.Tanh(), nn.Linear(4, 4, dtype=np.float64))
    new = nn.Linear(4, 4, dtype=np.float64)
    model.add_module("0", new)
    assert list(model._modules) == ["0", "1", "2"] and model[0] is new
    x = np.random.default_rng(0).standard_normal((2, 4))
    expected = np.tanh(x @ new.weight.data.T + new.bias.data) @ model[2].weight.data.T + model[2].bias.data
    np.testing.assert_allclose(model(Variable(x)).data, expected, rtol=1e-12)
    layer = nn.Linear(3, 2)
    layer.weight = nn.Parameter(np.ones((2, 3), dtype=np.float32))
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]


def test_double_and_float_convert_only_floating_point_parameters_as_torch_does():
    """An integer Parameter (a count that requires no grad) keeps its dtype; it became float64."""
    layer = nn.Linear(2, 2)
    layer.count = nn.Parameter(np.array([3]), requires_grad=False)
    layer.double()
    assert [p.dtype for p in layer.parameters()] == [np.float64, np.float64, np.int64]
    layer.float()
    assert [p.dtype for p in layer.parameters()] == [np.float32, np.float32, np.int64]
