"""What ``check`` knows about a notebook's kernel besides the notebook's variables.

Two things the variables alone do not show:

- a cell that raised the last time it ran (a typo, a NameError, an interrupt) left the names it
  binds as an earlier run left them: a check would grade code that is no longer in the cell;
- library code the notebook replaced (``Variable.__mul__ = ...``) breaks the checks' own code, and
  every later cell, until the kernel restarts (``grade`` finds it with the guard's ``Snapshot``).

The ``Session`` starts when varfunc.grading is imported in IPython, or at the first check: it takes a
``Snapshot`` and registers pre_run_cell and post_run_cell callbacks, once per shell. Outside IPython,
and in the grader's kernels (whose guard takes its own snapshot before the notebook runs), there is
no session and nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .bindings import names_bound_by
from .guard import GUARD_ENV, Snapshot

SESSION_ATTRIBUTE = "_varfunc_session"  # where a shell keeps its session (it outlives a re-import)
MISSING = object()  # what a name holds when it is not defined
RESTART_HINT = (
    "restart the kernel (Kernel > Restart) and run the cells again, without the lines that assign to "
    "NumPy, varfunc or builtin names: such a change applies to every later cell"
)


@dataclass(frozen=True)
class FailedRun:
    """The last run of a cell that binds a name, which raised before it bound the name anew."""

    error: str  # the exception's class name
    cell: int | None  # its execution count: In [cell]
    value: Any  # what the name held before that run, and still holds (MISSING: not defined)


class Session:
    """One kernel's library snapshot, and the names whose cell raised the last time it ran."""

    def __init__(self, shell: Any, snapshot: Snapshot) -> None:
        self.shell = shell
        self.snapshot = snapshot
        self.failed: dict[str, FailedRun] = {}
        # what the running cells' names held before they ran: a cell magic (%%capture) runs its body
        # as a cell inside the cell
        self._before: list[dict[str, Any]] = []

    def before_cell(self, info: Any) -> None:
        """IPython's pre_run_cell: remember what the names the cell binds hold now."""
        names = names_bound_by(getattr(info, "raw_cell", "") or "")
        self._before.append({name: self.shell.user_ns.get(name, MISSING) for name in names})

    def after_cell(self, result: Any) -> None:
        """IPython's post_run_cell: a name the cell did not rebind before it raised keeps that failure."""
        error = result.error_before_exec if result.error_before_exec is not None else result.error_in_exec
        for name, before in (self._before.pop() if self._before else {}).items():
            now = self.shell.user_ns.get(name, MISSING)
            if error is not None and now is before and not _same_when_bound_again(now):
                self.failed[name] = FailedRun(type(error).__name__, result.execution_count, before)
            else:
                self.failed.pop(name, None)

    def stale(self, names: Iterable[str], namespace: dict) -> dict[str, FailedRun]:
        """The names whose cell raised the last time it ran, and which still hold what they held then."""
        return {
            name: self.failed[name]
            for name in dict.fromkeys(names)
            if name in self.failed and namespace.get(name, MISSING) is self.failed[name].value
        }

    def replaced(self) -> list[str]:
        """The library names the notebook replaced since the session started (guard.Snapshot)."""
        return self.snapshot.replaced()


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
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    verb = "was" if len(names) == 1 else "were"
    when = " while the check ran your code" if while_checking else " in this kernel"
    return f"not checked: {shown} {verb} replaced{when}"


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
