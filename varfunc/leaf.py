"""Leaf: the graph node of a Variable the user created; backward adds its gradient into ``.grad``."""

from __future__ import annotations

import weakref
from typing import Any

from .backend import check_flag
from .errors import DTypeError
from .function import Function


class Leaf(Function):
    """The creator of a user-created Variable: the end of every backward path (v0.1.1 to v0.1.3)."""

    def __init__(self, variable: Any, requires_grad: bool) -> None:
        # A weak reference: the Variable holds its Leaf as creator, and a strong reference back
        # would be a cycle that only the garbage collector could free (v0.1.3 had that cycle).
        self._variable = weakref.ref(variable)
        self.output_ids = {id(variable): 0}
        self.previous_functions = ()
        self.needs_input_grad = ()
        self.requires_grad = requires_grad

    @property
    def variable(self) -> Any:
        """The Variable this Leaf belongs to (None once that Variable has been freed)."""
        return self._variable()

    def _do_forward(self, *input: Any) -> Any:
        raise NotImplementedError("a Leaf is made by Variable(...), it is never called")

    def _do_backward(self, *grad_output: Any) -> tuple:
        """Run the hooks, then add the summed gradient into variable.grad once (the first is kept)."""
        if self.backward_hooks:
            grad_output = self._run_variable_hooks(grad_output)
            self._run_function_hooks((), grad_output)  # a Leaf has no inputs: grad_input is ()
            grad_output = (grad_output[0].copy(),)  # a hook may have kept the array: .grad gets its own
        (grad,) = grad_output
        variable = self._variable()
        if variable is not None and self.requires_grad:  # frozen after forward: no .grad, as in torch
            variable._accumulate_grad(grad)
        return ()


def leaf_requires_grad(data: Any, requested: bool | None) -> bool:
    """A leaf's requires_grad: the request, or by default True for floats and False otherwise."""
    is_float = data.dtype.kind == "f"
    if requested is None:
        return is_float
    check_flag("Variable", "requires_grad", requested)
    if requested and not is_float:
        raise DTypeError(
            f"Variable: {data.dtype} data cannot require grad (gradients exist only for "
            "floating-point data); convert it with data.astype(np.float64), or leave "
            "requires_grad at its default"
        )
    return bool(requested)
