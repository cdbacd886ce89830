"""Hints for the verdicts that no check writes: an answer not defined (a close name defined instead?),
the stub's NotImplementedError still raised (by which functions and methods?), and an error of the
kit's own, whose message already says the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from ..errors import VarfuncError

STUB_MESSAGE = "Your code here: replace this line with your solution."  # notebook.STUB raises it
STUB_HINT = "replace the `raise NotImplementedError(...)` line with your code and run it"


def missing_hint(missing: list[str], namespace: dict) -> str:
    """'run the exercise cell', or, where the notebook defined a close name (div for Div), to rename it."""
    own = [
        name
        for name, value in namespace.items()
        if callable(value) and getattr(value, "__module__", None) == namespace.get("__name__", "__main__")
    ]
    for name in missing:
        close = [other for other in own if other.lower() == name.lower()]
        close = close or difflib.get_close_matches(name, own, n=2)
        if close:
            found = " and ".join(close)
            return (
                f"the exercise cell must define {name}, with exactly that name (case-sensitive); this "
                f"notebook defines {found}: rename it {name}"
            )
    return "run the exercise cell above first"


def says_the_fix(error: Exception) -> bool:
    """True for the kit's own errors (read-only grad_output, 'Mul has no backward()'), which say the fix."""
    if isinstance(error, VarfuncError):
        return True
    last = next((tb for tb in _tracebacks(error) if tb.tb_next is None), None)
    module = last.tb_frame.f_globals.get("__name__", "") if last is not None else ""
    return (
        isinstance(error, NotImplementedError) and module.startswith("varfunc.") and ".grading" not in module
    )


def mistake_hint(error: Exception) -> str:
    """The hint for an error that a common slip raises ('' for any other error)."""
    if saved_nothing(error):
        return "self.saved_tensors is empty: forward must pass what backward reads to self.save_for_backward"
    if _needs_read_in_forward(error):
        return (
            "self.needs_input_grad is None while forward runs: _do_forward sets it once forward has "
            "returned (as v0.1.3 did), so read it in backward"
        )
    if isinstance(error, AttributeError) and str(error).startswith("'memoryview' object"):
        return (
            "an array's .data is NumPy's raw memory (a memoryview), not its numbers: .grad and "
            "saved tensors are arrays already, so use them as they are (p.grad, not p.grad.data)"
        )
    return ""


def saved_nothing(error: Exception) -> bool:
    """True for `a, b = self.saved_tensors` in a backward whose forward saved nothing."""
    if not (isinstance(error, ValueError) and str(error).startswith("not enough values to unpack")):
        return False
    last = next((tb for tb in _tracebacks(error) if tb.tb_next is None), None)
    owner = last.tb_frame.f_locals.get("self") if last is not None else None
    return last.tb_frame.f_code.co_name == "backward" and getattr(owner, "saved_tensors", None) == ()


def _needs_read_in_forward(error: Exception) -> bool:
    """True for a TypeError about None raised by a forward that reads self.needs_input_grad."""
    if not (isinstance(error, TypeError) and "NoneType" in str(error)):
        return False
    last = next((tb for tb in _tracebacks(error) if tb.tb_next is None), None)
    code = last.tb_frame.f_code if last is not None else None
    return code is not None and code.co_name == "forward" and "needs_input_grad" in code.co_names


def stub_hint(needs: tuple, namespace: dict, error: NotImplementedError) -> str:
    """STUB_HINT, naming the functions and methods that still raise the stub's error ('Mul.backward')."""
    left = [name for name in needs for name in _stubs_in(name, namespace.get(name))]
    frame = next((tb.tb_frame for tb in _tracebacks(error) if tb.tb_next is None), None)
    if not left and frame is not None and frame.f_code.co_name != "<module>":
        owner = frame.f_locals.get("self")
        left = [
            f"{type(owner).__name__}.{frame.f_code.co_name}" if owner is not None else frame.f_code.co_name
        ]
    if not left:
        return STUB_HINT
    if len(left) == 1:
        return f"{left[0]} still raises NotImplementedError: {STUB_HINT}"
    return (
        f"{', '.join(left[:-1])} and {left[-1]} still raise NotImplementedError: replace the "
        "`raise NotImplementedError(...)` line of each with your code and run it"
    )


def _stubs_in(name: str, answer: Any) -> list[str]:
    """name, or name.method for each method of the class answer, whose code is still the stub's."""
    if isinstance(answer, type):
        return [f"{name}.{method}" for method, code in vars(answer).items() if _is_stub_code(code)]
    return [name] if _is_stub_code(answer) else []


def _is_stub_code(function: Any) -> bool:
    """True for a function that raises the stub's NotImplementedError (nbgrader's message)."""
    code = getattr(function, "__code__", None)
    return code is not None and "NotImplementedError" in code.co_names and STUB_MESSAGE in code.co_consts


def _tracebacks(error: BaseException) -> Iterator:
    tb = error.__traceback__
    while tb is not None:
        yield tb
        tb = tb.tb_next
