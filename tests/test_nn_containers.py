"""ModuleList and ModuleDict: layers the model owns without a forward of their own; the warning for
layers kept in a plain list or dict; zero_grad(set_to_none=True)."""

import numpy as np
import pytest

import varfunc.nn as nn
import varfunc.optim as optim
from varfunc import DTypeError, Variable


class Tower(nn.Module):
    """Three layers in a ModuleList, two heads in a ModuleDict."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3, dtype=np.float64) for _ in range(3)])
        self.heads = nn.ModuleDict({"size": nn.Linear(3, 1, dtype=np.float64), "age": nn.Linear(3, 2)})
        self.drop = nn.ModuleList([nn.Dropout(0.5)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return self.heads["size"](x)


def test_the_layers_of_a_module_list_and_dict_are_the_models():
    nn.manual_seed(0)
    model = Tower()
    names = list(model.state_dict())
    assert names == [f"layers.{i}.{p}" for i in range(3) for p in ("weight", "bias")] + [
        "heads.size.weight",
        "heads.size.bias",
        "heads.age.weight",
        "heads.age.bias",
    ]
    assert len(list(model.parameters())) == 10
    model.eval()
    assert not model.drop[0].training and not model.layers[-1].training
    x = Variable(np.ones((2, 3)), requires_grad=False)
    model(x).sum().backward()
    assert all(layer.weight._grad is not None for layer in model.layers)  # backward reached every one


def test_a_module_list_is_a_list():
    layers = nn.ModuleList([nn.Linear(2, 2), nn.Tanh()])
    first = layers[0]
    layers.append(nn.ReLU()).extend([nn.Sigmoid()])
    layers.insert(1, nn.Dropout())
    assert [type(m).__name__ for m in layers] == ["Linear", "Dropout", "Tanh", "ReLU", "Sigmoid"]
    assert list(layers._modules) == ["0", "1", "2", "3", "4"]  # renamed in order, as torch does
    assert layers[0] is first and len(layers) == 5 and isinstance(layers[1:3], nn.ModuleList)
    layers[-1] = nn.Linear(2, 2)
    assert isinstance(layers[4], nn.Linear) and len(list(layers.parameters())) == 4
    with pytest.raises(IndexError, match="ModuleList: index 5 is out of range for 5 modules"):
        layers[5]
    with pytest.raises(IndexError, match="out of range"):
        layers[7] = nn.ReLU()
    with pytest.raises(NotImplementedError, match="ModuleList only holds Modules and has no forward"):
        layers(Variable(np.ones(2)))


def test_a_module_dict_is_a_dict():
    heads = nn.ModuleDict()
    heads["a"] = nn.Linear(2, 2)
    heads.update({"b": nn.ReLU()})
    assert list(heads) == ["a", "b"] and "a" in heads and len(heads) == 2
    assert [type(m).__name__ for m in heads.values()] == ["Linear", "ReLU"]
    del heads["a"]
    assert list(heads.keys()) == ["b"] and list(heads.parameters()) == []
    with pytest.raises(KeyError, match=r"ModuleDict has no module 'a'; it has \['b'\]"):
        heads["a"]
    with pytest.raises(TypeError, match=r"ModuleDict\[0\] = ...: a name is a str, got 0"):
        heads[0] = nn.ReLU()
    with pytest.raises(DTypeError, match="expected a Module for 'c', got an int"):
        heads["c"] = 3


def test_the_containers_name_the_layers_as_torch_does():
    torch = pytest.importorskip("torch")
    mine = nn.ModuleList([nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1)])
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine_d = nn.ModuleDict({"x": nn.Linear(2, 2)})
    theirs_d = torch.nn.ModuleDict({"x": torch.nn.Linear(2, 2)})
    assert list(mine_d.state_dict()) == list(theirs_d.state_dict())


@pytest.mark.parametrize("plain", [list, tuple, lambda ms: {str(i): m for i, m in enumerate(ms)}])
def test_layers_in_a_plain_container_are_not_registered_and_the_student_is_told(plain):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(2, 2)
            self.hidden = plain([nn.Linear(2, 2), nn.Dropout()])

    with pytest.warns(UserWarning, match=r"Net.hidden: the Modules in this .* are not registered.*nn.Module"):
        net = Net()
    assert list(net.state_dict()) == ["inp.weight", "inp.bias"]  # what the warning is about


def test_plain_containers_of_other_things_are_not_warned_about(recwarn):
    model = nn.Linear(2, 2)
    model.sizes = [2, 2]
    model.names = {"a": 1}
    model.empty = []
    assert not [w for w in recwarn.list if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("who", ["optimizer", "module"])
def test_zero_grad_set_to_none_drops_the_gradients_and_a_step_skips_them(who):
    torch = pytest.importorskip("torch")
    w = nn.Parameter(np.array([1.0, 2.0]))
    tw = torch.nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.float64))
    model = nn.Module()
    model.w = w
    opt = optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.1)
    topt = torch.optim.SGD([tw], lr=0.1, momentum=0.9, weight_decay=0.1)
    for step in range(3):
        (model if who == "module" else opt).zero_grad(set_to_none=True)
        topt.zero_grad(set_to_none=True)
        if step != 1:  # step 1: no backward reaches w, so neither library moves it
            (w * w).sum().backward()
            (tw * tw).sum().backward()
        opt.step()
        topt.step()
        np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-12)
    assert w._grad is not None
    with pytest.raises(DTypeError, match="zero_grad: set_to_none must be True or False"):
        opt.zero_grad(set_to_none="yes")
