"""varfunc.nn: Module registry, Linear and its 2017 initialisation, activations, losses, state and files."""

import ast
import copy
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from conftest import rand

import varfunc.nn as nn
from varfunc import DeviceError, DTypeError, ShapeError, VarfuncError, Variable, gradcheck
from varfunc.backend import gpu_status

ROOT = Path(__file__).resolve().parents[1]


def const(array):
    return Variable(np.asarray(array), requires_grad=False)


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(np.ones(2))
        self.note = "not registered"

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


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
        TypeError, match=r"Sequential: index it with an int or a slice \(model\[0\], model\[:2\]\), got 'fc'"
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


# --- losses --------------------------------------------------------------------------------------

REGRESSION_LOSSES = [nn.mse_loss, nn.l1_loss, nn.smooth_l1_loss]


@pytest.mark.parametrize("loss", REGRESSION_LOSSES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_loss_gradcheck(loss, reduction):
    x, t = rand(4, 3, seed=5) * 2, rand(4, 3, seed=6) * 2  # differences on both sides of beta = 1
    assert gradcheck(lambda a, b: loss(a, b, reduction=reduction), (x, t))


def test_regression_loss_values():
    x, t = np.array([0.0, 0.5, 3.0, -2.0]), np.array([0.0, 0.0, 1.0, 0.0])
    d = x - t
    np.testing.assert_allclose(nn.mse_loss(const(x), t).item(), np.mean(d**2))
    np.testing.assert_allclose(nn.l1_loss(const(x), t).item(), np.mean(np.abs(d)))
    huber = np.where(np.abs(d) < 1, 0.5 * d**2, np.abs(d) - 0.5)
    np.testing.assert_allclose(nn.smooth_l1_loss(const(x), t, reduction="none").data, huber)
    huber2 = np.where(np.abs(d) < 2, 0.25 * d**2, np.abs(d) - 1)
    np.testing.assert_allclose(nn.smooth_l1_loss(const(x), t, reduction="sum", beta=2).item(), huber2.sum())


def test_cross_entropy_values_and_gradcheck():
    scores, labels = rand(5, 4, seed=7), np.array([0, 3, 1, 1, 2])
    shifted = scores - scores.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    expected = -logp[np.arange(5), labels]
    np.testing.assert_allclose(nn.cross_entropy(const(scores), labels, reduction="none").data, expected)
    np.testing.assert_allclose(nn.cross_entropy(const(scores), labels).item(), expected.mean())
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda s, r=reduction: nn.cross_entropy(s, labels, reduction=r), (scores,))
    assert gradcheck(lambda s: nn.nll_loss(nn.log_softmax(s, dim=1), const(labels)), (scores,))
    # Its gradient is softmax - onehot, divided by N.
    x = Variable(scores)
    nn.cross_entropy(x, labels).backward()
    softmax = np.exp(logp)
    np.testing.assert_allclose(x.grad, (softmax - np.eye(4)[labels]) / 5, atol=1e-12)


def test_cross_entropy_is_stable_for_huge_scores():
    x = Variable(np.array([[1e4, -1e4, 0.0], [-5e3, 5e3, 5e3]]))
    loss = nn.cross_entropy(x, np.array([0, 2]))
    loss.backward()
    np.testing.assert_allclose(loss.item(), np.log(2) / 2)
    assert np.all(np.isfinite(x.grad))


def test_loss_errors_are_clear():
    with pytest.raises(ShapeError, match=r"\(4, 1\).*\(4,\).*view"):
        nn.mse_loss(const(np.ones((4, 1))), np.ones(4))
    with pytest.raises(DTypeError, match=r"integer class indices, got dtype float64; use labels.astype"):
        nn.cross_entropy(const(np.ones((2, 3))), np.array([0.0, 1.0]))
    one_hot = np.eye(3)[[0, 2]]  # class probabilities: cross_entropy takes them, nll_loss does not
    with pytest.raises(DTypeError, match=r"one-hot rows pass labels.argmax\(axis=1\)"):
        nn.nll_loss(const(np.ones((2, 3))), one_hot)
    with pytest.raises(ValueError, match="class 3 but input has 3 classes"):
        nn.cross_entropy(const(np.ones((2, 3))), np.array([0, 3]))
    with pytest.raises(ShapeError, match=r"target must have shape \(2,\)"):
        nn.cross_entropy(const(np.ones((2, 3))), np.array([[0], [1]]))
    with pytest.raises(ShapeError, match=r"\(N, C\)"):
        nn.cross_entropy(const(np.ones(3)), np.array([0]))
    with pytest.raises(ValueError, match="reduction"):
        nn.l1_loss(const(np.ones(2)), np.ones(2), reduction="avg")
    with pytest.raises(DTypeError, match="Variable"):
        nn.mse_loss(np.ones(2), np.ones(2))


def test_loss_modules_and_accuracy():
    x, t = const(rand(3, 2)), rand(3, 2, seed=1)
    assert nn.MSELoss()(x, t).item() == pytest.approx(nn.mse_loss(x, t).item())
    assert nn.L1Loss(reduction="sum")(x, t).item() == pytest.approx(nn.l1_loss(x, t, reduction="sum").item())
    assert nn.SmoothL1Loss()(x, t).item() == pytest.approx(nn.smooth_l1_loss(x, t).item())
    labels = np.array([1, 0, 1])
    assert nn.CrossEntropyLoss()(x, labels).item() == pytest.approx(nn.cross_entropy(x, labels).item())
    assert nn.NLLLoss()(x, labels).item() == pytest.approx(nn.nll_loss(x, labels).item())
    assert "reduction='mean'" in repr(nn.MSELoss())
    assert nn.accuracy(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), labels) == 1.0
    assert nn.accuracy(np.array([[2.0], [-1.0], [-3.0]]), labels) == pytest.approx(2 / 3)


@pytest.mark.oracle
def test_losses_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, t, scores, labels = rand(6, 3, seed=8) * 2, rand(6, 3, seed=9), rand(6, 5, seed=10), np.arange(6) % 5
    for ours, theirs in [
        (nn.mse_loss, F.mse_loss),
        (nn.l1_loss, F.l1_loss),
        (nn.smooth_l1_loss, F.smooth_l1_loss),
    ]:
        for reduction in ("mean", "sum", "none"):
            a, ta = Variable(x), torch.tensor(x, requires_grad=True)
            out, tout = ours(a, t, reduction=reduction), theirs(ta, torch.tensor(t), reduction=reduction)
            np.testing.assert_allclose(out.data, tout.detach().numpy(), atol=1e-12)
            out.backward(np.ones(out.shape))
            tout.backward(torch.ones_like(tout))
            np.testing.assert_allclose(a.grad, ta.grad.numpy(), atol=1e-12)
    a, ta = Variable(scores), torch.tensor(scores, requires_grad=True)
    out, tout = nn.cross_entropy(a, labels), F.cross_entropy(ta, torch.tensor(labels))
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), atol=1e-12)
    np.testing.assert_allclose(a.grad, ta.grad.numpy(), atol=1e-12)


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
    other.load_state_dict(model.state_dict())  # strict: every name is there
    np.testing.assert_array_equal(other[0].weight.data, model[0].weight.data)


def test_a_shared_layers_state_dict_names_match_torch():
    torch = pytest.importorskip("torch")
    names = [n for n, _ in tied(torch.nn, torch.ones(1)).named_modules(remove_duplicate=False)]
    assert [n for n, _ in tied(nn, np.ones(1)).named_modules(remove_duplicate=False)] == names
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
    with pytest.raises(KeyError, match=r"missing keys \['scale'\], unexpected keys \['extra'\]"):
        model.load_state_dict(bad)
    model.load_state_dict(bad, strict=False)  # loads what matches
    wrong = model.state_dict()
    wrong["fc1.bias"] = np.zeros(5)
    wrong["fc1.weight"] = np.zeros((4, 3))
    with pytest.raises(ShapeError, match=r"'fc1.bias' has shape \(5,\) in the state dict but \(4,\)"):
        model.load_state_dict(wrong)
    unreadable = {name: np.zeros_like(value) for name, value in model.state_dict().items()}
    unreadable["scale"] = np.array(["x", "y"])  # the last entry read, after the layers' arrays
    with pytest.raises(DTypeError, match="'scale' is a ndarray that cannot become float64"):
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


# --- the house rules -----------------------------------------------------------------------------


def _imports(path):
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_toolkit_imports_point_inwards():
    pkg = ROOT / "varfunc"
    outer = {"nn", "optim", "data", "train", "viz", "grading"}
    for path in list(pkg.glob("*.py")) + list((pkg / "functions").glob("*.py")):
        if path.stem in outer:
            continue
        for name in _imports(path):
            assert not any(name.lstrip(".").split(".")[0] == o for o in outer), (path, name)
    forbidden = {
        "nn": {"optim", "data", "train"},
        "optim": {"nn", "data", "train"},
        "data": {"nn", "optim", "train"},
    }
    for room, others in forbidden.items():
        for path in (pkg / room).glob("*.py"):
            for name in _imports(path):
                parts = name.lstrip(".").split(".")
                assert not (name.startswith("..") and parts[0] in others), (path, name)
                assert not any(name.startswith(f"varfunc.{o}") for o in others), (path, name)


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


def test_accuracy_takes_one_logit_per_row_in_either_shape():
    labels = np.array([1, 0, 1])
    assert nn.accuracy(np.array([2.0, -1.0, -3.0]), labels) == pytest.approx(2 / 3)
    assert nn.accuracy(np.array([[2.0], [-1.0], [-3.0]]), labels) == pytest.approx(2 / 3)
    with pytest.raises(
        ShapeError, match=r"accuracy: scores of shape \(3, 2\) give 3 predictions but there are 2"
    ):
        nn.accuracy(np.zeros((3, 2)), np.array([0, 1]))


def test_one_probability_per_row_is_cut_at_one_half_as_a_sigmoid_model_needs():
    labels = np.array([1, 0, 0, 1])
    probabilities = np.array([[0.9], [0.2], [0.45], [0.6]])  # a Sigmoid's outputs: all in [0, 1]
    assert nn.accuracy(probabilities, labels) == 1.0  # cut at 0 they would all be class 1: 0.5
    assert nn.classes_from_scores(probabilities).tolist() == [1, 0, 0, 1]
    assert nn.classes_from_scores(np.array([0.9, -0.2, 0.45, 3.0])).tolist() == [1, 0, 1, 1]  # logits
    assert nn.classes_from_scores(np.array([[0.2, 0.7, 0.1]])).tolist() == [1]
    model = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())
    X = np.random.default_rng(0).standard_normal((50, 2)).astype(np.float32)
    p = model(Variable(X)).data[:, 0]
    assert nn.accuracy(model(Variable(X)), (p > 0.5).astype(np.int64)) == 1.0
