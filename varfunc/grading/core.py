"""Exercises that grade themselves: a registry of checks, and check("ch03.mul") for students.

Each chapter module (``ch02.py``, ``ch03.py``, ...) registers its exercises with ``@exercise``. A
check function gets the student's namespace (the notebook's variables) and raises ``CheckFailed``
with the case that failed, what was expected, what it got, and a hint. ``check(id)`` runs one
exercise and prints a short verdict; ``evaluate(id, namespace)`` returns it as a ``Verdict``, and
``passes(id)`` says whether it passes. In a notebook's kernel, ``check`` and ``passes`` also fail an
exercise whose cell raised the last time it ran, or whose kernel's library code was replaced
(``session.py``). The helpers for writing checks are in ``expect.py``.
"""

from __future__ import annotations

import importlib
import inspect
import io
import reprlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..variable import Variable
from .advice import STUB_MESSAGE, missing_hint, mistake_hint, says_the_fix, stub_hint
from .expect import (  # noqa: F401 - the chapters import the helpers for writing checks from here
    SECRET,
    CheckFailed,
    as_numbers,
    expect_close,
    expect_equal,
    expect_no_text,
    expect_raises,
    kit_code_refused,
    parts,
    quoted,
)
from .floats import numpy_defaults
from .session import FailedRun, session, stale_case

# the same dict after importlib.reload(core): the chapter modules registered their exercises in it
REGISTRY: dict[str, Exercise] = globals().get("REGISTRY", {})
RAISED = "your code raised an error"  # a verdict's case with nothing to expect, only what was raised
NOT_SOLVED = "not solved yet"
RUN_THE_CELL = "run the exercise cell above (after replacing its raise line)"


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


def show(value: Any) -> str:
    """A short, deterministic text for a value in a verdict (arrays with 4 significant digits)."""
    data = value.data if isinstance(value, Variable) else value
    if isinstance(data, np.ndarray):
        return np.array2string(data, precision=4, separator=", ", threshold=20).replace("\n", " ")
    if isinstance(data, float):
        return f"{data:.6g}"
    return _SHORT.repr(data)


# What a verdict (and a grade report) shows of other values: a list of a million numbers, or an error
# message as long, is cut ('...'), where repr would copy all of it into the report.
_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = _SHORT.maxfrozenset = _SHORT.maxdict = 20
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = 2000


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
        return Verdict(ex, False, f"{', '.join(missing)} not defined", hint=missing_hint(missing, namespace))
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
        return Verdict(
            ex,
            False,
            NOT_SOLVED,
            hint=error.hint if isinstance(error, NotSolved) else stub_hint(ex.needs, namespace, error),
        )
    except Exception as error:  # noqa: BLE001 - the student's code may raise anything
        return raised_verdict(ex, error)
    return Verdict(ex, True)


def raised_verdict(ex: Exercise, error: Exception) -> Verdict:
    """The verdict for an error the student's code raised, naming the case that ran it (running())."""
    case, snippet, hint = (getattr(error, name, "") for name in (RUNNING_CASE, RUNNING_SNIPPET, RAISED_HINT))
    case = case if isinstance(case, str) else ""
    hint = hint or mistake_hint(error)
    if not hint and says_the_fix(error):
        hint = "the kit's error message (got) says what to change"
    elif not hint and snippet:
        hint = f"to see the traceback, run this in a new cell: {snippet}"
    elif not hint:
        hint = (
            "run your code on that case's values yourself to see the traceback"
            if case
            else "run the exercise cell on a small example to see where it fails"
        )
    return Verdict(
        ex, False, f"{case}: {RAISED}" if case else RAISED, got=f"{type(error).__name__}: {error}", hint=hint
    )


def raise_with_hint(error: Exception, hint: str) -> None:
    """Give the verdict of error, which the student's code raised, this hint (innermost wins)."""
    if not getattr(error, RAISED_HINT, ""):
        try:
            setattr(error, RAISED_HINT, hint)
        except AttributeError:  # __slots__
            pass


MISSING_GRAD_OUTPUT = (
    "grad_output is missing: backward multiplies the local derivative by it (the chain rule)"
)
ROUNDED_TO_FLOAT32 = (
    "right to about 7 digits only: something in backward was rounded to float32 (a cast, a float32 "
    "constant); keep the inputs' dtype"
)
RUNNING_CASE = "varfunc_check_case"  # the attribute running() gives an error raised in its block
RUNNING_SNIPPET = "varfunc_check_snippet"  # code that runs the case in a notebook cell, from running()
RAISED_HINT = "varfunc_check_hint"  # a check's own hint for the error (raise_with_hint)


@contextmanager
def running(case: str, snippet: str = "") -> Iterator[None]:
    """Name the case that runs the block's code: an error raised there is reported with it (innermost),
    and with snippet, code that runs the case in a cell (where the case names only random operands)."""
    try:
        yield
    except CheckFailed:
        raise
    except (Exception, KeyboardInterrupt) as error:  # check names the case that Ctrl-C interrupted
        if not hasattr(error, RUNNING_CASE):
            try:
                setattr(error, RUNNING_CASE, case)
                setattr(error, RUNNING_SNIPPET, snippet)
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
            else f"{', '.join(missing)} not defined: {RUN_THE_CELL}"
        )


_ANSWERS_READ: list[set[str]] = []  # the names require() read: one set per answers_read() block now open


@contextmanager
def answers_read() -> Iterator[set[str]]:
    """The names of the answers that the checks run in the block require()."""
    names: set[str] = set()
    _ANSWERS_READ.append(names)
    try:
        yield names
    finally:
        _ANSWERS_READ.remove(names)


def require(ns: dict, *names: str) -> None:
    """NotSolved unless the exercise cell defined every one of names (its stub raises before it does)."""
    for read in _ANSWERS_READ:
        read.update(names)
    missing = [name for name in names if name not in ns]
    if missing:
        raise NotSolved(missing, names)


def check(exercise_id: str, namespace: dict | None = None) -> None:
    """Check one exercise against the notebook's variables and print the verdict."""
    namespace = namespace if namespace is not None else _callers_namespace()
    try:
        verdict = notebook_verdict(exercise_id, namespace)
    except KeyboardInterrupt as interrupt:
        print(interrupted(lookup(exercise_id), interrupt))
        raise KeyboardInterrupt from None  # its traceback ends here, not deep in the checks
    print(verdict)


def passes(exercise_id: str, namespace: dict | None = None) -> bool:
    """True when the exercise passes its check, run without printing: for cells that use the answer."""
    namespace = namespace if namespace is not None else _callers_namespace()
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            return notebook_verdict(exercise_id, namespace).passed
    except KeyboardInterrupt as interrupt:  # Ctrl-C stops the cell, as in check: one line, no traceback
        print(interrupted(lookup(exercise_id), interrupt) + "; this cell stops here")
        raise KeyboardInterrupt from None


def notebook_verdict(exercise_id: str, namespace: dict) -> Verdict:
    """evaluate's verdict; in a kernel, a failure when library code was replaced or when the exercise's
    cell raised the last time it ran (the check would see an earlier run's code)."""
    ex, kernel = lookup(exercise_id), session()
    if kernel is None:
        return evaluate(exercise_id, namespace)
    changed = kernel.library_changed()
    if changed:
        return Verdict(ex, False, changed[0], hint=changed[1])
    stale = kernel.stale(ex.needs, namespace)
    if stale:
        return _stale_verdict(ex, stale)
    with answers_read() as answers:
        verdict = evaluate(exercise_id, namespace)
    changed = kernel.library_changed(while_checking=True)
    if changed:
        return Verdict(ex, False, changed[0], hint=changed[1])
    stale = kernel.stale(sorted(answers), namespace)
    return _stale_verdict(ex, stale) if stale else verdict


def _stale_verdict(ex: Exercise, stale: dict[str, FailedRun]) -> Verdict:
    """A failure: the exercise cell raised the last time it ran, before it bound these names anew."""
    case, hint = stale_case(stale)
    return Verdict(ex, False, case, hint=hint)


def interrupted(ex: Exercise, interrupt: KeyboardInterrupt) -> str:
    """'✘ ch03.mul interrupted while running your Mul on case ...: it did not finish (an endless loop?);
    not checked'."""
    case = getattr(interrupt, RUNNING_CASE, "")
    on_case = f" on case {case}" if isinstance(case, str) and case else ""
    return (
        f"✘ {ex.id} interrupted while running your {', '.join(ex.needs) or 'answer'}{on_case}: it did not "
        "finish (an endless loop?); not checked"
    )


def _callers_namespace() -> dict:
    try:
        from IPython import get_ipython  # only inside a notebook

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return shell.user_ns
    return inspect.stack()[2].frame.f_globals


session()  # in a notebook's kernel: the library snapshot, taken when varfunc.grading is imported
