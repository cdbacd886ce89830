"""The checks' gradcheck (chapters 05 and 07): a verdict that shows gradcheck's table, and a line of
code that runs the failing case in a cell."""

from __future__ import annotations

from typing import Any

from ..errors import GradcheckError, ShapeError
from ..gradcheck import gradcheck
from .core import CheckFailed, raise_with_hint, running


def gradcheck_case(
    case: str, fn: Any, inputs: list, hint: str, snippet: str = "", shape_hint: str = ""
) -> None:
    """CheckFailed with gradcheck's first table lines when backward disagrees with central differences;
    shape_hint for a ShapeError or NumPy's shape mismatch raised meanwhile."""
    try:
        with running(case, snippet):
            gradcheck(fn, inputs)
    except GradcheckError as error:
        lines = str(error).splitlines()
        raise CheckFailed(case, "gradcheck passes", " | ".join(lines[:3]), hint) from None
    except ValueError as error:  # ShapeError is one too
        if shape_hint and (
            isinstance(error, ShapeError) or "mismatch" in str(error) or "shape" in str(error)
        ):
            raise_with_hint(error, shape_hint)
        raise


def cell_call(name: str, *shapes: tuple) -> str:
    """Code that runs name on operands of these shapes and backward, in a notebook cell (values made up)."""
    operands = ", ".join(f"Variable(np.full({shape}, {0.5 + k}))" for k, shape in enumerate(shapes))
    return f"y = {name}()({operands}); y.backward(np.ones(y.shape))"
