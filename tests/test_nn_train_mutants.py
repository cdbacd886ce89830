"""Rules of nn and optim that a full mutation audit found no other test pinning down.

A second audit ran every single-token mutant of varfunc/nn, varfunc/optim, varfunc/train.py,
varfunc/fit_checks.py and varfunc/data (tests/test_nn_optim_mutants.py holds what a first, sampled
round added; tests/test_nn_train_mutants_more.py what this one added for save, fit and data). Each
test below fails on a mutant that the rest of the suite let through: a linear layer's wider bias,
log_softmax's default dim, a target that would start requiring grad, a threshold met exactly, the
class range an error names, an optimizer setting of exactly 0 or 1, a second group's saved settings,
a Module's repr, assignments and dtype change, a container's edges.
"""

import types

import numpy as np
import pytest

import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DeviceError, DTypeError, ShapeError, Variable
from varfunc.backend import device_of
from varfunc.grading.fake_gpu import fake_gpu
from varfunc.nn import functions

# --- nn: functions and losses --------------------------------------------------------------------


def test_linear_with_a_wider_bias_adds_it_and_widens_the_output():
    """A float64 bias on a float32 layer is added (x @ W.T + b, as NumPy promotes), not subtracted,
    and its gradient is the output gradient summed over the rows."""
    x = Variable(np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32))
    w = Variable(np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]], dtype=np.float32))
    b = Variable(np.array([0.1, -0.2, 0.3]))
    out = nn.linear(x, w, b)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, x.data @ w.data.T + b.data, rtol=1e-7)
    out.sum().backward()
    np.testing.assert_array_equal(b.grad, [2.0, 2.0, 2.0])


def test_a_graph_node_shows_its_settings_and_a_linear_node_its_torch_name_before_a_call():
    """The v0.1 drawing labels nodes by repr: Dropout shows p and NLLLoss its reduction; a Linear
    node not yet called is named as F.linear's usual node, AddmmBackward0."""
    dropped = nn.dropout(Variable(np.ones(4)), p=0.25)
    loss = nn.nll_loss(Variable(np.zeros((2, 3))), np.array([0, 2]), reduction="sum")
    assert repr(dropped.creator) == "Dropout(p=0.25)"
    assert repr(loss.creator) == "NLLLoss(reduction='sum')"
    assert functions.Linear().name() == "AddmmBackward0"


def test_log_softmax_defaults_to_the_last_dim():
    """nn.log_softmax(x) normalises each row of an (N, C) input (and the last dim of any input), not
    each column: as torch.log_softmax(x, dim=-1)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for shape in [(2, 3), (2, 3, 4)]:
        x = rng.standard_normal(shape)
        want = torch.log_softmax(torch.tensor(x), dim=-1).numpy()
        np.testing.assert_allclose(nn.log_softmax(Variable(x)).data, want, rtol=1e-12)


def test_a_loss_against_an_array_target_needs_no_grad_when_the_input_needs_none():
    """The target array becomes a constant: a loss of an input that requires no grad requires none
    either (as torch's), whatever the loss and its reduction."""
    torch = pytest.importorskip("torch")
    x = Variable(np.zeros((3, 4), dtype=np.float32), requires_grad=False)
    labels = np.array([0, -100, 2])
    losses = [
        nn.mse_loss(x, np.ones((3, 4))),
        nn.cross_entropy(x, labels, reduction="none", label_smoothing=0.1),
    ]
    assert not torch.nn.functional.mse_loss(torch.zeros(3), torch.ones(3)).requires_grad
    assert [loss.requires_grad for loss in losses] == [False, False]
    assert losses[1].dtype == np.float32  # the ignored row's 0 keeps the input's dtype


def test_probability_targets_given_as_lists_with_label_smoothing_match_torch():
    """Class probabilities given as a list of rows are read as an array, then smoothed."""
    torch = pytest.importorskip("torch")
    scores = np.array([[1.0, -0.5, 0.2], [0.3, 0.3, -1.0]])
    target = [[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]]
    ours = nn.cross_entropy(Variable(scores), target, label_smoothing=0.2)
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(scores), torch.tensor(np.array(target)), label_smoothing=0.2
    )
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)


def test_probability_targets_refuse_an_ignore_index_of_zero():
    """ignore_index=0 names a class (torch: "ignore_index is not supported for floating point
    target"): refused, as any index >= 0 is; only the default -100 (or another negative) passes."""
    scores, target = Variable(np.zeros((2, 3))), np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="ignore_index=0 needs class indices"):
        nn.cross_entropy(scores, target, ignore_index=0)
    assert nn.cross_entropy(scores, target, ignore_index=-1).item() == pytest.approx(np.log(3))


def test_a_class_out_of_range_is_reported_with_the_valid_range():
    """The error for a label past the last class names the valid classes, 0 to C - 1."""
    with pytest.raises(ValueError, match=r"target holds class 5 but input has 3 classes \(0 to 2\)"):
        nn.nll_loss(Variable(np.zeros((2, 3))), np.array([0, 5]))


@pytest.mark.parametrize(
    "input_shape, target_shape",
    [((3, 2), (3, 4)), ((1, 3), (1, 4)), ((3, 1, 2), (3, 2)), ((3, 2), (3, 1, 2))],
    ids=["same-rows", "one-row", "input-3d", "target-3d"],
)
def test_the_n1_against_n_hint_is_given_only_where_a_last_dim_is_one(input_shape, target_shape):
    """A regression loss hints at (N, 1) against (N,) only for shapes of the same rows with a last
    dim of 1; other mismatches get the plain ShapeError."""
    with pytest.raises(ShapeError) as error:
        nn.mse_loss(Variable(np.zeros(input_shape)), np.zeros(target_shape))
    assert "(N, 1)" not in str(error.value)
    with pytest.raises(ShapeError, match=r"\(an \(N, 1\) output against an \(N,\) target\?"):
        nn.mse_loss(Variable(np.zeros((3, 1))), np.zeros(3))


def test_accuracy_at_the_threshold_is_class_zero():
    """One score per row is class 1 only strictly above the threshold (torchmetrics: preds > threshold)."""
    assert nn.accuracy(np.array([0.5, 0.7, 0.2]), np.array([0, 1, 0]), threshold=0.5) == 1.0


def test_accuracy_refuses_labels_that_are_not_numbers_and_names_the_scores_per_row():
    """String labels are refused even beside numeric scores; a threshold given for (N, C) scores is
    refused naming the C scores each row has."""
    with pytest.raises(DTypeError, match="accuracy: takes scores and class labels"):
        nn.accuracy(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"these scores have 3 per row \(shape \(5, 3\)\)"):
        nn.accuracy(np.zeros((5, 3)), np.zeros(5, dtype=np.int64), threshold=0.5)


def test_a_loss_module_refuses_an_unknown_reduction_when_made():
    """MSELoss(reduction='average') is refused at construction, naming the class, not at the first call."""
    with pytest.raises(ValueError, match=r"MSELoss: reduction must be one of \('mean', 'sum', 'none'\)"):
        nn.MSELoss(reduction="average")


def test_the_dropout_layer_defaults_to_p_one_half_as_torch():
    """nn.Dropout() drops with p = 0.5, torch.nn.Dropout()'s default."""
    torch = pytest.importorskip("torch")
    assert nn.Dropout().p == torch.nn.Dropout().p == 0.5


def test_a_linear_layer_takes_one_sample_of_shape_in_features_and_refuses_a_number():
    """Linear(3, 2) maps one sample (3,) to (2,), as torch's does; a 0-d input is a ShapeError."""
    layer = nn.Linear(3, 2, dtype=np.float64)
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(layer(Variable(x)).data, layer.weight.data @ x + layer.bias.data)
    with pytest.raises(ShapeError, match=r"expected input of shape \(N, 3\)"):
        layer(Variable(np.float64(1.0)))


# --- optim ---------------------------------------------------------------------------------------


def steps_against_torch(make_ours, make_theirs, steps=3):
    """(ours, theirs): a parameter after the same gradients, one per step, under each optimizer."""
    torch = pytest.importorskip("torch")
    start = np.array([1.0, -2.0, 3.0])
    grads = [np.array([0.1, 0.2, -0.3]), np.array([-0.5, 0.05, 0.4]), np.array([0.3, -0.1, 0.2])]
    w, t = Variable(start.copy()), torch.tensor(start.copy(), requires_grad=True)
    ours, theirs = make_ours([w]), make_theirs(torch.optim, [t])
    for g in grads[:steps]:
        w.grad, t.grad = g.copy(), torch.tensor(g)
        ours.step()
        theirs.step()
    return w.data, t.detach().numpy()


@pytest.mark.parametrize(
    "setting", [{"weight_decay": 1.0}, {"momentum": 1.0}, {"momentum": 1.0, "dampening": 1.0}]
)
def test_sgd_with_a_setting_of_exactly_one_steps_as_torch(setting):
    """weight_decay=1 adds the whole parameter, momentum=1 keeps the whole buffer, dampening=1 drops
    the new gradient from it: none of these valid values may switch its rule off."""
    ours, theirs = steps_against_torch(
        lambda p: optim.SGD(p, lr=0.1, **setting), lambda o, p: o.SGD(p, lr=0.1, **setting)
    )
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "setting", [{"eps": 0.0}, {"betas": (0.0, 0.999)}, {"betas": (0.9, 0.0)}], ids=["eps", "beta1", "beta2"]
)
def test_adam_takes_an_eps_or_a_beta_of_zero_and_steps_as_torch(setting):
    """eps=0 and a beta of 0 are in torch's ranges (0 <= eps, 0 <= beta < 1): taken, not refused."""
    ours, theirs = steps_against_torch(
        lambda p: optim.Adam(p, lr=0.1, **setting), lambda o, p: o.Adam(p, lr=0.1, **setting)
    )
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_the_required_lr_shows_as_torchs_marker_and_groups_are_headed_in_the_repr():
    """SGD's signature shows lr=<required parameter> (torch.optim's marker); the repr heads each group
    'Parameter Group N', as torch prints it."""
    torch = pytest.importorskip("torch")
    from torch.optim.optimizer import required

    assert repr(optim.optimizer.required) == repr(required)
    a, b = Variable(np.zeros(2)), Variable(np.zeros(2))
    ours = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    theirs = torch.optim.SGD([{"params": [torch.zeros(2)]}, {"params": [torch.zeros(2)]}], lr=0.1)
    headings = [
        [line for line in repr(o).splitlines() if line.startswith("Parameter")] for o in (ours, theirs)
    ]
    assert headings[0] == headings[1] == ["Parameter Group 0", "Parameter Group 1"]


def test_the_base_optimizer_has_no_step_of_its_own():
    """Optimizer.step() raises NotImplementedError: a subclass that forgets step() is told, not
    silently left untrained."""
    with pytest.raises(NotImplementedError):
        optim.Optimizer([Variable(np.ones(2))], {}).step()


@pytest.mark.parametrize(
    "change, error",
    [
        ({"lr": float("nan")}, "lr must be a finite number"),
        ({"lr": -1.0}, "invalid learning rate -1.0"),
        ({"momentum": None}, r"group 1 has the settings \['dampening', 'lr', 'nesterov', 'weight_decay'\]"),
    ],
    ids=["nan", "negative", "missing"],
)
def test_load_state_dict_checks_the_settings_of_every_group_not_only_the_first(change, error):
    """A saved setting in the second group that is nan, out of range or missing is refused (as a new
    one would be), and no group changes."""
    a, b = Variable(np.zeros(2)), Variable(np.zeros(2))
    optimizer = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    saved = optimizer.state_dict()
    saved["param_groups"][1].update(change)
    saved["param_groups"][1] = {k: v for k, v in saved["param_groups"][1].items() if v is not None}
    with pytest.raises(ValueError, match=error):
        optimizer.load_state_dict(saved)
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]


# --- nn: Module ----------------------------------------------------------------------------------


@pytest.mark.parametrize("package", ["varfunc.nn", "varfunc.nn.module", "varfunc.optim", "varfunc.data"])
def test_a_star_import_binds_the_api_and_no_modules(package):
    """`from varfunc.nn import *` (as a notebook may write) binds the classes and functions listed in
    __all__, never a module (varfunc.nn's submodule functions would hide varfunc.functions, say)."""
    namespace = {}
    exec(f"from {package} import *", namespace)
    bound = [value for name, value in namespace.items() if name != "__builtins__"]
    assert bound and not any(isinstance(value, types.ModuleType) for value in bound)


def test_a_module_without_settings_or_children_prints_as_torch():
    """ReLU() and an empty Sequential() print with empty parentheses, as torch's do."""
    torch = pytest.importorskip("torch")
    assert [repr(nn.ReLU()), repr(nn.Sequential())] == [repr(torch.nn.ReLU()), repr(torch.nn.Sequential())]


def test_named_parameters_refuses_a_recurse_that_is_not_a_bool():
    """recurse='no' would count as True: refused, naming the argument."""
    with pytest.raises(DTypeError, match="named_parameters: recurse must be True or False, got 'no'"):
        list(nn.Linear(2, 1).named_parameters(recurse="no"))


def test_a_model_moved_after_steps_is_on_the_gpu_and_its_old_momentum_is_refused():
    """On the simulated GPU: model.to('cuda') moves every parameter and gradient; the next step finds
    the momentum buffers left on the CPU and raises a DeviceError."""
    model = nn.Linear(2, 1, dtype=np.float64)
    sgd = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with fake_gpu():
        model(Variable(np.ones((1, 2)))).sum().backward()
        sgd.step()
        model.to("cuda")
        assert [(p.device, device_of(p._grad)) for p in model.parameters()] == [("cuda:0", "cuda:0")] * 2
        with pytest.raises(
            DeviceError, match="'momentum_buffer' of a parameter of shape \\(1, 2\\) is on cpu"
        ):
            sgd.step()


def test_module_assignments_replace_what_the_name_held_before():
    """A Parameter assigned over a plain attribute is what the name gives (the old value does not
    shadow it); del removes a sub-Module or a plain attribute (as in torch)."""
    model = nn.Module()
    model.w = 3
    model.w = nn.Parameter(np.ones(2))
    assert isinstance(model.w, nn.Parameter) and [name for name, _ in model.named_parameters()] == ["w"]
    model.fc, model.note = nn.Linear(2, 1), "kept"
    del model.fc, model.note
    assert list(model.children()) == [] and not hasattr(model, "note")


def test_module_zero_grad_zeroes_the_gradients_in_place_by_default():
    """model.zero_grad() keeps each gradient array and fills it with zeros (2017's rule, this kit's
    default), as optimizer.zero_grad() does."""
    model = nn.Linear(2, 1)
    model(Variable(np.ones((1, 2), dtype=np.float32))).sum().backward()
    grads = [p._grad for p in model.parameters()]
    model.zero_grad()
    assert all(p._grad is g and not g.any() for p, g in zip(model.parameters(), grads))


def test_module_type_refuses_an_integer_dtype_and_resets_gradients_when_it_converts():
    """model.type(np.int64) is a DTypeError and every parameter keeps its dtype; model.double()
    converts them and drops their float32 gradients, so the next backward gives float64 ones."""
    model = nn.Linear(2, 1)
    with pytest.raises(DTypeError, match="Linear.type: parameters hold floating-point data, got int64"):
        model.type(np.int64)
    assert [p.dtype for p in model.parameters()] == [np.float32, np.float32]
    model(Variable(np.ones((1, 2), dtype=np.float32))).sum().backward()
    model.double()
    assert [(p.dtype, p._grad) for p in model.parameters()] == [(np.float64, None)] * 2
    model(Variable(np.ones((1, 2)))).sum().backward()
    assert [p.grad.dtype for p in model.parameters()] == [np.float64, np.float64]


def net_with_a_setting(lib):
    """A Module of lib (varfunc.nn or torch.nn) whose extra_repr says k=3, holding one ReLU."""

    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.ReLU()

        def extra_repr(self):
            return "k=3"

    return Net()


def test_a_module_with_settings_and_children_prints_the_settings_first_as_torch():
    """A Module whose extra_repr says something and that has sub-Modules prints both, as torch does."""
    torch = pytest.importorskip("torch")
    printed = [repr(net_with_a_setting(lib)) for lib in (nn, torch.nn)]
    assert printed[0] == printed[1] == "Net(\n  k=3\n  (fc): ReLU()\n)"


# --- nn: containers ------------------------------------------------------------------------------


def test_module_dict_membership_deletion_and_call_behave_as_torch():
    """`in` answers False for a name not there; del of such a name is a KeyError that lists the names
    there; calling a ModuleDict is a NotImplementedError (it has no forward), as in torch."""
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        heads = lib.ModuleDict({"age": lib.ReLU()})
        assert ("age" in heads, "size" in heads) == (True, False)
        with pytest.raises(NotImplementedError):
            heads(Variable(np.ones(2)) if lib is nn else torch.ones(2))
    with pytest.raises(KeyError, match=r"ModuleDict has no module 'size'; it has \['age'\]"):
        del nn.ModuleDict({"age": nn.ReLU()})["size"]


def test_module_list_extend_returns_the_list_and_the_first_layer_is_at_minus_len():
    """layers.extend([...]) returns the ModuleList itself (torch's does), so calls can be chained;
    layers[-len(layers)] is the first layer, as for a list."""
    layers = nn.ModuleList()
    relu, tanh = nn.ReLU(), nn.Tanh()
    assert layers.extend([relu, tanh]) is layers and len(layers) == 2
    assert layers[-2] is relu and nn.Sequential(relu, tanh)[-2] is relu


def test_insert_takes_minus_len_as_the_front_and_names_the_valid_positions():
    """insert(-len, m) puts m first (as torch's and a list's insert); a position out of range is an
    IndexError naming the range, from -len to len."""
    torch = pytest.importorskip("torch")
    orders = []
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.ReLU(), lib.Tanh())
        model.insert(-2, lib.Sigmoid())
        orders.append([type(m).__name__ for m in model])
    assert orders[0] == orders[1] == ["Sigmoid", "ReLU", "Tanh"]
    with pytest.raises(IndexError, match=r"position 5 is out of range for 2 modules \(from -2 to 2\)"):
        nn.Sequential(nn.ReLU(), nn.Tanh()).insert(5, nn.ReLU())


# --- nn: Parameter -------------------------------------------------------------------------------


def test_a_parameter_is_made_from_a_list_and_refuses_integers_in_its_own_words():
    """Parameter([1.0, 2.0]) holds float64; integer data is refused naming Parameter and the way out
    (requires_grad=False), not Variable's advice to leave requires_grad at its default."""
    assert nn.Parameter([1.0, 2.0]).dtype == np.float64
    for data in ([1, 2], np.array([1, 2])):
        with pytest.raises(
            DTypeError, match=r"Parameter: int64 data cannot require grad.*requires_grad=False"
        ):
            nn.Parameter(data)


def test_a_parameter_prints_as_parameter_containing_its_values():
    """repr(Parameter) is 'Parameter containing:' then the values and the summary a Variable shows."""
    p = nn.Parameter(np.array([1.0, 2.0]))
    shown = repr(Variable(np.array([1.0, 2.0]), requires_grad=True)).split("\n")
    assert repr(p).split("\n") == ["Parameter containing:", *shown[1:]]
