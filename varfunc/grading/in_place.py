"""The checks' tests of how a Function keeps what backward needs: through save_for_backward, which
catches an in-place change to it (chapters 03 and 07), and on self, not on its class (chapter 07)."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InplaceError
from ..variable import Variable
from .core import CheckFailed, expect_close, running

IN_PLACE_HINT = (
    "keep the arrays backward needs with self.save_for_backward(...) and read them back with "
    "self.saved_tensors: an in-place change to a saved array then raises InplaceError, and backward "
    "never reads a changed value (an output kept as an attribute, self.y = y, changes with it)"
)


def expect_in_place_changes_caught(
    name: str, fn: Callable, arrays: list, grads: list, inputs: tuple = (), output_too: bool = False
) -> None:
    """Change each input of fn (named by inputs, else input 0, 1, ...), and its output, in place after
    forward: backward must raise InplaceError or give grads, those of fn's sum at the arrays as they were."""
    names = list(inputs or (f"input {i}" for i in range(len(arrays))))
    for changed, what in enumerate(names + (["the output"] if output_too else [])):
        leaves = [Variable(array.copy()) for array in arrays]
        middle = [leaf * 1.0 for leaf in leaves]  # intermediate Variables, so they may be changed in place
        running_case = f"{name}: {what} changed in place after forward, then backward"
        with running(running_case):
            out = fn(*middle)
            (middle + [out])[changed].add_(1.0)
        try:
            with running(running_case):
                out.sum().backward()
        except InplaceError as error:  # caught: right, unless by the kit's watch on attributes (dirty.py)
            if "as an attribute" in str(error):
                raise CheckFailed(
                    f"{name}: {what} kept", "save_for_backward", "self.a = a", IN_PLACE_HINT
                ) from None
            continue
        for input_name, leaf, expected in zip(names, leaves, grads):
            case = f"{running_case}: gradient for {input_name}"
            expect_close(case, leaf.grad, expected, IN_PLACE_HINT, rtol=1e-4, atol=1e-6)


def expect_nodes_independent(name: str, fn: Callable, first: list, second: list, grads_of: Callable) -> None:
    """Two nodes of one Function class in one graph, on other inputs: each input gets its own node's
    gradient, grads_of(*its arrays). What a node keeps on the class, not on self, the second overwrites."""
    leaves = [[Variable(array.copy()) for array in arrays] for arrays in (first, second)]
    with running(f"{name}: two nodes in one graph"):
        (fn(*leaves[0]).sum() + fn(*leaves[1]).sum()).backward()
    for label, nodes_leaves, arrays in (("first", leaves[0], first), ("second", leaves[1], second)):
        for index, (leaf, expected) in enumerate(zip(nodes_leaves, grads_of(*arrays))):
            expect_close(
                f"{name}: two nodes in one graph, the {label} node's input {index}",
                leaf.grad,
                expected,
                "keep what backward needs on self (save_for_backward), not on the class: each call is "
                "a node of its own",
            )
