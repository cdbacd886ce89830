"""The checks on the gradients a backward returns (docs/differences.md, row 21), mixed into Function.

v0.1.3 only counted them. Here each gradient for an input that requires grad must be an array of
that input's shape (a wrong one is a ShapeError that names the Function, the input and both shapes,
and says what is likely wrong), and one of another dtype is cast to the input's, as today's PyTorch
does. A Function hook's replacement gradients go through the same checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backend import as_gradient, is_array
from .errors import ShapeError, VarfuncError


class GradientChecks:
    """_checked_grad_input and its slow path, for Function."""

    __slots__ = ()

    def _checked_grad_input(
        self, grad_input: tuple, devices: tuple | None = None, returned: str = ""
    ) -> tuple:
        """grad_input with each needed gradient checked (an array of its input's shape) and cast to its
        input's dtype; a ShapeError otherwise (a VarfuncError for the wrong number of gradients).

        The tuple itself when every gradient already passes (the usual case); otherwise a cast copy
        from _fixed_grad_input, which also checks each gradient's device when devices are given (code
        outside the kit returned it). returned says who returned it, when backward did not ("hook 'h'
        on Mul() returned").
        """
        shapes = self.input_shapes
        if len(grad_input) != len(shapes):
            raise self._count_problem(grad_input, len(shapes))
        if devices is not None:
            return self._fixed_grad_input(grad_input, returned, devices)
        needs, dtypes = self.needs_input_grad, self.input_dtypes  # indexed: a zip of four tuples costs more
        for i, grad in enumerate(grad_input):
            if not needs[i]:
                continue
            # an array or a NumPy scalar (arithmetic on 0-d arrays gives one), of the input's shape and dtype
            if type(grad) is not np.ndarray and not isinstance(grad, np.generic):
                return self._fixed_grad_input(grad_input, returned)
            # is: the quick test; an equal dtype that is another object only takes the slow path
            if grad.shape != shapes[i] or grad.dtype is not dtypes[i]:
                return self._fixed_grad_input(grad_input, returned)
        return grad_input

    def _fixed_grad_input(self, grad_input: tuple, returned: str = "", devices: tuple | None = None) -> tuple:
        """Each needed gradient cast to its input's dtype (as torch does), or an error saying what is wrong.

        The slow path of _checked_grad_input: a CuPy array, another dtype, devices to check, or an error.
        """
        returned = returned or f"{self!r}.backward returned"
        fixed = list(grad_input)
        checks = zip(grad_input, self.needs_input_grad, self.input_shapes, self.input_dtypes)
        for index, (grad, needed, shape, dtype) in enumerate(checks):
            if not needed:
                continue
            if (is_array(grad) or isinstance(grad, np.generic)) and grad.shape == shape:
                device = devices[index] if devices else None
                fixed[index] = as_gradient(grad, dtype, f"{returned}, for input {index},", device)
                continue
            raise ShapeError(f"{returned} {self._grad_problem(index, grad, shape)}")
        return tuple(fixed)

    def _count_problem(self, grad_input: tuple, inputs: int) -> VarfuncError:
        """The error for a backward that returned more or fewer gradients than forward took inputs."""
        if len(grad_input) == 1 and grad_input[0] is None:  # backward returned None, wrapped as one
            got = "None (is `return` missing?)"
        else:
            listed = " (it returned a list: return a tuple)" if type(grad_input[0]) is list else ""
            got = f"{_count(len(grad_input), 'gradient')}{listed}"
        return VarfuncError(
            f"{self!r}.backward returned {got}, but forward took {_count(inputs, 'input')}; return "
            "one gradient per input, in a tuple (None for an input whose needs_input_grad is False)"
        )

    @staticmethod
    def _grad_problem(index: int, grad: Any, shape: tuple) -> str:
        """What is wrong with the gradient returned for input index (of shape), and what to do."""
        needed = f"for input {index}, which has shape {shape} and requires grad"
        if grad is None:
            return f"None {needed}; compute it (None is for inputs whose needs_input_grad is False)"
        if not (is_array(grad) or isinstance(grad, np.generic)):
            fix = (
                "backward works on arrays: return the array (its .data, not a Variable), computed "
                "from grad_output and self.saved_tensors, not from Variables outside the Function "
                "(a notebook's a, b)"
                if type(grad).__name__ == "Variable"
                else "return an array"
            )
            return f"{_a(type(grad).__name__)}, not an array, {needed}; {fix}"
        problem = f"a gradient of shape {grad.shape} {needed}"
        try:
            broadcast = np.broadcast_shapes(shape, grad.shape) == grad.shape
        except ValueError:
            broadcast = False
        if broadcast:
            return f"{problem}; sum it over the dimensions forward broadcast (sum_to_shape(grad, {shape}))"
        if len(shape) > 1 and grad.shape == shape[::-1]:
            return f"{problem}: the shapes are each other's transpose; look for a missing or an extra .T"
        return f"{problem}; return an array of the input's shape"


def _count(n: int, noun: str) -> str:
    """'1 input', '2 inputs'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _a(name: str) -> str:
    """'an int', 'a float': a type's name with its article."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
