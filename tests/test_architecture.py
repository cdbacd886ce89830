"""The house rules, checked on the source: arrows point inwards (the core never imports an outer room),
and cupy stays in backend.py."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "varfunc"
CORE = {
    "backend",
    "variable",
    "function",
    "gradient_checks",
    "habits",
    "shape_methods",
    "hooks",
    "guards",
    "dirty",
    "leaf",
    "engine",
    "functions",
    "gradcheck",
    "errors",
    "methods",
    "operators",
    "modern",
}
OUTER = {"viz", "nn", "optim", "data", "grading", "train", "fit_checks", "inference", "lab"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set:
    """Every varfunc module (and every top-level third-party name) that a file imports."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


def room(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_is_core_or_an_outer_room(path):
    name = room(module_name(path))
    assert name == "" or name in CORE | OUTER, f"{name}: add it to CORE or OUTER so the house rules cover it"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_backend_imports_cupy(path):
    cupy = {name for name in imports_of(path) if name.split(".")[0] in ("cupy", "cupyx")}
    assert not cupy or path.name == "backend.py", f"{path.name} imports {cupy}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_never_imports_outer_rooms(path):
    if room(module_name(path)) not in CORE:
        return
    outer = {name for name in imports_of(path) if name.startswith("varfunc.") and room(name) in OUTER}
    assert not outer, f"core module {module_name(path)} imports {outer}"


# Rooms side by side: nn, optim and data never import one another, nor train or inference, which use them.
STANDS_ALONE = {
    "nn": {"optim", "data", "train", "inference"},
    "optim": {"nn", "data", "train", "inference"},
    "data": {"nn", "optim", "train", "inference"},
}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_nn_optim_and_data_stand_alone(path):
    others = STANDS_ALONE.get(room(module_name(path)), set())
    found = {name for name in imports_of(path) if name.startswith("varfunc.") and room(name) in others}
    assert not found, f"{module_name(path)} imports {found}"


def test_no_two_modules_import_each_other():
    modules = {module_name(p): p for p in SOURCES}
    graph = {name: {m for m in imports_of(p) if m in modules and m != name} for name, p in modules.items()}
    for name, targets in graph.items():
        for target in targets:
            if name.startswith(target + "."):
                continue  # a package's submodule importing the package's own __init__ names
            assert name not in graph[target] or target.startswith(name + "."), f"{name} <-> {target}"
