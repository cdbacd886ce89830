"""Prediction exercises: answers written by hand (an answer its cell computed is refused), and the
count of wrong ones.

A prediction ("what will the engine do?") is worked out in one's head and typed in. An answer made by
running the kit (``ExecutionEngine()._compute_dependencies(...)``, ``viz.trace(...).visit_order``)
would pass without any prediction. The check reads the cells the notebook ran (IPython's history,
``In``) from the last one that sets the answer: every statement there and after that sets or changes
the answer may use only literals, a few builtins (``list``, ``set``, ``sorted``, ...), NumPy, the
answers themselves and names such statements set. Outside IPython (no history) nothing is refused.

Like the guard, this stops the obvious shortcut, not a student who prints the kit's result in a
scratch cell and types it in.
"""

from __future__ import annotations

import ast
import builtins
import math
from typing import Any

import numpy as np

from .core import CheckFailed

_SAFE_BUILTINS = frozenset(
    "abs all any bool dict divmod enumerate float frozenset int len list map max min pow print range "
    "reversed round set sorted str sum tuple zip".split()
)
_SAFE_MODULES = {"np": np, "numpy": np, "math": math}
HAND_HINT = (
    "a prediction is made without running anything: type the values themselves (numbers, strings, "
    "lists, sets, dicts) into the exercise cell"
)


def expect_written_by_hand(ns: dict, *names: str) -> None:
    """CheckFailed when the cells that set one of names (IPython's history) compute it from code."""
    history = ns.get("_ih", ns.get("In"))
    if not isinstance(history, list):
        return
    cells = [_parsed(source) for source in history if isinstance(source, str)]
    for name in names:
        found = _computed_from(cells, name, names, ns)
        if found:
            raise CheckFailed(
                f"{name}: a prediction written by hand",
                "literals typed into the exercise cell",
                found,
                HAND_HINT,
            )


def _parsed(source: str) -> list[ast.stmt]:
    try:
        return ast.parse(source).body
    except SyntaxError:
        return []


def _computed_from(cells: list, name: str, answers: tuple, ns: dict) -> str:
    """The statement that sets name from something not written by hand, and what it uses ('' if none)."""
    last = max((i for i, cell in enumerate(cells) if any(name in _stored(s) for s in cell)), default=None)
    if last is None:
        return ""  # set outside the cells the history holds: nothing to judge
    for cell in cells[last:]:
        by_hand = {n for n in _SAFE_BUILTINS if ns.get(n, getattr(builtins, n)) is getattr(builtins, n)}
        by_hand |= {n for n, module in _SAFE_MODULES.items() if ns.get(n) is module} | set(answers)
        for statement in cell:
            foreign = _loaded(statement) - _bound_inside(statement) - by_hand
            if not foreign and _imports_only_numbers(statement):
                by_hand |= _stored(statement)
                continue
            by_hand -= _stored(statement)
            if name in _changed(statement):
                return f"{_first_line(statement)} (uses {_first_of(foreign, statement)})"
    return ""


def _imports_only_numbers(statement: ast.stmt) -> bool:
    """False for an import of anything but NumPy or math (the kit, say); True for any other statement."""
    if isinstance(statement, ast.Import):
        modules = [alias.name for alias in statement.names]
    elif isinstance(statement, ast.ImportFrom):
        modules = [statement.module or ""]
    else:
        return True
    return all(module.split(".")[0] in _SAFE_MODULES for module in modules)


def _first_of(foreign: set[str], statement: ast.stmt) -> str:
    """The name to blame, the first of foreign in the statement's text; an import statement's 'an import'."""
    names = [n for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id in foreign]
    first = min(names, key=lambda n: (n.lineno, n.col_offset), default=None)
    return f"`{first.id}`" if first is not None else "an import"


def _first_line(statement: ast.stmt) -> str:
    text = ast.unparse(statement).splitlines()[0]
    return text if len(text) <= 70 else text[:67] + "..."


def _loaded(statement: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored(statement: ast.stmt) -> set[str]:
    """The names a statement binds (its targets, imports, defined functions and classes)."""
    names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(statement):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _bound_inside(statement: ast.stmt) -> set[str]:
    """Names a statement binds for its own use: loop and comprehension variables, arguments."""
    names = {a.arg for a in ast.walk(statement) if isinstance(a, ast.arg)}
    for node in ast.walk(statement):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.NamedExpr):
            names.add(node.target.id)
    return names


def _changed(statement: ast.stmt) -> set[str]:
    """Names a statement binds or changes: x = ..., x[k] = ..., x.attr = ..., x += ..., x.append(...)."""
    names = _stored(statement)
    for node in ast.walk(statement):
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names |= _root_names(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            names |= _root_names(node.func.value)
    return names


def _root_names(node: ast.AST) -> set[str]:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return {node.id} if isinstance(node, ast.Name) else set()


def predictions_wrong(wrong: int, total: int) -> str:
    """'1 of the 7 predictions is wrong', '3 of the 7 predictions are wrong'."""
    return f"{wrong} of the {total} predictions {'is' if wrong == 1 else 'are'} wrong"


EMPTY_DICT = "{} is an empty dict; an empty set is set()"


def set_hint(value: Any, hint: str) -> str:
    """hint for a prediction that is no set, or EMPTY_DICT where it is {}, Python's empty dict."""
    return EMPTY_DICT if isinstance(value, dict) and not value else hint
