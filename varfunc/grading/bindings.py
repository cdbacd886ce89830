"""The names a cell's code binds at its top level: the grader asks which earlier cell may have
defined a missing name, and ``check`` in a kernel which cell last defined an exercise's names.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator

# Tokens that only lay out the code: the tokenizer's line ends, indents and comments
_LAYOUT = {
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.COMMENT,
    tokenize.ENDMARKER,
}
_NOT_ASSIGNMENTS = {"==", "!=", "<=", ">=", ":="}  # operators that end in = but bind nothing
_OPENING, _CLOSING = {"(", "[", "{"}, {")", "]", "}"}


def bound_names(source: str) -> set[str] | None:
    """The names the cell binds outside its functions and classes ('*' for import *); None if it is
    not Python. A cell run by a cell magic (%%time) is read by its body, which binds them."""
    return _parsed_names(python_of(_cell_magic_body(source)))


def may_define(source: str, name: str) -> bool:
    """True when the cell binds name, or may (it cannot be parsed, or it imports *)."""
    names = bound_names(source)
    return names is None or name in names or "*" in names


def names_bound_by(source: str) -> set[str]:
    """The names the cell binds; for a cell that is not Python, the names its statements look like they
    bind (read token by token: the text of a string is never taken for code)."""
    names = bound_names(source)
    if names is not None:
        return names
    return _names_statements_bind(python_of(_cell_magic_body(source)))


def _names_statements_bind(source: str) -> set[str]:
    """The names the top-level statements of code that is not Python bind, or look like they bind."""
    lines = io.StringIO(source).readlines()  # as the tokenizer reads them: split at \n only
    names: set[str] = set()
    bodies: list[int] = []  # the columns of the def and class statements whose bodies are being read
    for statement in _statements(source):
        column = statement[0].start[1]
        while bodies and column <= bodies[-1]:
            bodies.pop()
        if bodies:
            continue  # a statement in a function's or a class's body binds names of its own
        names |= _statement_binds(lines, statement)
        if _defined_name(statement):
            bodies.append(column)
    return names


def _statements(source: str) -> Iterator[list[tokenize.TokenInfo]]:
    """The code's statements as lists of tokens. A line that starts at column 0 starts a statement
    even inside an unclosed bracket (a typo above it); the tokenizer reads on after an error."""
    statement: list[tokenize.TokenInfo] = []
    for token in _tokens(source):
        code = token.type not in _LAYOUT
        new_line = code and statement and token.start[0] > statement[-1].end[0] and token.start[1] == 0
        if statement and (token.type == tokenize.NEWLINE or token.string == ";" or new_line):
            yield statement
            statement = []
        if code and token.string != ";":
            statement.append(token)
    if statement:
        yield statement


def _tokens(source: str) -> Iterator[tokenize.TokenInfo]:
    """The code's tokens; after an error the tokenizer starts again on the next line, except in a
    triple-quoted string left open, which runs to the end of the cell."""
    lines, start = io.StringIO(source).readlines(), 0
    while start < len(lines):
        padded = "\n" * start + "".join(lines[start:])  # keeps the tokens' line numbers
        try:
            yield from tokenize.generate_tokens(io.StringIO(padded).readline)
            return
        except (tokenize.TokenError, SyntaxError) as error:
            message = str(error.args[0])
            if "multi-line string" in message or "triple-quoted" in message:
                return
            line = error.lineno if isinstance(error, SyntaxError) else error.args[1][0]
            start = max((line or 0), start + 1)
        yield tokenize.TokenInfo(tokenize.NEWLINE, "", (start, 0), (start, 0), "")  # ends its statement


def _statement_binds(lines: list[str], statement: list[tokenize.TokenInfo]) -> set[str]:
    """The names a statement binds: as Python reads it, or else as it looks (def f(x:, x = [1,)."""
    text = _text(lines, statement)
    names = _parsed_names(text + (" pass" if statement[-1].string == ":" else ""))
    if names is not None:
        return names
    defined = _defined_name(statement)
    if defined:
        return {defined}
    depth = 0
    for index, token in enumerate(statement):
        if token.type != tokenize.OP:
            continue
        depth += (token.string in _OPENING) - (token.string in _CLOSING)
        if depth == 0 and index and _assigns(token.string):
            return _parsed_names(_text(lines, statement[:index]) + " = None") or set()
    return set()


def _defined_name(statement: list[tokenize.TokenInfo]) -> str:
    """The name a def or class statement defines, or ''."""
    words = [token.string for token in statement[:3]]
    if words[:1] == ["async"]:
        words = words[1:]
    if len(words) > 1 and words[0] in ("def", "class") and words[1].isidentifier():
        return words[1]
    return ""


def _assigns(operator: str) -> bool:
    """True for =, +=, -=, ... (not ==, <=, :=)."""
    return operator.endswith("=") and operator not in _NOT_ASSIGNMENTS


def _parsed_names(code: str) -> set[str] | None:
    """The names code binds at its top level, or None if it is not Python."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: a null byte, before Python 3.12
        return None
    bound = _Bound()
    bound.visit(tree)
    return bound.names


def _text(lines: list[str], tokens: list[tokenize.TokenInfo]) -> str:
    """The source text from the first token's start to the last token's end."""
    (first_line, first_column), (last_line, last_column) = tokens[0].start, tokens[-1].end
    if first_line == last_line:
        return lines[first_line - 1][first_column:last_column]
    middle = "".join(lines[first_line : last_line - 1])
    return lines[first_line - 1][first_column:] + middle + lines[last_line - 1][:last_column]


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
