"""Exercises that grade themselves: a registry of checks, and check("ch03.mul") for students.

Each chapter module (``ch02.py``, ``ch03.py``, ...) registers its exercises with ``@exercise``. A
check function gets the student's namespace (the notebook's variables) and raises ``CheckFailed``
with the case that failed, what was expected, what it got, and a hint. ``check(id)`` runs one
exercise and prints a short verdict; ``evaluate(id, namespace)`` returns it as a ``Verdict``.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..variable import Variable
from .floats import numpy_defaults

REGISTRY: dict[str, Exercise] = {}
RAISED = "your code raised an error"  # a verdict's case with nothing to expect, only what was raised
NOT_SOLVED = "not solved yet"
STUB_MESSAGE = "Your code here: replace this line with your solution."  # notebook.STUB raises it
STUB_HINT = "replace the `raise NotImplementedError(...)` line with your code and run it"


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its id (``ch03.mul``), what it asks, its points and its check."""

    id: str
    title: str
    points: int
    needs: tuple[str, ...]
    run: Callable[[dict], None] = field(repr=False)

    @property
    def grade_id(self) -> str:
        """The nbgrader grade_id of the exercise's solution cell (nbgrader allows no dots)."""
        return self.id.replace(".", "_")


def exercise(exercise_id: str, *, title: str, points: int, needs: tuple[str, ...] = ()) -> Callable:
    """Register the decorated function as the check of an exercise."""

    def register(run: Callable[[dict], None]) -> Callable[[dict], None]:
        REGISTRY[exercise_id] = Exercise(exercise_id, title, points, tuple(needs), run)
        return run

    return register


class CheckFailed(Exception):
    """Raised by a check: which case failed, what was expected, what the student's code gave, a hint."""

    def __init__(self, case: str, expected: Any = None, got: Any = None, hint: str = "") -> None:
        super().__init__(case)
        self.case, self.expected, self.got, self.hint = case, expected, got, hint


@dataclass
class Verdict:
    """The outcome of one exercise's checks, printed as a short friendly text."""

    exercise: Exercise
    passed: bool
    case: str = ""
    expected: Any = None
    got: Any = None
    hint: str = ""

    @property
    def points(self) -> int:
        """Points earned: all or nothing."""
        return self.exercise.points if self.passed else 0

    def __str__(self) -> str:
        ex = self.exercise
        if self.passed:
            return f"✔ {ex.id} passed ({ex.points}/{ex.points} points): {ex.title}"
        lines = [f"✘ {ex.id} not passed yet (0/{ex.points} points): {ex.title}", f"  case:     {self.case}"]
        if self.expected is not None or self.got is not None:
            if not self.case.endswith(RAISED):
                lines.append(f"  expected: {show(self.expected)}")
            lines.append(f"  got:      {show(self.got)}")
        if self.hint:
            lines.append(f"  hint:     {self.hint}")
        return "\n".join(lines)


def kits_own(answer: Any, methods: tuple = ("forward", "backward")) -> str:
    """The kit's name for answer if it is (or inherits these methods from) the kit's own code, else ''."""
    if isinstance(answer, type):
        for method in methods:
            owner = next((c for c in answer.__mro__ if method in c.__dict__), None)
            if owner is None or owner.__module__ == "varfunc.function":  # Function's own stubs
                continue
            if _from_the_kit(owner):
                return f"{owner.__module__}.{owner.__qualname__}.{method}"
            code = owner.__dict__[method]
            if _from_the_kit(code):  # in a class of one's own: forward = basic_ops.Mul.forward
                return f"{code.__module__}.{getattr(code, '__qualname__', method)}"
    if callable(answer) and _from_the_kit(answer):
        return f"{answer.__module__}.{getattr(answer, '__qualname__', type(answer).__name__)}"
    return ""


def _from_the_kit(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("varfunc.")


SECRET = "(not shown: work it out)"


def show(value: Any) -> str:
    """A short, deterministic text for a value in a verdict (arrays with 4 significant digits)."""
    data = value.data if isinstance(value, Variable) else value
    if isinstance(data, np.ndarray):
        return np.array2string(data, precision=4, separator=", ", threshold=20).replace("\n", " ")
    if isinstance(data, float):
        return f"{data:.6g}"
    return repr(data)


def lookup(exercise_id: str) -> Exercise:
    """The registered exercise, importing its chapter module (``ch03.x`` -> grading.ch03) on demand."""
    if exercise_id not in REGISTRY:
        chapter = exercise_id.split(".", 1)[0]
        try:
            importlib.import_module(f"{__package__}.{chapter}")
        except ModuleNotFoundError:
            pass
    if exercise_id not in REGISTRY:
        known = ", ".join(sorted(REGISTRY)) or "none loaded"
        raise KeyError(f"no exercise {exercise_id!r}; check the id in the cell (known: {known})")
    return REGISTRY[exercise_id]


def evaluate(exercise_id: str, namespace: dict) -> Verdict:
    """Run one exercise's checks against the names in namespace and return the verdict."""
    ex = lookup(exercise_id)
    missing = [name for name in ex.needs if name not in namespace]
    if missing:
        return Verdict(
            ex, False, f"{', '.join(missing)} not defined", hint="run the exercise cell above first"
        )
    for name in ex.needs:
        borrowed = kits_own(namespace[name])
        if borrowed:
            return Verdict(
                ex, False, f"{name} is the kit's own {borrowed}", hint=f"write {name} yourself, in the cell"
            )
    try:
        with numpy_defaults():  # a notebook's np.seterr(all="raise") must not fail a right answer
            ex.run(namespace)
    except CheckFailed as failure:
        return Verdict(ex, False, failure.case, failure.expected, failure.got, failure.hint)
    except NotImplementedError as error:
        if not _is_the_stubs(error):  # e.g. the kit's "MySigmoid has no backward()" for a misnamed method
            return raised_verdict(ex, error)
        return Verdict(ex, False, NOT_SOLVED, hint=error.hint if isinstance(error, NotSolved) else STUB_HINT)
    except Exception as error:  # noqa: BLE001 - the student's code may raise anything
        return raised_verdict(ex, error)
    return Verdict(ex, True)


def raised_verdict(ex: Exercise, error: Exception) -> Verdict:
    """The verdict for an error the student's code raised, naming the case that ran it (running())."""
    case = getattr(error, RUNNING_CASE, "")
    case = case if isinstance(case, str) else ""
    return Verdict(
        ex,
        False,
        f"{case}: {RAISED}" if case else RAISED,
        got=f"{type(error).__name__}: {error}",
        hint="run your code on that case's values yourself to see the traceback"
        if case
        else "run the exercise cell on a small example to see where it fails",
    )


MISSING_GRAD_OUTPUT = (
    "grad_output is missing: backward multiplies the local derivative by it (the chain rule)"
)
RUNNING_CASE = "varfunc_check_case"  # the attribute running() gives an error raised in its block


@contextmanager
def running(case: str) -> Iterator[None]:
    """Name the case that runs the block's code: an error raised there is reported with it (innermost)."""
    try:
        yield
    except CheckFailed:
        raise
    except Exception as error:
        if not hasattr(error, RUNNING_CASE):
            try:
                setattr(error, RUNNING_CASE, case)
            except AttributeError:  # an exception class with __slots__: the verdict names no case
                pass
        raise


def _is_the_stubs(error: NotImplementedError) -> bool:
    """True for the exercise cell's stub (nbgrader's, or a bare one) and for a prediction not made yet."""
    return isinstance(error, NotSolved) or is_stub_message(str(error))


def is_stub_message(message: str) -> bool:
    """True for the message of the stub's NotImplementedError: nbgrader's, or none (a bare raise)."""
    return message in ("", STUB_MESSAGE)


class NotSolved(NotImplementedError):
    """Raised by a check whose answers (a prediction's names) the exercise cell has not defined yet."""

    def __init__(self, missing: list[str], names: tuple[str, ...]) -> None:
        super().__init__(f"{', '.join(missing)} not defined yet")
        defined = [name for name in names if name not in missing]
        self.hint = (
            f"the cell defines {', '.join(defined)} but not {', '.join(missing)}: define every answer"
            if defined
            else STUB_HINT
        )


def require(ns: dict, *names: str) -> None:
    """NotSolved unless the exercise cell defined every one of names (its stub raises before it does)."""
    missing = [name for name in names if name not in ns]
    if missing:
        raise NotSolved(missing, names)


def check(exercise_id: str, namespace: dict | None = None) -> None:
    """Check one exercise against the notebook's variables and print the verdict."""
    print(evaluate(exercise_id, namespace if namespace is not None else _callers_namespace()))


def _callers_namespace() -> dict:
    try:
        from IPython import get_ipython  # only inside a notebook

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return shell.user_ns
    return inspect.stack()[2].frame.f_globals


# --- helpers for writing checks -------------------------------------------------------------------


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
    got_array = np.asarray(got.data if isinstance(got, Variable) else got)
    expected_array = np.asarray(expected)
    if got_array.shape != expected_array.shape:
        raise CheckFailed(f"{case} (shape)", expected_array.shape, got_array.shape, hint)
    close = np.isclose(got_array, expected_array, rtol=rtol, atol=atol, equal_nan=True)
    if not close.all():
        if at is not None:
            case += ", " + _worst(got_array, expected_array, close, rtol, atol, at)
        raise CheckFailed(case, SECRET if secret else expected_array, got_array, hint)


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


def as_numbers(name: str, value: Any) -> np.ndarray:
    """A predicted list of numbers as a float array; CheckFailed saying the format when it is not one."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise CheckFailed(
            name, "a list of numbers", value, "write the numbers as a list: [1.0, 2.0]"
        ) from None


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
