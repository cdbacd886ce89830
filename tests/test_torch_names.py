"""The names today's PyTorch gives the same nodes (``grad_fn.name()``), checked against torch 2.13.

Chapter 10 shows them beside v0.1's class names; varfunc/modern.py maps one to the other.
Skipped when torch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import varfunc as vf
from varfunc import Variable

MODERN_NAME_CASES = [
    "x * 2",
    "2 * x",
    "x - 1",
    "1 - x",
    "x / 2",
    "2 / x",
    "x ** 2",
    "2 ** x",
    "x[0]",
    "x[1:]",
    "x[[0, 1]]",
    "x[None]",
    "x[:, 0]",
    "x[:]",
    "x[...]",
    "x[0, 1:]",
    "x[1:, 0]",
    "x[..., 0]",
    "x[0, None]",
    "x[0, [1, 2]]",
    "x[:, ::2]",
    "x[-1]",
    "x[x.data > 2]",
    "-x",
    "x.exp()",
    "x.sum()",
    "x.sum(0)",
    "x.mean()",
    "x.mean(1)",
    "x.max()",
    "x.max(1)[0]",
    "x.min()",
    "x.min(1)[0]",
    "x.median()",
    "x.median(1)[0]",
    "x[None].squeeze()",
    "x[None].squeeze(0)",
    "x.clamp(min=0.5)",
    "x.relu()",
    "x.transpose(0, 1)",
    "x.t()",
    "x[0].t()",
    "x % 2",
    "x % x",
    "2 % x",
    "x.fmod(2)",
    "x.fmod(x)",
    "x // 2",
    "x // x",
]
# The kit's cmax(c) / cmin(c) are today's clamp(min=c) / clamp(max=c).
MODERN_NAME_TWINS = [("x.cmax(0.5)", "x.clamp(min=0.5)"), ("x.cmin(0.5)", "x.clamp(max=0.5)")]


@pytest.mark.oracle
@pytest.mark.parametrize(
    "expression, torch_expression", [(e, e) for e in MODERN_NAME_CASES] + MODERN_NAME_TWINS
)
def test_modern_names_match_torch_grad_fn_names(expression, torch_expression):
    torch = pytest.importorskip("torch")
    data = np.arange(1.0, 7.0).reshape(2, 3)
    ours = eval(expression, {"x": Variable(data)})
    theirs = eval(torch_expression, {"x": torch.tensor(data, requires_grad=True)})
    assert ours.creator.name() == theirs.grad_fn.name()


@pytest.mark.oracle
def test_modern_names_of_dropout_and_device_copies_match_torch():
    """They were DropoutBackward and CudaTransferBackward, names PyTorch never shows."""
    torch = pytest.importorskip("torch")
    data = np.arange(1.0, 7.0).reshape(2, 3)
    t = torch.tensor(data, requires_grad=True)
    from varfunc import nn

    dropped = nn.dropout(Variable(data), 0.5)
    assert dropped.creator.name() == torch.nn.functional.dropout(t, 0.5).grad_fn.name()
    copy_name = t.to(torch.float32).grad_fn.name()  # the node .cuda() and .cpu() make too
    for transfer in (vf.functions.CudaTransfer("cuda"), vf.functions.CpuTransfer()):
        assert transfer.name() == copy_name


def _torch_nodes(grad_fn) -> list:
    """The names of every node below grad_fn in torch's graph, AccumulateGrad left out, sorted."""
    names, todo, seen = [], [grad_fn], set()
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if "AccumulateGrad" not in fn.name():
            names.append(fn.name())
        todo.extend(f for f, _ in fn.next_functions)
    return sorted(names)


def _our_nodes(variable) -> list:
    """The same for the kit: each Function's modern name and the nodes it stands in for."""
    names, todo, seen = [], [variable.creator], set()
    while todo:
        fn = todo.pop()
        if fn in seen or not fn.previous_functions:  # a Leaf
            continue
        seen.add(fn)
        names += [fn.name(), *fn.merged_nodes()]
        todo.extend(prev for prev, _ in fn.previous_functions)
    return sorted(names)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "expression",
    ["2 / x", "x[0, 1:]", "x[None, 0]", "x[0, 1:, None]", "(x * 2 + x).sum()"]
    + [f"nn.linear({x}, w{b})" for x in ("x[0]", "x", "x[None]") for b in (", bias", "")],
)
def test_a_modern_drawing_names_every_node_torch_makes(expression):
    """Before: 2 / x was one MulBackward0 where torch draws ReciprocalBackward0 and MulBackward0, and
    F.linear hid its TBackward0 (and the views around a batch that is not 2-D)."""
    torch = pytest.importorskip("torch")
    from varfunc import nn

    data, weight, bias = np.arange(1.0, 7.0).reshape(2, 3), np.ones((4, 3)), np.ones(4)
    ours = eval(expression, {"x": Variable(data), "w": Variable(weight), "bias": Variable(bias), "nn": nn})
    tensors = {
        n: torch.tensor(a, requires_grad=True) for n, a in (("x", data), ("w", weight), ("bias", bias))
    }
    theirs = eval(expression, {**tensors, "nn": torch.nn.functional})
    assert _our_nodes(ours) == _torch_nodes(theirs.grad_fn)


def test_a_modern_picture_says_which_torch_nodes_one_node_stands_for():
    from varfunc import viz

    source = viz.draw(2 / Variable(np.ones(3)), style="modern").source
    assert '"MulBackward0#1\\n(torch: also ReciprocalBackward0)"' in source
    assert "torch: also" not in viz.draw(2 / Variable(np.ones(3))).source  # v0.1 style: its own classes
