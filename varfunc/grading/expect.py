"""Helpers for writing checks: what a check raises (``CheckFailed``) and the comparisons that raise it.

A check compares the student's results with the expected ones (``expect_close``, ``expect_equal``,
``expect_raises``) and can refuse the kit's own code while the answer runs (``kit_code_refused``).
The chapters import these through ``core``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..variable import Variable

SECRET = "(not shown: work it out)"


class CheckFailed(Exception):
    """Raised by a check: which case failed, what was expected, what the student's code gave, a hint."""

    def __init__(self, case: str, expected: Any = None, got: Any = None, hint: str = "") -> None:
        super().__init__(case)
        self.case, self.expected, self.got, self.hint = case, expected, got, hint


def expect_close(
    case: str,
    got: Any,
    expected: Any,
    hint: str = "",
    rtol: float = 1e-6,
    atol: float = 1e-8,
    at: tuple[str, Any] | None = None,
    secret: bool = False,
) -> None:
    """CheckFailed unless got has expected's shape and values (within tolerance).

    at: (name, the input values), one per element: the verdict then names the worst element by its
    input and shows both values to 12 digits, where printed arrays would round them alike.
    secret: a prediction's answer, which the verdict must not show.
    """
    expect_one_value(case, got)
    got_array = np.asarray(got.data if isinstance(got, Variable) else got)
    expected_array = np.asarray(expected)
    if got_array.shape != expected_array.shape:
        if secret:  # a prediction's form, not its numbers: the hint about the numbers would mislead
            hint = f"write one number per element, as a list: the answer has shape {expected_array.shape}"
        raise CheckFailed(f"{case} (shape)", expected_array.shape, got_array.shape, hint)
    close = np.isclose(got_array, expected_array, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        if at is not None:
            case += ", " + _worst(got_array, expected_array, close, rtol, atol, at)
        raise CheckFailed(case, SECRET if secret else expected_array, got_array, hint)


def expect_one_value(case: str, got: Any, answer: bool = False) -> None:
    """CheckFailed where one array was expected but got is None (a function's missing return, or with
    answer, a variable still None) or is the outputs of a Function that returned several arrays."""
    if got is None:
        hint = (
            f"{case} is None: set it to the numbers you predict, as a list: [1.0, 2.0]"
            if answer
            else "got None: did the function forget `return`?"
        )
        raise CheckFailed(case, "an array" if not answer else "a list of numbers", None, hint)
    if isinstance(got, tuple) and any(isinstance(item, Variable) for item in got):
        creator = next((item.creator for item in got if isinstance(item, Variable) and item.creator), None)
        call = f"{type(creator).__name__}()(...)" if creator is not None else "the call"
        raise CheckFailed(
            f"{case}: {call} gave {len(got)} outputs (a tuple)",
            "one Variable",
            f"a tuple of {len(got)}",
            "forward returns one array here: return the result alone (return y), not a tuple",
        )


def _worst(got: Any, expected: Any, close: Any, rtol: float, atol: float, at: tuple[str, Any]) -> str:
    """'worst at a = -30: expected 1.87152459377e-13, got 0': the element furthest out of tolerance."""
    with np.errstate(invalid="ignore"):
        excess = np.abs(got - expected) - (atol + rtol * np.abs(expected))
    excess = np.where(close, -np.inf, np.where(np.isnan(excess), np.inf, excess)).reshape(-1)
    k = int(np.argmax(excess))
    name, inputs = at
    value, want, have = np.asarray(inputs).reshape(-1)[k], expected.reshape(-1)[k], got.reshape(-1)[k]
    return f"worst at {name} = {value:g}: expected {want:.12g}, got {have:.12g}"


def expect_equal(case: str, got: Any, expected: Any, hint: str = "", secret: bool = False) -> None:
    """CheckFailed unless got == expected (secret: a prediction's answer, not shown)."""
    if not _is_plain(got):
        raise CheckFailed(
            case,
            "Python's or NumPy's own values (str, int, list, ...)",
            f"an object of your own class {type(got).__name__}",
            "return plain values",
        )
    if not _same(got, expected):
        raise CheckFailed(case, SECRET if secret else expected, got, hint)


def quoted(value: Any) -> str:
    """The hint for None, True or False written in quotes (a string), or ""."""
    if isinstance(value, str) and value.strip() in ("None", "True", "False"):
        return f"write {value.strip()} without quotes: {value!r} is a string"
    return ""


def expect_no_text(name: str, value: Any) -> None:
    """CheckFailed where a predicted number is written in quotes ("32"), which NumPy reads as 32."""
    text = next((part for part in parts(value) if isinstance(part, str)), None)
    if text is not None:
        raise CheckFailed(name, "numbers", value, f"write numbers without quotes: {text!r} is a string")


def as_numbers(name: str, value: Any) -> np.ndarray:
    """A predicted list of numbers as a float array; CheckFailed saying the format when it is not one."""
    expect_one_value(name, value, answer=True)
    try:
        numbers = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise CheckFailed(
            name, "a list of numbers", value, "write the numbers as a list: [1.0, 2.0]"
        ) from None
    expect_no_text(name, value)
    return numbers


def _same(got: Any, expected: Any) -> bool:
    """got == expected as one yes or no: an array's elementwise answer (an array where None or a
    list was expected) is a wrong answer to show, not an error of the student's code."""
    try:
        return bool(got == expected)
    except (ValueError, ShapeError):  # NumPy's and a Variable's "truth value is ambiguous"
        return False


def _is_plain(value: Any) -> bool:
    """True for Python's, NumPy's and the kit's own values, and containers of them: their == is not
    the student's (a class of the student's could make == always true)."""
    return all(type(part).__module__.startswith(("builtins", "numpy", "varfunc")) for part in parts(value))


def parts(value: Any) -> Iterator:
    """value, and everything a list, tuple, set or dict in it holds (a dict's keys too)."""
    yield value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from parts(key)
            yield from parts(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from parts(item)


def expect_raises(case: str, error: type, call: Callable[[], Any], hint: str = "") -> None:
    """CheckFailed unless call() raises error."""
    try:
        call()
    except error:
        return
    except Exception as other:  # noqa: BLE001
        raise CheckFailed(case, error.__name__, f"{type(other).__name__}: {other}", hint) from None
    raise CheckFailed(case, f"{error.__name__} raised", "no error", hint)


@contextmanager
def kit_code_refused(case: str, hint: str, *targets: tuple) -> Iterator[None]:
    """While the block runs, each (owner, name) of the kit's code raises CheckFailed when it starts,
    however the answer reaches it (its name, a default argument, functools.partial, a dict, a function
    made from its code): an answer must not call the code it is asked to write.

    A profile function (sys.setprofile) watches every call the block makes for the kit's code objects;
    the exception it raises stops the call it saw (and switches the watching off).
    """
    refused = {getattr(owner, name).__code__: getattr(owner, name) for owner, name in targets}

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in refused:
            called, caller = refused[frame.f_code], frame.f_back.f_code
            raise CheckFailed(
                case,
                "your own code",
                f"{getattr(caller, 'co_qualname', caller.co_name)} calls the kit's "
                f"{called.__module__}.{called.__qualname__}",
                hint,
            )

    before = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield
    finally:
        sys.setprofile(before)
