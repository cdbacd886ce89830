"""Changing a container: a wrong argument changes nothing, and Sequential changes as torch's does."""

from collections import OrderedDict

import numpy as np
import pytest

import varfunc.nn as nn
from varfunc import DTypeError


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1)})


def snapshot(model):
    return [(name, id(p)) for name, p in model.named_parameters()], [
        (name, id(m)) for name, m in model.named_modules()
    ]


@pytest.mark.parametrize(
    "change, error, words",
    [
        (
            lambda n: n.layers.insert(1, [nn.Linear(2, 2)]),
            DTypeError,
            r"ModuleList.insert: expected a Module, got a list",
        ),
        (lambda n: n.layers.insert(1, None), DTypeError, r"expected a Module, got a NoneType"),
        (
            lambda n: n.layers.insert(5, nn.ReLU()),
            IndexError,
            r"insert: position 5 is out of range for 2 modules",
        ),
        (lambda n: n.layers.insert("1", nn.ReLU()), TypeError, r"insert: the position is an int, got '1'"),
        (
            lambda n: n.layers.extend([nn.ReLU(), 3]),
            DTypeError,
            r"ModuleList.extend: item 1 is an int, not a Module",
        ),
        (
            lambda n: n.layers.extend(nn.ReLU()),
            TypeError,
            r"expected an iterable of Modules .*got a ReLU; .*append",
        ),
        (lambda n: n.layers.append([nn.ReLU()]), DTypeError, r"expected a Module, got list"),
        (lambda n: n.layers.__setitem__(0, 3), DTypeError, r"expected a Module, got int"),
        (
            lambda n: n.layers.__setitem__(slice(0, 1), nn.ReLU()),
            TypeError,
            r"assigning to a slice .* not supported",
        ),
        (lambda n: n.layers.__delitem__(7), IndexError, r"index 7 is out of range for 2 modules"),
        (
            lambda n: n.heads.update({"b": nn.ReLU(), "c": 3}),
            DTypeError,
            r"expected a Module for 'c', got an int",
        ),
        (lambda n: n.heads.update([("b", nn.ReLU()), ("c.d", nn.ReLU())]), KeyError, r"the name 'c.d' can't"),
        (
            lambda n: n.heads.update([("b", nn.ReLU()), "c"]),
            TypeError,
            r"expected a dict or \(name, Module\) pairs",
        ),
        (lambda n: n.heads.__setitem__("keys", nn.ReLU()), KeyError, r"the attribute 'keys' already exists"),
    ],
)
def test_a_failed_change_leaves_the_container_as_it_was(change, error, words):
    """Before: a failed insert had already cleared the ModuleList (the model lost its layers), and a
    failed extend or update had added the items before the wrong one."""
    model = Net()
    before = snapshot(model)
    with pytest.raises(error, match=words):
        change(model)
    assert snapshot(model) == before


def test_insert_delete_and_pop_rename_the_layers_as_torch_does():
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 1))
        model.insert(1, lib.Tanh())
        model.insert(-1, lib.Sigmoid())
        assert [type(m).__name__ for m in model] == ["Linear", "Tanh", "ReLU", "Sigmoid", "Linear"]
        assert type(model.pop(1)).__name__ == "Tanh"
        del model[0]
        model.extend([lib.ReLU()])
        assert [n for n, _ in model.named_children()] == ["0", "1", "2", "3"]
        assert [type(m).__name__ for m in model] == ["ReLU", "Sigmoid", "Linear", "ReLU"]
        model[1] = lib.Tanh()
        del model[1:3]
        assert [(n, type(m).__name__) for n, m in model.named_children()] == [("0", "ReLU"), ("1", "ReLU")]
        layers = lib.ModuleList([lib.ReLU(), lib.Tanh(), lib.Sigmoid()])
        del layers[0]
        assert [(n, type(m).__name__) for n, m in layers.named_children()] == [
            ("0", "Tanh"),
            ("1", "Sigmoid"),
        ]


def test_a_sequential_still_runs_after_changes():
    nn.manual_seed(0)
    model = nn.Sequential(
        OrderedDict([("fc", nn.Linear(2, 2, dtype=np.float64)), ("out", nn.Linear(2, 1, dtype=np.float64))])
    )
    model.insert(1, nn.ReLU())
    assert [n for n, _ in model.named_children()] == ["0", "1", "2"]  # renamed "0", "1", ... as in torch
    assert model(nn.Parameter(np.ones((3, 2)))).shape == (3, 1)


def test_insert_at_the_end_appends_as_torch_allows():
    """insert(len, m) is the last position torch accepts: it adds m at the end."""
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        for kind in (lib.ModuleList, lib.Sequential):
            first, last = lib.ReLU(), lib.Tanh()
            layers = kind([first]) if kind is lib.ModuleList else kind(first)
            layers.insert(1, last)
            assert list(layers) == [first, last] and layers[1] is last
            assert [n for n, _ in layers.named_children()] == ["0", "1"]


def test_a_module_dict_replaces_a_module_given_a_name_it_has():
    """As in torch: d[name] = m and d.update({name: m}) put m in the old one's place, not beside it."""
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        old, new, newer, other = lib.ReLU(), lib.Tanh(), lib.Sigmoid(), lib.ReLU()
        heads = lib.ModuleDict({"a": old, "b": other})
        heads["a"] = new
        assert heads["a"] is new and list(heads.keys()) == ["a", "b"]
        heads.update([("a", newer)])
        assert heads["a"] is newer
        heads.update({"a": old, "c": new})
        assert heads["a"] is old and list(heads.items()) == [("a", old), ("b", other), ("c", new)]


@pytest.mark.parametrize("pair", [("a", nn.ReLU(), 1), ("a",), ()])
def test_a_module_dict_update_refuses_a_tuple_that_is_not_a_pair(pair):
    heads = nn.ModuleDict()
    with pytest.raises(TypeError, match=r"ModuleDict.update: expected a dict or \(name, Module\) pairs, got"):
        heads.update([pair])
    assert len(heads) == 0


def test_append_to_a_slice_never_replaces_a_module():
    """A Sequential's model[1:] keeps the names "1" and "2": appending takes the next free number."""
    first, relu, last = nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)
    tail = nn.Sequential(first, relu, last)[1:]
    tanh, sigmoid = nn.Tanh(), nn.Sigmoid()
    tail.append(tanh)
    tail.extend([sigmoid])
    assert list(tail) == [relu, last, tanh, sigmoid]
    assert list(tail._modules) == ["1", "2", "3", "4"]
    assert [id(p) for p in tail.parameters()] == [id(p) for p in last.parameters()]
