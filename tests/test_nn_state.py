"""varfunc.nn's state: state_dict round trips, shared layers, files, deepcopy, dtypes and devices."""

import copy
import re

import numpy as np
import pytest
from conftest import rand
from nn_models import TwoLayer, const

import varfunc.nn as nn
from varfunc import DeviceError, DTypeError, ShapeError
from varfunc.backend import gpu_status

# --- state, files, devices -----------------------------------------------------------------------


def test_state_dict_round_trip():
    nn.manual_seed(1)
    model = TwoLayer()
    state = model.state_dict()
    assert list(state) == [n for n, _ in model.named_parameters()]
    assert all(isinstance(v, np.ndarray) for v in state.values())
    before = model.fc1.weight.data.copy()
    model.fc1.weight.data -= 1.0  # state_dict holds copies: changing the model leaves it alone
    np.testing.assert_array_equal(state["fc1.weight"], before)
    other = TwoLayer()
    other.load_state_dict(state)
    x = const(rand(3, 3))
    model.load_state_dict(state)
    np.testing.assert_array_equal(other(x).data, model(x).data)
    state["fc1.weight"][...] = 7  # loading copied the arrays too
    assert not np.any(other.fc1.weight.data == 7)


def tied(lib, ones):
    """lib.Linear - ReLU - the same Linear again, and a Parameter registered under two names."""
    layer = lib.Linear(2, 2)
    model = lib.Sequential(layer, lib.ReLU(), layer)
    model.scale = lib.Parameter(ones)
    model.also = model.scale
    return model


def test_a_shared_layer_is_in_the_state_dict_under_each_of_its_names():
    model = tied(nn, np.ones(1))
    names = ["scale", "also", "0.weight", "0.bias", "2.weight", "2.bias"]
    assert list(model.state_dict()) == names
    assert len(list(model.parameters())) == 3  # an optimizer still gets each Parameter once
    other = tied(nn, np.ones(1))
    assert other.load_state_dict(model.state_dict()) == ([], [])  # strict: every name is there
    np.testing.assert_array_equal(other[0].weight.data, model[0].weight.data)
    assert [name for name, _ in model.named_children()] == ["0", "1"]  # the shared layer once, as in torch
    partial = other.load_state_dict({"scale": np.ones(1), "extra": np.ones(1)}, strict=False)
    assert partial.missing_keys == names[1:] and partial.unexpected_keys == ["extra"]


def test_a_shared_layers_state_dict_names_match_torch():
    torch = pytest.importorskip("torch")
    names = [n for n, _ in tied(torch.nn, torch.ones(1)).named_modules(remove_duplicate=False)]
    assert [n for n, _ in tied(nn, np.ones(1)).named_modules(remove_duplicate=False)] == names
    assert [n for n, _ in tied(torch.nn, torch.ones(1)).named_children()] == ["0", "1"]
    theirs = tied(torch.nn, torch.ones(1)).state_dict()
    assert list(tied(nn, np.ones(1)).state_dict()) == list(theirs)
    mine = tied(nn, np.ones(1))
    mine.load_state_dict({name: value.numpy() for name, value in theirs.items()})
    np.testing.assert_array_equal(mine[2].weight.data, theirs["2.weight"].numpy())


def test_load_state_dict_errors_leave_the_model_alone():
    model = TwoLayer()
    before = model.state_dict()
    bad = model.state_dict()
    del bad["scale"]
    bad["extra"] = np.ones(1)
    with pytest.raises(RuntimeError, match=r"missing keys \['scale'\], unexpected keys \['extra'\]"):
        model.load_state_dict(bad)
    model.load_state_dict(bad, strict=False)  # loads what matches
    wrong = model.state_dict()
    wrong["fc1.bias"] = np.zeros(5)
    wrong["fc1.weight"] = np.zeros((4, 3))
    with pytest.raises(ShapeError, match=r"'fc1.bias' has shape \(5,\) in the state dict but \(4,\)"):
        model.load_state_dict(wrong)
    unreadable = {name: np.zeros_like(value) for name, value in model.state_dict().items()}
    unreadable["scale"] = np.array(["x", "y"])  # the last entry read, after the layers' arrays
    with pytest.raises(DTypeError, match="'scale' holds <U1 data, which is not real numbers"):
        model.load_state_dict(unreadable)
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


def test_deepcopy_makes_an_independent_model():
    model = TwoLayer()
    snapshot = copy.deepcopy(model)
    assert all(isinstance(p, nn.Parameter) for p in snapshot.parameters())
    model.fc1.weight.data += 1.0
    assert not np.array_equal(snapshot.fc1.weight.data, model.fc1.weight.data)
    assert [n for n, _ in snapshot.named_parameters()] == [n for n, _ in model.named_parameters()]


def test_load_state_dict_keeps_dtype():
    layer = nn.Linear(2, 2)  # float32
    layer.load_state_dict({"weight": np.ones((2, 2)), "bias": [1.0, 2.0]})
    assert layer.weight.dtype == np.float32 and layer.bias.data.tolist() == [1.0, 2.0]


def test_npz_save_load_round_trip(tmp_path):
    nn.manual_seed(2)
    model = TwoLayer()
    path = tmp_path / "model.npz"
    nn.save(model, path)
    loaded = nn.load(path)
    assert list(loaded) == list(model.state_dict())
    fresh = TwoLayer()
    fresh.load_state_dict(loaded)
    for (name, a), (_, b) in zip(model.named_parameters(), fresh.named_parameters()):
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a.data, b.data)
    nn.save(model.state_dict(), tmp_path / "state.npz")
    assert list(nn.load(tmp_path / "state.npz")) == list(loaded)
    with pytest.raises(DTypeError, match="not an array"):
        nn.save({"lr": 0.1}, tmp_path / "bad.npz")


def test_to_cpu_and_dtype_conversion():
    model = TwoLayer()
    assert model.to("cpu") is model and model.cpu() is model
    assert all(p.device == "cpu" for p in model.parameters())
    model.double()
    assert all(p.dtype == np.float64 for p in model.parameters())
    model.float()
    assert all(p.dtype == np.float32 for p in model.parameters())


@pytest.mark.skipif(gpu_status()[0], reason="a GPU is available here; issue 5 tests moving to it")
def test_to_cuda_without_gpu_raises_the_backend_error_and_moves_nothing():
    model = TwoLayer()
    before = model.state_dict()
    with pytest.raises(DeviceError, match="cannot move data to cuda"):
        model.to("cuda")
    with pytest.raises(DeviceError, match="cuda:1"):
        model.cuda(1)
    with pytest.raises(DeviceError, match="unknown device"):
        model.to("tpu")
    assert all(p.device == "cpu" for p in model.parameters())
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


def test_train_takes_only_a_bool():
    model = TwoLayer()
    with pytest.raises(DTypeError, match=r"TwoLayer.train: mode must be True or False, got 'False'"):
        model.train("False")  # a non-empty string is true: it would have stayed in training mode
    assert model.training and model.eval() is model and not model.fc1.training


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda m: m.load_state_dict(None), DTypeError, r"expected a dict of arrays .* got NoneType"),
        (lambda m: m.load_state_dict(m), DTypeError, r"expected a dict of arrays .* got Linear"),
        (
            lambda m: m.load_state_dict(m.state_dict(), strict="False"),
            TypeError,
            r"strict must be True or False",
        ),
    ],
)
def test_load_state_dict_names_what_it_was_given(call, error, words):
    """Before: "argument of type 'NoneType' is not iterable", and strict='False' counted as True."""
    with pytest.raises(error, match=words):
        call(nn.Linear(2, 2))


def test_a_loss_module_checks_its_reduction_when_made():
    """Before: MSELoss(reduction='x') was made, and failed at its first call (torch is as lazy)."""
    for make in (lambda: nn.MSELoss(reduction="x"), lambda: nn.CrossEntropyLoss(reduction="avg")):
        with pytest.raises(ValueError, match=r"Loss: reduction must be one of \('mean', 'sum', 'none'\)"):
            make()


@pytest.mark.parametrize("name", ["model.pt", "model", "weights.npz"])
def test_save_writes_the_name_it_is_given_and_load_reads_it(tmp_path, name):
    """Before: np.savez added .npz to model.pt, and load('model.pt') found no file."""
    model = TwoLayer()
    nn.save(model, tmp_path / name)
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert list(nn.load(tmp_path / name)) == list(model.state_dict())


def test_pickling_a_model_says_how_to_save_one():
    import pickle

    with pytest.raises(TypeError, match=r"for a model .*nn.save\(model, path\)"):
        pickle.dumps(TwoLayer())


@pytest.mark.parametrize(
    "value, words",
    [
        (np.array([[None] * 3] * 2), "holds object data, which is not real numbers"),  # astype: NaN
        (np.zeros((2, 3)) + 1j, "holds complex128 data"),  # astype: the imaginary part dropped
        (np.array([["1", "2", "3"]] * 2), "holds <U1 data"),  # astype: parsed as numbers
        (np.full((2, 3), 1e300), "holds numbers too large for float32"),  # astype: inf
        ([[1.0, 2.0], [3.0]], "is a list that makes no array"),
    ],
)
def test_load_state_dict_refuses_what_would_load_other_numbers(value, words):
    """Each of these used to load as weights that are not the saved ones (NaN, inf, a real part)."""
    layer = nn.Linear(3, 2)
    before = layer.weight.data.copy()
    with pytest.raises(DTypeError, match=f"load_state_dict for Linear: 'weight' {re.escape(words)}"):
        layer.load_state_dict({"weight": value, "bias": np.zeros(2)})
    np.testing.assert_array_equal(layer.weight.data, before)
    layer.load_state_dict({"weight": np.full((2, 3), np.inf), "bias": [1, 2]})  # inf saved is inf loaded
    assert np.isinf(layer.weight.data).all() and layer.bias.data.tolist() == [1.0, 2.0]
