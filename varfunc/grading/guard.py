"""The grader's guard: library code as it was before a submission's first cell ran.

The checks compare a student's results with NumPy and varfunc, and report through IPython's display.
A notebook that replaced one of those (``np.allclose = lambda *a, **k: True``, a wrapper around
``display`` that rewrites verdicts) would pass anything. So the grader's kernel runs a startup file
(``STARTUP``) before the submission's first cell: it takes a ``Snapshot`` of every function, class
and method in the watched modules (and of the code and default arguments of each Python function
among them, NumPy's dispatchers included, and of the methods each class inherits, which a method of
its own would hide: ``Variable.__mul__ = ...``) and keeps IPython's ``display``, the shell's display
publisher's ``publish`` and ``importlib.import_module`` as they were. Before and again
after an exercise's checks run, ``Snapshot.replaced()`` lists what the notebook rebound or rewrote
since, and whether the contents of varfunc's constant tables (``MODERN_NAMES``, ...) changed; if
anything was, the exercise scores nothing and the report names what was replaced. Verdicts
are published with the kept ``publish`` (a replaced publisher never sees them), and the grader's
check cell imports the checks with the kept ``import_module``.

This stops one-line shortcuts, not a determined attack on the grader itself (the snapshot lives in
the same process as the student's code): the README's "What the local grader does not protect
against" says where the line is and how to grade untrusted code.
"""

from __future__ import annotations

import builtins
import copy
import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

# Modules whose functions, classes and methods the checks rely on (and every loaded submodule of
# numpy and varfunc, varfunc.grading excepted: the runner imports that afresh anyway).
WATCHED_ROOTS = ("numpy", "varfunc")
WATCHED_MODULES = (
    "builtins",
    "importlib",  # the grader's check cell imports the checks with importlib.import_module
    "IPython.display",
    "IPython.core.display_functions",
    "ipykernel.zmqshell",
)
# Builtins the kernel itself rebinds while a notebook runs: the last results (_, __, ___) and
# input(), which ipykernel points at the front end for each cell.
REBOUND_BY_IPYTHON = frozenset({"_", "__", "___", "input"})
SNAPSHOT_KEY = "_varfunc_grader_snapshot"  # where the startup file keeps the snapshot (sys.modules)
GUARD_ENV = "VARFUNC_GRADER_GUARD"  # set in the grader's kernels: a missing snapshot is then an error

STARTUP = f"""\
# varfunc grader: runs before the submission's first cell (see varfunc/grading/guard.py)
import sys as _vf_sys
import varfunc.grading.guard as _vf_guard
_vf_sys.modules[{SNAPSHOT_KEY!r}] = _vf_guard.Snapshot.take()
del _vf_sys, _vf_guard
"""


def _watched(value: Any) -> bool:
    return callable(value) or isinstance(value, (property, staticmethod, classmethod))


def _watched_modules() -> list[Any]:
    for name in ("numpy", "numpy.linalg", "numpy.testing", "varfunc", *WATCHED_MODULES):
        importlib.import_module(name)
    names = [
        name
        for name in list(sys.modules)
        if name in WATCHED_MODULES
        or (name.split(".")[0] in WATCHED_ROOTS and not name.startswith("varfunc.grading"))
    ]
    return [sys.modules[name] for name in sorted(names) if sys.modules[name] is not None]


class Snapshot:
    """Every watched module's (and its classes') functions and methods, by name, as they are now."""

    def __init__(self, entries: dict[tuple[str, str], Any], display: Callable, shell: Any = None) -> None:
        self.entries = entries
        self.display = display
        self.import_module = importlib.import_module  # the grader's check cell imports the checks with it
        self.shell = shell
        self.publish = _publish_of(shell)  # what display() ends in: the shell's display_pub.publish
        self.behaviours = {key: _behaviour(value) for key, value in entries.items()}
        self.tables = _tables()
        self.inherited = _inherited()
        self.modules = {module.__name__: (module, module.__spec__) for module in _watched_modules()}

    @classmethod
    def take(cls) -> Snapshot:
        """The snapshot of this moment (the grader takes it before any cell of the submission runs)."""
        from IPython.display import display  # only inside a kernel

        entries: dict[tuple[str, str], Any] = {}
        for module in _watched_modules():
            for owner, namespace in _namespaces(module):
                for name, value in list(namespace.items()):
                    if _watched(value) and not (module is builtins and name in REBOUND_BY_IPYTHON):
                        entries[(owner, name)] = value
        return cls(entries, display, _shell())

    def show(self, data: dict) -> None:
        """Show raw display data (a verdict) with IPython's publisher as it was at the snapshot."""
        if self.publish is not None:
            self.publish(data=data, metadata={})
        else:  # outside a shell (a test): display() prints it
            self.display(data, raw=True)

    def replaced(self) -> list[str]:
        """The watched names that no longer hold what they held when the snapshot was taken."""
        current: dict[str, dict] = {}
        for module in _watched_modules():
            for owner, namespace in _namespaces(module):
                current[owner] = namespace
        missing = object()
        found = []
        for (owner, name), value in self.entries.items():
            now = current.get(owner, {}).get(name, missing)
            if not _same(now, value):
                found.append(f"{owner}.{name}")
            elif not _identical(_behaviour(value), self.behaviours[(owner, name)]):
                found.append(f"the code or defaults of {owner}.{name}")
        for owner, names in self.inherited.items():  # Variable.__mul__ = ... hides VariableMethods.__mul__
            found += [f"{owner}.{name}" for name in names if name in current.get(owner, {})]
        found += self._publisher_replaced()
        now = _tables()
        found += [
            f"the contents of {owner}.{name}"
            for (owner, name), then in self.tables.items()
            if (owner, name) not in now or now[(owner, name)] != then
        ]
        return sorted(found)

    def reloaded(self) -> list[str]:
        """The watched modules run again since the snapshot: importlib.reload gives a module a new
        __spec__ (and new functions and classes); an import after del sys.modules[...] a new module."""
        return sorted(
            name
            for name, (module, spec) in self.modules.items()
            if sys.modules.get(name, module) is not module or getattr(module, "__spec__", None) is not spec
        )

    def _publisher_replaced(self) -> list[str]:
        """What display() goes through that is not a module's name: the shell and its publisher."""
        if self.shell is None:
            return []
        if _shell() is not self.shell:
            return ["IPython's shell (InteractiveShell.instance())"]
        if not _same(_publish_of(self.shell), self.publish):
            return ["get_ipython().display_pub.publish"]
        return []


def _shell() -> Any:
    """IPython's running shell (the kernel's), or None outside one."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return None
    return InteractiveShell.instance() if InteractiveShell.initialized() else None


def _publish_of(shell: Any) -> Callable | None:
    """The shell's display publisher's publish (a bound method: it names the publisher too)."""
    publisher = getattr(shell, "display_pub", None)
    return getattr(publisher, "publish", None)


def _tables() -> dict[tuple[str, str], Any]:
    """A copy of each constant table of varfunc (a module-level dict, list or set with a public
    UPPER_CASE name, such as varfunc.modern.MODERN_NAMES): the checks compute their answers with them.
    (Private ones, such as function._SHARED, are caches the kit itself fills.)"""
    return {
        (module.__name__, name): copy.deepcopy(value)
        for module in _watched_modules()
        if module.__name__.startswith("varfunc")
        for name, value in list(vars(module).items())
        if name.isupper() and not name.startswith("_") and type(value) in (dict, list, set)
    }


def _inherited() -> dict[str, frozenset[str]]:
    """For each watched class, the functions and methods it inherits rather than defines itself."""
    found = {}
    for module in _watched_modules():
        for owner, cls in _classes(module):
            found[owner] = frozenset(
                name
                for base in cls.__mro__[1:]
                for name, value in list(vars(base).items())
                if name not in vars(cls) and _watched(value)
            )
    return found


def _same(now: Any, then: Any) -> bool:
    """The same object; for bound methods (IPython binds get_ipython anew per cell): same function, self."""
    if now is then:
        return True
    return (
        isinstance(now, types.MethodType)
        and isinstance(then, types.MethodType)
        and now.__func__ is then.__func__
        and now.__self__ is then.__self__
    )


_KEYWORD_DEFAULTS = object()  # separates a function's defaults from its keyword-only defaults


def _functions(value: Any) -> list[types.FunctionType]:
    """The Python functions behind a watched value, whose code and defaults can be rewritten in place."""
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        return _functions(value.__func__)
    if isinstance(value, property):
        return [f for part in (value.fget, value.fset, value.fdel) for f in _functions(part)]
    found = [value] if isinstance(value, types.FunctionType) else []
    implementation = getattr(value, "_implementation", None)  # a NumPy array-function dispatcher's
    if isinstance(implementation, types.FunctionType):
        found.append(implementation)
    return found


def _behaviour(value: Any) -> tuple:
    """What its functions do, besides which objects they are: their code and default arguments."""
    parts: list[Any] = []
    for function in _functions(value):
        keyword_defaults = function.__kwdefaults__ or {}
        parts += [function.__code__, *(function.__defaults__ or ()), _KEYWORD_DEFAULTS]
        parts += [item for pair in keyword_defaults.items() for item in pair]
    return tuple(parts)


def _identical(now: tuple, then: tuple) -> bool:
    """The same objects, one by one (defaults compared by identity: an array has no plain ==)."""
    return len(now) == len(then) and all(a is b for a, b in zip(now, then))


def _namespaces(module: Any) -> list[tuple[str, Any]]:
    """(dotted name, namespace) for the module and for each class defined in it."""
    return [(module.__name__, vars(module))] + [(owner, vars(cls)) for owner, cls in _classes(module)]


def _classes(module: Any) -> list[tuple[str, type]]:
    """(dotted name, class) for each class defined in the module."""
    return [
        (f"{module.__name__}.{name}", value)
        for name, value in list(vars(module).items())
        if isinstance(value, type) and value.__module__ == module.__name__
    ]


def kept_snapshot() -> Snapshot | None:
    """The snapshot the startup file took in this kernel, if any."""
    return sys.modules.get(SNAPSHOT_KEY)
