"""Sizes that grow: a long index key prints short and is copied once; model[i] looks up one module.

Each test counts what grows (characters printed, modules visited, the key's form), never time.
"""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest
from graphs import Split

import varfunc.nn as nn
from varfunc import Function, ShapeError, Variable, function
from varfunc.viz import draw

N = 10_000


def leaf(n: int = N, *rest: int) -> Variable:
    return Variable(np.arange(float(n * int(np.prod(rest)))).reshape(n, *rest), requires_grad=True)


# --- a long index key ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, shown",
    [
        (list(range(N)), "array([0, 1, 2, ..., 9997, 9998, 9999], shape=(10000,))"),
        (np.arange(N), "array([0, 1, 2, ..., 9997, 9998, 9999], shape=(10000,))"),
        (np.arange(N) % 2 == 0, "array([True, False, True, ..., False, True, False], shape=(10000,))"),
        ([[k, 0] for k in range(N)], "array([0, 0, 1, ..., 0, 9999, 0], shape=(10000, 2))"),
        ((list(range(N)), slice(None)), "(array([0, 1, 2, ..., 9997, 9998, 9999], shape=(10000,)), slice("),
    ],
    ids=["list", "array", "mask", "nested list", "list and slice"],
)
def test_a_long_key_shows_its_ends_and_its_size(key, shown):
    """repr(x[list(range(n))]) held the whole list: 59 KB at n = 10**4, 7.9 MB at 10**6."""
    y = leaf(N, 2)[key]
    assert shown in repr(y.creator) and len(repr(y)) < 600
    label = draw(y.sum()).source
    assert shown[:30] in label and len(label) < 2000  # the graph's label starts the same way


def test_an_index_error_shows_a_long_key_short():
    with pytest.raises(ShapeError) as caught:
        leaf(N)[list(range(N + 1))]
    message = str(caught.value)
    assert "array([0, 1, 2, ..., 9998, 9999, 10000], shape=(10001,))" in message
    assert "index 10000 is out of bounds" in message and len(message) < 300


def test_a_long_list_that_numpy_refuses_is_shown_short_too():
    with pytest.raises(ShapeError) as caught:
        leaf(4)[[0.5] * N]
    assert "[0.5, 0.5, 0.5, ..., 0.5, 0.5, 0.5] (list of 10000)" in str(caught.value)
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(
    "key, shown",
    [
        (1, "Index(1)"),
        ((slice(1, None), 0), "Index((slice(1, None, None), 0))"),
        ((Ellipsis, 0), "Index((Ellipsis, 0))"),
        (None, "Index(None)"),
        ([0, 2, 0, 0], "Index([0, 2, 0, 0])"),
        (([0, 0, 3], [1, 1, 2]), "Index(([0, 0, 3], [1, 1, 2]))"),
        ([[0, 1], [2, 0]], "Index([[0, 1], [2, 0]])"),
        ([True, False] * 5, "Index([True, False, True, False, True, False, True, False, True, False])"),
        (np.array([3, 0, 3]), "Index(array([3, 0, 3]))"),
        (list(range(10)), "Index([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"),
        ([], "Index([])"),
    ],
)
def test_a_short_key_prints_as_it_always_did(key, shown):
    assert repr(leaf(10, 3)[key].creator) == shown


def test_a_long_list_key_is_read_into_an_array_once():
    """x[list] deep-copied the list (0.5 s at 10**6 ints) and NumPy converted it again in forward
    and in backward: it is now NumPy's array of it, a copy made once."""
    key = list(range(N - 1, -1, -1))
    function = leaf()[key].creator
    assert isinstance(function.key, np.ndarray) and function.key.dtype.kind == "i"
    assert function.key.tolist() == key


def _mutate(key: object) -> None:
    """Change the caller's key in place, as a student might after indexing with it."""
    if isinstance(key, tuple):
        _mutate(key[0])
    elif isinstance(key, Variable):
        key.data[...] = 0
    elif isinstance(key, np.ndarray):
        key[...] = 0
    elif isinstance(key[0], list):
        key[0][0] = 0
        key[-1] = [0, 0]
    else:
        key[:] = [0] * len(key)


@pytest.mark.parametrize(
    "make",
    [
        lambda: [3, 1, 3],
        lambda: [k % 4 for k in range(1, 30)],
        lambda: [[3, 1], [2, 3]],
        lambda: [[3, 1]] * 12,
        lambda: ([3, 1, 2], [1, 2, 2]),
        lambda: ([k % 4 for k in range(1, 30)], [k % 3 for k in range(1, 30)]),
        lambda: np.array([3, 1, 3]),
        lambda: Variable(np.array([3, 1, 3])),
        lambda: [True, False, True, True],
        lambda: [k != 0 for k in range(4)],
    ],
    ids=["short", "long", "nested", "nested long", "pair", "long pair", "array", "Variable", "mask", "mask2"],
)
def test_changing_the_key_after_indexing_does_not_move_the_gradient(make):
    """Backward scatters through the key as it was when x[key] ran, not as the caller changed it."""
    x, key = leaf(4, 3), make()
    weights = np.random.default_rng(0).standard_normal(x[make()].shape)
    y = x[key]
    _mutate(key)
    (y * Variable(weights)).sum().backward()
    expected = np.zeros((4, 3))
    np.add.at(expected, _numpy_key(make()), weights)
    np.testing.assert_array_equal(x.grad, expected)


def _numpy_key(key: object) -> object:
    if isinstance(key, tuple):
        return tuple(_numpy_key(k) for k in key)
    return np.asarray(key.data if isinstance(key, Variable) else key)


LONG = 30  # more entries than a key shows in full: stored as an array


@pytest.mark.parametrize(
    "key",
    [
        [0, 2, 0, 0],
        [-1, 0, -1],
        [k % 4 - 4 for k in range(LONG)],
        [[k % 4, 3 - k % 4] for k in range(LONG)],
        [[0, 1], [2, 0]],
        ([k % 4 for k in range(LONG)], [k % 3 for k in range(LONG)]),
        ([k % 4 for k in range(LONG)], slice(None)),
        (slice(None), [k % 3 for k in range(LONG)]),
        (Ellipsis, [k % 3 for k in range(LONG)]),
        (None, [k % 4 for k in range(LONG)]),
        [True, False, True, True],
        np.array([k % 4 for k in range(LONG)]),
        Variable(np.array([k % 4 for k in range(LONG)])),
        [Variable(np.array(k % 4)) for k in range(LONG)],
        [np.int64(k % 4) for k in range(LONG)],
        [],
    ],
)
def test_indexing_with_a_list_matches_torch(key):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(1).standard_normal((4, 3))
    weights_for = lambda shape: np.random.default_rng(2).standard_normal(shape)  # noqa: E731
    x = Variable(data.copy(), requires_grad=True)
    y = x[key]
    (y * Variable(weights_for(y.shape))).sum().backward()
    t = torch.tensor(data, requires_grad=True)
    u = t[_torch_key(key, torch)]
    (u * torch.tensor(weights_for(tuple(u.shape)))).sum().backward()
    np.testing.assert_array_equal(y.data, u.detach().numpy())
    np.testing.assert_array_equal(x.grad, t.grad.numpy())


def _torch_key(key: object, torch: object) -> object:
    """The key for a torch tensor: lists and arrays as tensors (torch reads a list of lists as a tuple)."""
    if isinstance(key, tuple):
        return tuple(_torch_key(k, torch) for k in key)
    if isinstance(key, (list, np.ndarray, Variable)):
        array = np.asarray(key.data if isinstance(key, Variable) else key)
        return torch.from_numpy(array.astype(np.int64) if array.size == 0 else array)
    return key


# --- model[i] ----------------------------------------------------------------------------------


class CountingDict(OrderedDict):
    """A module registry that counts the names and modules read by walking it."""

    visited = 0

    def _count(self, entries):
        for entry in entries:
            CountingDict.visited += 1
            yield entry

    def __iter__(self):
        return self._count(super().__iter__())

    def keys(self):
        return list(self._count(super().keys()))

    def values(self):
        return list(self._count(super().values()))

    def items(self):
        return list(self._count(super().items()))


def counting(container: nn.Module) -> nn.Module:
    object.__setattr__(container, "_modules", CountingDict(container._modules))
    CountingDict.visited = 0
    return container


def layers(n: int) -> list:
    return [nn.ReLU() for _ in range(n)]


@pytest.mark.parametrize(
    "kind", [nn.ModuleList, lambda ms: nn.Sequential(*ms)], ids=["ModuleList", "Sequential"]
)
def test_model_i_walks_only_up_to_the_index(kind):
    """[ml[i] for i in range(len(ml))] listed every module per lookup: 3.5 s for 10**4 modules."""
    modules = layers(100)
    container = counting(kind(modules))
    assert container[3] is modules[3] and CountingDict.visited == 4  # was 100: a list of them all
    assert [container[i] for i in range(100)] == modules
    assert container[-1] is modules[-1] and container[np.int64(5)] is modules[5]


def test_a_sequential_with_its_own_names_indexes_by_position():
    modules = layers(100)
    model = counting(nn.Sequential(OrderedDict((f"layer{k}", m) for k, m in enumerate(modules))))
    assert model[3] is modules[3] and CountingDict.visited == 4
    assert model[:][3] is modules[3] and model[2:][0] is modules[2]  # a slice keeps the names "2", ...


def test_model_i_stays_the_ith_module_whatever_the_names():
    a, b, c, d, e, f = layers(6)
    ml = nn.ModuleList([a, b, c])
    delattr(ml, "0")  # names "1", "2"
    ml.add_module("0", d)  # names "1", "2", "0": ml[0] is b, not the module called "0"
    assert [ml[0], ml[1], ml[2], ml[-1]] == [b, c, d, d]
    ml[1] = e  # replaces c, the module at position 1
    assert list(ml) == [b, e, d] and list(ml._modules) == ["1", "2", "0"]
    ml.insert(0, f)  # numbered afresh, as torch does
    assert list(ml._modules) == ["0", "1", "2", "3"] and [ml[k] for k in range(4)] == [f, b, e, d]
    extra = nn.ModuleList([a, b])
    extra.tail = c  # an attribute that is a Module is registered under its own name
    assert extra[2] is c and extra[-1] is c
    extra.tail = None  # and leaves again
    assert len(extra) == 2 and extra[-1] is b


def test_model_i_after_the_last_module_leaves_and_another_is_appended():
    a, b, c, d = layers(4)
    ml = nn.ModuleList([a, b, c])
    delattr(ml, "2")  # the last ones leave: the others keep their numbers
    delattr(ml, "1")
    ml.append(d)
    assert list(ml._modules) == ["0", "1"] and [ml[0], ml[1]] == [a, d]


def test_a_copied_container_indexes_the_same():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    other = copy.deepcopy(model)
    assert [type(other[k]).__name__ for k in range(3)] == ["Linear", "ReLU", "Linear"]
    np.testing.assert_array_equal(other[2].weight.data, model[2].weight.data)
    assert other[1] is not model[1]


# --- a Function with many outputs ---------------------------------------------------------------


def outputs_looked_at(monkeypatch, k: int) -> int:
    """How many arrays forward's output checks compare with, for a Function with k outputs."""
    looked = []
    original = function.is_one_of
    monkeypatch.setattr(
        function, "is_one_of", lambda x, items: looked.append(len(items)) or original(x, items)
    )
    x = Variable(np.arange(float(k)), requires_grad=True)
    outputs = Split()(x)
    assert len(outputs) == k and outputs[-1].data.tolist() == [k - 1.0]
    return sum(looked)


def test_a_function_with_k_outputs_checks_each_output_once(monkeypatch):
    """Each output was compared with every output before it (k * k / 2): 0.3 s of forward at k = 4000."""
    small, large = outputs_looked_at(monkeypatch, 500), outputs_looked_at(monkeypatch, 2000)
    assert large <= 4 * small + 10, (small, large)


def test_an_array_returned_twice_is_still_copied():
    class Twice(Function):
        def forward(self, a):
            b = a * 2
            return b, a + 1, b

    first, _, again = Twice()(Variable(np.ones(2), requires_grad=True))
    first.data[0] = 5.0
    assert again.data.tolist() == [2.0, 2.0], "two outputs shared one array"
