"""What a Module registers and how: names, None placeholders, freezing, dir(), and the state it hands out."""

import warnings

import numpy as np
import pytest

import varfunc.nn as nn
from varfunc import VarfuncError, Variable


def ones(*shape):
    return nn.Parameter(np.ones(shape, dtype=np.float32))


def pair(lib, make):
    """A lib.Module with w then b, registered in that order."""

    class Pair(lib.Module):
        def __init__(self):
            super().__init__()
            self.w = make(1)
            self.b = make(2)

    return Pair()


def torch_ones(*shape):
    import torch

    return torch.nn.Parameter(torch.ones(shape))


# --- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "register, words",
    [
        (lambda m: m.add_module("", nn.ReLU()), r"Linear.add_module\(''\): a name can't be empty"),
        (
            lambda m: m.add_module("a.b", nn.ReLU()),
            r"""the name 'a.b' can't contain "\.".*use '_' instead: 'a_b'""",
        ),
        (lambda m: m.register_parameter("", ones(1)), r"register_parameter\(''\): a name can't be empty"),
        (
            lambda m: m.register_parameter("a.b", ones(1)),
            r"""register_parameter\('a.b'\): the name 'a.b' can't""",
        ),
        (
            lambda m: m.register_parameter("in_features", ones(1)),
            r"the attribute 'in_features' already exists",
        ),
        (lambda m: m.register_parameter("forward", None), r"the attribute 'forward' already exists"),
        (lambda m: m.add_module("weight", nn.ReLU()), r"the attribute 'weight' already exists"),
        (lambda m: setattr(m, "a.b", ones(1)), r"""setattr\(Linear, 'a.b'\): the name 'a.b' can't contain"""),
    ],
)
def test_a_name_a_module_cannot_register_is_refused_as_torch_refuses_it(register, words):
    """Before: accepted; state_dict() then lost a parameter under '' or 'a.b', and register_parameter
    overwrote in_features (the layer's setting) with no word."""
    layer = nn.Linear(2, 2)
    before = (dict(layer.__dict__), list(layer.named_parameters()), list(layer.named_modules()))
    with pytest.raises(KeyError, match=words) as raised:  # a KeyError, as torch raises
        register(layer)
    assert isinstance(raised.value, VarfuncError)
    assert "\\" not in str(raised.value)  # the message as written, not KeyError's quoted repr
    assert (dict(layer.__dict__), list(layer.named_parameters()), list(layer.named_modules())) == before


def test_torch_refuses_the_same_names():
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(2, 2)
    for register in (
        lambda: layer.add_module("", torch.nn.ReLU()),
        lambda: layer.add_module("a.b", torch.nn.ReLU()),
        lambda: layer.register_parameter("in_features", torch_ones(1)),
        lambda: layer.add_module("weight", torch.nn.ReLU()),
    ):
        with pytest.raises(KeyError):
            register()


def test_a_name_already_registered_is_replaced_in_place():
    layer = nn.Linear(2, 2)
    weight = ones(2, 2)
    layer.register_parameter("weight", weight)  # as torch allows
    assert layer.weight is weight and [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    with pytest.raises(TypeError, match=r"Linear.add_module\(1\): a name is a str, got 1"):
        layer.add_module(1, nn.ReLU())
    with pytest.raises(KeyError, match=r"ModuleDict.update: the name 'a.b' can't contain"):
        nn.ModuleDict({"a.b": nn.ReLU()})
    with pytest.raises(KeyError, match=r"Sequential.add_module\(''\)"):
        nn.Sequential(__import__("collections").OrderedDict([("", nn.ReLU())]))


# --- None keeps a parameter's place ---------------------------------------------------------------


def test_a_parameter_set_to_none_and_back_keeps_its_place():
    """Before: ['b', 'w'] (w went to the end of parameters(), and so of an optimizer's positions and
    of state_dict); torch keeps ['w', 'b'] with a None placeholder."""
    mine = pair(nn, ones)
    mine.w = None
    assert mine.w is None and [n for n, _ in mine.named_parameters()] == ["b"]
    assert list(mine.state_dict()) == ["b"]
    mine.w = ones(1)
    assert [n for n, _ in mine.named_parameters()] == ["w", "b"]
    layer = nn.Linear(2, 3, bias=False)
    layer.bias = ones(3)
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    torch = pytest.importorskip("torch")
    theirs = pair(torch.nn, torch_ones)
    theirs.w = None
    theirs.w = torch_ones(1)
    assert [n for n, _ in theirs.named_parameters()] == ["w", "b"]


# --- plain lists ----------------------------------------------------------------------------------


class Scales(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.scales = kind([ones(2), ones(2)])


@pytest.mark.parametrize("kind", [list, tuple, lambda items: dict(enumerate(items))])
def test_parameters_in_a_plain_list_get_a_warning(kind):
    """Before: silently not registered (a list of Modules was warned about, a list of Parameters not)."""
    with pytest.warns(
        UserWarning,
        match=r"Scales.scales: the Parameters in this .* are not registered.*"
        r"register_parameter\('scales_0', p\)",
    ):
        model = Scales(kind)
    assert [n for n, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]


@pytest.mark.parametrize(
    "plain, container",
    [
        (lambda m: [m], r"nn\.ModuleList\(\[\.\.\.\]\)"),
        (lambda m: (m,), r"nn\.ModuleList\(\[\.\.\.\]\)"),
        (lambda m: {"head": m}, r"nn\.ModuleDict\(\{\.\.\.\}\)"),
    ],
)
def test_modules_in_a_plain_container_are_told_the_container_that_fits(plain, container):
    """A dict of Modules is keyed: the advice is a ModuleDict, not a ModuleList."""
    model = nn.Linear(2, 2)
    with pytest.warns(
        UserWarning, match=rf"Linear.heads: the Modules in this .*assign an {container} instead"
    ):
        model.heads = plain(nn.ReLU())


def test_a_list_of_other_things_gets_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = nn.Linear(2, 2)
        model.history = [Variable(np.ones(2)), 3.0]
        model.sizes = (2, 2)


# --- freezing, recurse, prefix, dir ---------------------------------------------------------------


def test_requires_grad_freezes_every_parameter_as_torch_does():
    """Before: AttributeError: 'Sequential' object has no attribute 'requires_grad_'."""
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert model[0].requires_grad_(False) is model[0]
    assert [p.requires_grad for p in model.parameters()] == [False, False, True, True]
    model.requires_grad_()
    assert all(p.requires_grad for p in model.parameters())
    with pytest.raises(TypeError, match="requires_grad must be True or False"):
        model.requires_grad_("no")
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    theirs[0].requires_grad_(False)
    assert [p.requires_grad for p in theirs.parameters()] == [False, False, True, True]


def test_requires_grad_checks_every_parameter_before_changing_any():
    model = nn.Linear(2, 2).requires_grad_(False)
    model.register_parameter("count", nn.Parameter(np.zeros(1, dtype=np.int64), requires_grad=False))
    with pytest.raises(TypeError, match=r"requires_grad_\(True\): the parameter 'count' holds int64"):
        model.requires_grad_(True)
    assert not any(p.requires_grad for p in model.parameters())


def test_freezing_a_model_that_holds_an_integer_parameter_is_fine():
    """Only requires_grad_(True) needs float data: freezing leaves an int64 counter frozen, no error."""
    model = nn.Linear(2, 2)
    model.register_parameter("count", nn.Parameter(np.zeros(1, dtype=np.int64), requires_grad=False))
    assert model.requires_grad_(False) is model
    assert [p.requires_grad for p in model.parameters()] == [False, False, False]


def _names_by_argument_order(lib, make_param) -> list:
    """What named_parameters, state_dict and named_modules give, their arguments passed by position."""
    model = lib.Sequential(lib.Linear(2, 2), lib.ReLU())
    model.scale = make_param(1)
    model.also = model.scale
    return [
        [n for n, _ in model.named_parameters("m", False)],
        [n for n, _ in model.named_parameters("m", True, False)],
        list(model.state_dict(prefix="net.")),
        [n for n, _ in model.named_modules(None, "top")],
        len(list(model.parameters(recurse=False))),
    ]


def test_the_arguments_of_named_parameters_come_in_torchs_order():
    """Before: named_parameters('', False) meant remove_duplicate=False here, recurse=False in torch;
    parameters(recurse=False) and state_dict(prefix=...) were TypeErrors."""
    expected = [
        ["m.scale"],
        ["m.scale", "m.also", "m.0.weight", "m.0.bias"],
        ["net.scale", "net.also", "net.0.weight", "net.0.bias"],
        ["top", "top.0", "top.1"],
        1,
    ]
    assert _names_by_argument_order(nn, ones) == expected
    torch = pytest.importorskip("torch")
    assert _names_by_argument_order(torch.nn, torch_ones) == expected


def test_dir_offers_submodules_and_parameters_for_tab_completion():
    """Before: dir(model) had neither fc nor weight, so Jupyter did not complete model.fc."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.scale = ones(1)

    names = dir(Net())
    assert {"fc", "scale", "forward", "training"} <= set(names) and names == sorted(names)
    assert "weight" in dir(nn.Linear(1, 1))
    assert "0" not in dir(nn.Sequential(nn.ReLU()))  # as torch: model.0 is no Python


# --- state ----------------------------------------------------------------------------------------


def test_strict_load_state_dict_raises_a_runtime_error_as_torch_does():
    """Before: a KeyError, whose message Python printed quoted, missed by `except RuntimeError`."""
    model = nn.Linear(2, 2)
    state = model.state_dict()
    state["extra"] = state.pop("bias")
    with pytest.raises(VarfuncError, match=r"missing keys \['bias'\], unexpected keys \['extra'\]") as raised:
        model.load_state_dict(state)
    assert not isinstance(raised.value, KeyError)
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Linear(2, 2)
    their_state = theirs.state_dict()
    their_state["extra"] = their_state.pop("bias")
    with pytest.raises(RuntimeError):
        theirs.load_state_dict(their_state)


def test_state_dict_keeps_the_values_of_its_moment_where_torch_follows_training():
    """The kit's copies (docs/differences.md, row 51): 'best = model.state_dict()' keeps the best."""
    model = nn.Linear(2, 1, dtype=np.float64)
    best = model.state_dict()
    kept = model.weight.data.copy()
    model.weight.data += 1.0
    model.load_state_dict(best)
    np.testing.assert_array_equal(model.weight.data, kept)
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Linear(2, 1)
    their_best = theirs.state_dict()
    with torch.no_grad():
        theirs.weight.add_(1.0)
    assert torch.equal(their_best["weight"], theirs.weight)  # a reference: it followed the change
