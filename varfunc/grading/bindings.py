"""The names a cell's code binds at its top level: the grader asks which earlier cell may have
defined a missing name, and ``check`` in a kernel which cell last defined an exercise's names.
"""

from __future__ import annotations

import ast
import re

# What a line of code that is not Python (a typo) looks like it binds: def f, class C, x = ..., a, b = ...
_BINDING_LINE = re.compile(
    r"^(?:async\s+def|def|class)\s+(?P<defined>\w+)|^(?P<assigned>\w+(?:\s*,\s*\w+)*)\s*(?::[^=\n]*)?=(?!=)",
    re.MULTILINE,
)


def bound_names(source: str) -> set[str] | None:
    """The names the cell binds outside its functions and classes ('*' for import *); None if it is
    not Python. A cell run by a cell magic (%%time) is read by its body, which binds them."""
    try:
        tree = ast.parse(python_of(_cell_magic_body(source)))
    except SyntaxError:
        return None
    bound = _Bound()
    bound.visit(tree)
    return bound.names


def may_define(source: str, name: str) -> bool:
    """True when the cell binds name, or may (it cannot be parsed, or it imports *)."""
    names = bound_names(source)
    return names is None or name in names or "*" in names


def names_bound_by(source: str) -> set[str]:
    """The names the cell binds; for a cell that is not Python, the names its lines look like they bind."""
    names = bound_names(source)
    if names is not None:
        return names
    found = set()
    for match in _BINDING_LINE.finditer(source):
        found.update(part.strip() for part in (match["defined"] or match["assigned"]).split(","))
    return found


def _cell_magic_body(source: str) -> str:
    """The lines after a cell magic's (%%time, %%capture), or the cell as it is."""
    first, _, body = source.lstrip().partition("\n")
    return body if first.startswith("%%") else source


def python_of(source: str) -> str:
    """A cell's source as Python: IPython's magics (%time, !pip) turned into calls, as the kernel does."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - a cell IPython cannot transform is read as it is
        return source


class _Bound(ast.NodeVisitor):
    """The names a module's code binds at its top level (not in its functions' or classes' bodies)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.names.add(node.id)

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.names.add(node.name)  # its body binds names of its own

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.AST) -> None:
        pass  # its arguments are its own

    def visit_ListComp(self, node: ast.AST) -> None:
        """A comprehension's loop variables are its own; only a walrus inside binds outside it."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.NamedExpr):
                self.visit(inner.target)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:  # x: int alone binds nothing
            self.visit(node.target)
            self.visit(node.value)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)

    visit_ImportFrom = visit_Import
