"""What ``check`` knows about a notebook's kernel besides the notebook's variables.

Two things the variables alone do not show:

- a cell that raised the last time it ran (a typo, a NameError, an interrupt) left the names it
  binds as an earlier run left them: a check would grade code that is no longer in the cell;
- library code the notebook replaced (``Variable.__mul__ = ...``) breaks the checks' own code, and
  every later cell, until the kernel restarts (``grade`` finds it with the guard's ``Snapshot``); a
  module reloaded (``importlib.reload(varfunc.variable)``) does too, and the check says so.

The ``Session`` starts when varfunc.grading is imported in IPython, or at the first check: it takes a
``Snapshot`` and registers pre_run_cell and post_run_cell callbacks, once per shell. Outside IPython,
and in the grader's kernels (whose guard takes its own snapshot before the notebook runs), there is
no session and nothing changes.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .bindings import bound_names, names_bound_by
from .guard import GUARD_ENV, Snapshot
from .names import shortened

SESSION_ATTRIBUTE = "_varfunc_session"  # where a shell keeps its session (it outlives a re-import)
MISSING = object()  # what a name holds when it is not defined
RESTART_HINT = (
    "restart the kernel (Kernel > Restart) and run the cells again, without the lines that assign to "
    "NumPy, varfunc or builtin names: such a change applies to every later cell"
)
RELOAD_HINT = (
    "restart the kernel (Kernel > Restart) and run the cells again, without importlib.reload: a reload "
    "makes new classes and functions, while the Variables and the code made before it keep the old ones"
)


@dataclass(frozen=True)
class FailedRun:
    """The last run of a cell that binds a name, which raised before it bound the name anew."""

    error: str  # the exception's class name
    cell: int | None  # its execution count: In [cell]
    value: Any  # what the name held before that run, and still holds (MISSING: not defined)


@dataclass
class _Running:
    """A cell that runs now: what the names it binds held before, and what a cell run inside it raised."""

    info: Any  # IPython's ExecutionInfo, which its result carries too
    before: dict[str, Any]
    inner_error: BaseException | None = None
    shown_before: BaseException | None = None  # the error whose traceback IPython showed last


class Session:
    """One kernel's library snapshot, and the names whose cell raised the last time it ran."""

    def __init__(self, shell: Any, snapshot: Snapshot) -> None:
        self.shell = shell
        self.snapshot = snapshot
        self.failed: dict[str, FailedRun] = {}
        # the cells running now, outermost first: a cell magic (%%capture) runs its body as a cell
        # inside the student's cell
        self._running: list[_Running] = []

    def before_cell(self, info: Any) -> None:
        """IPython's pre_run_cell: remember what the names the cell binds hold now."""
        names = names_bound_by(getattr(info, "raw_cell", "") or "")
        before = {name: self.shell.user_ns.get(name, MISSING) for name in names}
        self._running.append(_Running(info, before, shown_before=_last_shown()))

    def after_cell(self, result: Any) -> None:
        """IPython's post_run_cell: a name the cell did not rebind before it raised keeps that failure.
        A cell run inside another passes its error to the outer cell, the one the student ran."""
        finished = self._finished(getattr(result, "info", None))
        if finished is None:  # it started before the session did, or IPython could not even read it
            return
        shown = _last_shown()  # IPython 8's %%time shows the traceback of its body, and the cell succeeds
        shown = shown if shown is not finished.shown_before else None
        errors = (finished.inner_error, result.error_before_exec, result.error_in_exec, shown)
        error = next((error for error in errors if error is not None), None)
        if self._running:  # finished ran inside the cell the student ran: that cell raised it
            outer = self._running[-1]
            if outer.inner_error is None:
                outer.inner_error = error
            for name, value in finished.before.items():
                outer.before.setdefault(name, value)
            return
        self._record(finished.before, error, result.execution_count, getattr(finished.info, "raw_cell", ""))

    def _finished(self, info: Any) -> _Running | None:
        """The running cell that info describes, taken off the stack (with any left open inside it)."""
        depths = [depth for depth, running in enumerate(self._running) if running.info is info]
        if info is None or not depths:
            return None
        finished = self._running[depths[-1]]
        del self._running[depths[-1] :]
        return finished

    def _record(
        self, before: dict[str, Any], error: BaseException | None, cell: int | None, source: str
    ) -> None:
        """Keep a failure for each name the cell did not bind anew before it raised; forget the rest."""
        for name, value in before.items():
            now = self.shell.user_ns.get(name, MISSING)
            if error is not None and now is value and not self._bound_before(error, name, now, source):
                self.failed[name] = FailedRun(type(error).__name__, cell, value)
            else:
                self.failed.pop(name, None)

    def _bound_before(self, error: BaseException, name: str, value: Any, source: str) -> bool:
        """Whether the cell bound name again before it raised, for a name that holds what it held.

        Only a value that binding may give back as the very same object (None, True, 3) leaves a
        doubt; then the line that raised tells: a statement binding name that ended before it ran.
        """
        if not _same_when_bound_again(value):
            return False
        if isinstance(error, SyntaxError):  # the cell could not be compiled: nothing in it ran
            return False
        raised_at = _cell_line(error, self.shell.user_ns)
        bound_at = _lines_binding(source, name)
        if raised_at is None or bound_at is None:  # not known: the cell's run is graded as it left it
            return True
        return any(end < raised_at for end in bound_at)

    def stale(self, names: Iterable[str], namespace: dict) -> dict[str, FailedRun]:
        """The names whose cell raised the last time it ran, and which still hold what they held then."""
        return {
            name: self.failed[name]
            for name in dict.fromkeys(names)
            if name in self.failed and namespace.get(name, MISSING) is self.failed[name].value
        }

    def library_changed(self, while_checking: bool = False) -> tuple[str, str] | None:
        """The case and hint when library code changed since the session started (guard.Snapshot):
        a module reloaded, or names the notebook replaced; None when nothing changed."""
        replaced = self.snapshot.replaced()
        if not replaced:
            return None  # a reload that made nothing new (of a module without functions) is harmless
        reloaded = self.snapshot.reloaded()
        if reloaded:
            return reloaded_case(reloaded, while_checking), RELOAD_HINT
        return replaced_case(replaced, while_checking), RESTART_HINT


def _last_shown() -> BaseException | None:
    """The error whose traceback IPython showed last (it keeps it as sys.last_exc, or last_value)."""
    return getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)


def _cell_line(error: BaseException, user_ns: dict) -> int | None:
    """The line of the cell's own code at which error was raised (None when no cell frame is found):
    the outermost frame of the cell's namespace, as what the cell exec()s or eval()s runs in it too."""
    tb = error.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_globals is user_ns and frame.f_code.co_name == "<module>":
            return tb.tb_lineno
        tb = tb.tb_next
    return None


def _lines_binding(source: str, name: str) -> list[int] | None:
    """The last lines of the cell's top-level statements that bind name; None if it is not Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return [
        statement.end_lineno or statement.lineno
        for statement in tree.body
        if name in (bound_names(ast.get_source_segment(source, statement) or "") or ())
    ]


def _same_when_bound_again(value: Any) -> bool:
    """True for a value that binding the name again may give back as the very same object (None, a
    bool, a small int, a string): then that it is unchanged says nothing of whether the cell bound it."""
    if isinstance(value, tuple):
        return all(_same_when_bound_again(item) for item in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def session() -> Session | None:
    """This kernel's session, started on first use; None outside IPython and in the grader's kernels."""
    shell = _ipython()
    if shell is None or os.environ.get(GUARD_ENV):
        return None
    found = getattr(shell, SESSION_ATTRIBUTE, None)
    if found is None:
        found = Session(shell, Snapshot.take())
        shell.events.register("pre_run_cell", found.before_cell)
        shell.events.register("post_run_cell", found.after_cell)
        setattr(shell, SESSION_ATTRIBUTE, found)
    return found


def _ipython() -> Any:
    """IPython's running shell, or None outside one."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def replaced_case(names: list[str], while_checking: bool = False) -> str:
    """'not checked: varfunc.variable.Variable.__mul__ was replaced in this kernel' (at most 5 named)."""
    return f"not checked: {_listed(names)} replaced{_when(while_checking)}"


def reloaded_case(modules: list[str], while_checking: bool = False) -> str:
    """'not checked: varfunc.variable was reloaded (importlib.reload) in this kernel'."""
    return f"not checked: {_listed(modules)} reloaded (importlib.reload){_when(while_checking)}"


def _listed(names: list[str]) -> str:
    """'a was', 'a, b were', 'a, b, c, d, e and 2 more were'."""
    return f"{shortened(names)} {'was' if len(names) == 1 else 'were'}"


def _when(while_checking: bool) -> str:
    """When the change was seen: before the check, or while it ran the student's code."""
    return " while the check ran your code" if while_checking else " in this kernel"


def stale_case(stale: dict[str, FailedRun]) -> tuple[str, str]:
    """The case and hint for names whose exercise cell raised the last time it ran."""
    run = next(iter(stale.values()))
    where = f" (In [{run.cell}])" if run.cell is not None else ""
    case = f"your exercise cell raised {run.error} the last time it ran{where}"
    earlier = [name for name, failed in stale.items() if failed.value is not MISSING]
    undefined = [name for name in stale if name not in earlier]
    sees = f"this check would only see the {', '.join(earlier)} from an earlier run" if earlier else ""
    never = f"{', '.join(undefined)} not defined" if undefined else ""
    return case, f"fix it and run it again ({'; '.join(part for part in (sees, never) if part)})"
