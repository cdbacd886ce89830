"""Clear errors for bad shapes and dims: the error class, the op's name and the shapes involved."""

from __future__ import annotations

import numpy as np
import pytest

import varfunc as vf
from varfunc import Variable
from varfunc.errors import DTypeError, ShapeError


def V(*shape):
    return Variable(np.ones(shape))


ERRORS = [
    ("matmul", lambda: V(2, 3) @ V(4, 2), ShapeError, ["matmul", "(2, 3)", "(4, 2)"]),
    ("matmul-1d", lambda: V(3).matmul(V(4)), ShapeError, ["matmul", "(3,)", "(4,)"]),
    ("matmul-batch", lambda: V(2, 3, 4) @ V(3, 4, 2), ShapeError, ["matmul", "(2, 3, 4)", "(3, 4, 2)"]),
    ("mm", lambda: V(2, 3).mm(V(4, 2)), ShapeError, ["mm", "(2, 3)", "(4, 2)"]),
    ("mm-ndim", lambda: V(2, 3).mm(V(3)), ShapeError, ["mm", "(2, 3)", "(3,)"]),
    ("mv", lambda: V(2, 3).mv(V(4)), ShapeError, ["mv", "(2, 3)", "(4,)"]),
    ("matmul-0d", lambda: V() @ V(3), ShapeError, ["matmul: got a 0-dim operand", "()", "use * for scalars"]),
    ("addmm-ndim", lambda: V(2, 3).addmm(V(2), V(3, 3)), ShapeError, ["addmm: expects two matrices", "(2,)"]),
    (
        "addmv-ndim",
        lambda: V(2).addmv(V(2, 3, 1), V(3)),
        ShapeError,
        ["addmv: expects a matrix and a vector"],
    ),
    ("bmm", lambda: V(2, 3, 4).bmm(V(3, 4, 2)), ShapeError, ["bmm", "(2, 3, 4)", "(3, 4, 2)"]),
    ("dot", lambda: V(3).dot(V(4)), ShapeError, ["dot", "(3,)", "(4,)"]),
    ("addmm", lambda: V(3, 3).addmm(V(2, 3), V(3, 3)), ShapeError, ["addmm", "(3, 3)", "(2, 3)"]),
    ("addmm-inner", lambda: V(2, 3).addmm(V(2, 4), V(3, 3)), ShapeError, ["addmm", "(2, 4)", "(3, 3)"]),
    ("addmv", lambda: V(2).addmv(V(2, 3), V(4)), ShapeError, ["addmv", "(2, 3)", "(4,)"]),
    ("addr", lambda: V(2, 3).addr(V(2, 1), V(3)), ShapeError, ["addr", "(2, 1)", "(3,)"]),
    (
        "baddbmm",
        lambda: V(2, 2, 2).baddbmm(V(2, 2, 3), V(3, 3, 2)),
        ShapeError,
        ["baddbmm", "(2, 2, 3)", "(3, 3, 2)"],
    ),
    ("view", lambda: V(2, 3).view(4, 2), ShapeError, ["view", "(2, 3)", "(4, 2)"]),
    ("cat", lambda: vf.cat([V(2, 3), V(3, 2)]), ShapeError, ["cat", "(2, 3)", "(3, 2)"]),
    ("cat-ndim", lambda: vf.cat([V(2, 3), V(3)]), ShapeError, ["cat", "(2, 3)", "(3,)"]),
    ("cat-empty", lambda: vf.cat([]), ValueError, ["cat"]),
    ("expand", lambda: V(2, 3).expand(4, 3), ShapeError, ["expand", "(2, 3)", "(4, 3)"]),
    ("expand-fewer-dims", lambda: V(2, 3).expand(3), ShapeError, ["expand", "(2, 3)", "(3,)"]),
    ("add", lambda: V(2, 3) + V(4), ShapeError, ["add", "(2, 3)", "(4,)"]),
    ("sub", lambda: V(2, 3) - V(2, 2), ShapeError, ["sub", "(2, 3)", "(2, 2)"]),
    ("mul", lambda: V(2, 3) * V(3, 2), ShapeError, ["mul", "(2, 3)", "(3, 2)"]),
    ("div", lambda: V(2, 3) / V(4), ShapeError, ["div", "(2, 3)", "(4,)"]),
    ("pow", lambda: V(2, 3) ** V(4), ShapeError, ["pow", "(2, 3)", "(4,)"]),
    ("cmax", lambda: V(2, 3).cmax(V(4)), ShapeError, ["cmax", "(2, 3)", "(4,)"]),
    ("cmin", lambda: V(2, 3).cmin(V(4)), ShapeError, ["cmin", "(2, 3)", "(4,)"]),
    ("add_", lambda: V(1, 3).clone().add_(V(2, 3)), ShapeError, ["Add", "(1, 3)", "(2, 3)"]),
    ("sum-dim", lambda: V(2, 3).sum(2), ShapeError, ["sum", "dim 2", "2 dimension"]),
    ("mean-dim", lambda: V(2, 3).mean(-3), ShapeError, ["mean", "dim -3"]),
    ("max-dim", lambda: V(2, 3).max(5), ShapeError, ["max", "dim 5"]),
    ("min-dim", lambda: V(2, 3).min(2), ShapeError, ["min", "dim 2"]),
    ("median-dim", lambda: V(2, 3).median(2), ShapeError, ["median", "dim 2"]),
    ("mode-dim", lambda: V(2, 3).mode(2), ShapeError, ["mode", "dim 2"]),
    ("softmax-dim", lambda: V(2, 3).softmax(2), ShapeError, ["softmax", "dim 2"]),
    ("log_softmax-dim", lambda: V(2, 3).log_softmax(-3), ShapeError, ["log_softmax", "dim -3"]),
    ("transpose-dim", lambda: V(2, 3).transpose(0, 2), ShapeError, ["transpose", "dim 2"]),
    ("permute", lambda: V(2, 3).permute(0, 0), ShapeError, ["permute", "(2, 3)"]),
    ("squeeze-dim", lambda: V(2, 3).squeeze(2), ShapeError, ["squeeze", "dim 2"]),
    ("unsqueeze-dim", lambda: V(2, 3).unsqueeze(3), ShapeError, ["unsqueeze", "dim 3"]),
    ("cat-dim", lambda: vf.cat([V(2, 3), V(2, 3)], 2), ShapeError, ["cat", "dim 2"]),
    ("index", lambda: V(2, 3)[5], ShapeError, ["5", "(2, 3)"]),
    ("index-second-dim", lambda: V(2, 3)[0, 3], ShapeError, ["3", "(2, 3)"]),
    ("index-fancy", lambda: V(2, 3)[[0, 7]], ShapeError, ["7", "(2, 3)"]),
    ("index-too-many", lambda: V(2, 3)[0, 0, 0], ShapeError, ["(2, 3)"]),
    ("t", lambda: V(2, 3, 4).t(), ValueError, ["t", "(2, 3, 4)"]),
    ("max-empty", lambda: V(0, 3).max(), ShapeError, ["max", "(0, 3)"]),
    ("max-empty-dim", lambda: V(0, 3).max(0), ShapeError, ["max", "dim 0, which has size 0", "(0, 3)"]),
    ("median-empty", lambda: V(0).median(), ShapeError, ["median", "empty", "(0,)"]),  # torch: nan
    ("max-two-dims", lambda: V(2, 3).max((0, 1)), ShapeError, ["max: takes one dim", "(0, 1)"]),
    ("median-two-dims", lambda: V(2, 3).median((1, 0)), ShapeError, ["median: takes one dim", "(1, 0)"]),
    ("squeeze-dim-twice", lambda: V(1, 1).squeeze((0, -2)), ShapeError, ["squeeze", "(0, -2)", "twice"]),
    ("permute-dim-too-big", lambda: V(2, 3, 4).permute(3, 1, 2), ShapeError, ["permute", "(3, 1, 2)"]),
    ("permute-dim-too-small", lambda: V(2, 3).permute(0, -3), ShapeError, ["permute", "(0, -3)"]),
    ("index-step-0", lambda: V(2, 3)[::0], ShapeError, ["slice step cannot be zero", "(2, 3)"]),
    ("type-unknown", lambda: V(2).type("foo"), DTypeError, ["type: 'foo' is not a dtype"]),
    ("type-strings", lambda: V(2).type("U3"), DTypeError, ["type: 'U3' is not a dtype"]),
]


@pytest.mark.parametrize(
    ("call", "error", "words"), [pytest.param(c, e, w, id=name) for name, c, e, w in ERRORS]
)
def test_bad_shapes_raise_clear_errors(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_item_assignment_is_refused():
    with pytest.raises(TypeError, match="item assignment"):
        V(2)[0] = 1.0


def test_inplace_mul_by_variable_is_refused():
    with pytest.raises(TypeError, match="mul_"):
        V(2).clone().mul_(V(2))


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda x: x + None, ["add: got None", "forget to return"]),
        (lambda x: None - x, ["rsub: got None", "forget to return"]),
        (lambda x: x * "a", ["mul: got 'a'"]),
        (lambda x: x.mm(1j), ["mm: got 1j"]),
        (lambda x: x @ {1: 2}, ["matmul: got {1: 2}"]),
        (lambda x: x / object(), ["div: got an instance of object"]),
    ],
)
def test_an_operand_that_is_not_data_is_named_with_its_op(call, words):
    x = V(2, 2)
    with pytest.raises(DTypeError) as caught:
        call(x)
    message = str(caught.value)
    assert all(w in message for w in words), message
    assert "0x" not in message and "takes a Variable, a NumPy array" in message
    assert x.creator.requires_grad and x.data.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_unsqueeze_out_of_range_names_the_variables_own_dims():
    x = Variable(np.ones((2, 3)))
    with pytest.raises(
        vf.ShapeError, match=r"dim 3 is out of range for a Variable with 2 dimension\(s\); .* from -3 to 2"
    ):
        x.unsqueeze(3)
    assert x.unsqueeze(2).shape == (2, 3, 1) and x.unsqueeze(-3).shape == (1, 2, 3)


def test_bmm_refuses_batch_sizes_that_differ_as_torch_does():
    a, b = Variable(np.ones((2, 2, 3))), Variable(np.ones((1, 3, 2)))
    with pytest.raises(
        vf.ShapeError, match=r"bmm: shapes \(2, 2, 3\) and \(1, 3, 2\) have different batch sizes"
    ):
        a.bmm(b)
    assert (a @ b).shape == (2, 2, 2)  # matmul broadcasts them


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m - m,
        lambda m: m.sub(m),
        lambda m: m - True,
        lambda m: np.True_ - m,
        lambda m: m.clone().sub_(m),
        lambda m: m.clone().sub_(True),
    ],
    ids=["variables", "sub", "constant", "reflected", "in place", "in place constant"],
)
def test_a_boolean_minus_a_boolean_is_refused_with_the_ways_to_say_it(call):
    """NumPy's own TypeError named neither the kit's op nor what to write instead."""
    mask = Variable(np.array([True, False]))
    with pytest.raises(DTypeError, match=r"sub: boolean data minus boolean data .* a & ~b, .* a \^ b"):
        call(mask)
    assert mask.data.tolist() == [True, False]
    assert (mask - 1).data.tolist() == [0, -1] and ((mask & ~mask).data == [False, False]).all()


@pytest.mark.parametrize(
    "call",
    [lambda a: a.sub_(Variable(np.array([0.5, 0.5]))), lambda a: a.sub_(0.5)],
    ids=["variable", "constant"],
)
def test_an_in_place_sub_that_cannot_be_cast_says_so_not_boolean(call):
    """Integer data minus a float in place: the cast is refused, not blamed on boolean data."""
    ints = Variable(np.array([1, 2])).clone()
    with pytest.raises(DTypeError, match=r"in-place result cannot be stored in the Variable's int64 data"):
        call(ints)
    assert ints.data.tolist() == [1, 2]


def test_an_in_place_op_on_read_only_data_is_refused_before_writing():
    array = np.array([1.0, 2.0])
    array.flags.writeable = False  # (a view NumPy hands out read-only, e.g. np.broadcast_to's)
    x = Variable(array, requires_grad=False)
    with pytest.raises(
        vf.InplaceError, match=r"^AddConstant: the Variable's data is read-only; clone\(\) it first"
    ):
        x.add_(1)
    assert x.data.tolist() == [1.0, 2.0] and x._version[0] == 0
    assert x.clone().add_(1).data.tolist() == [2.0, 3.0]
