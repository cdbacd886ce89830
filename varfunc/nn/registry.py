"""What a Module may register: Parameters, the rules for names, and the warning for a plain list.

A Module finds its Parameters and sub-Modules by name, and state_dict() joins those names with dots
("fc1.weight"), so a name may hold no dot and may not be empty, as in torch.nn. A list, tuple or
dict of Modules or Parameters assigned as an attribute is not registered at all: a warning says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DTypeError, VarfuncError
from ..variable import Variable


class Parameter(Variable):
    """A Variable that a Module registers as one of its parameters (a leaf that requires grad)."""

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        if isinstance(data, Variable):
            data = data.data
        dtype = data.dtype if hasattr(data, "dtype") else np.asarray(data).dtype
        if requires_grad and dtype.kind != "f":
            raise DTypeError(
                f"Parameter: {dtype} data cannot require grad (gradients exist only for floating-point "
                "data); convert it (data.astype(np.float32)) or pass requires_grad=False"
            )
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__().split("\n", 1)[1]


class ModuleNameError(VarfuncError, KeyError):
    """A name a Module cannot register: empty, dotted, or taken by another attribute (a KeyError, as
    torch raises, and a VarfuncError)."""

    def __str__(self) -> str:  # the message as written (KeyError's own str() quotes and escapes it)
        return str(self.args[0]) if self.args else ""


def check_name(owner: Any, where: str, name: Any, registry: Mapping | None = None) -> None:
    """Raise ModuleNameError (TypeError for a non-str) unless name can be registered in owner; where
    names the call in the message ("Net.add_module('fc1')").

    registry is owner._parameters or owner._modules: a name already there is replaced in place, and
    any other attribute of that name (a setting such as in_features, a method such as forward) is
    refused. Without one (an assignment, self.fc = ..., which replaces a plain attribute, as in
    torch) only the name itself is checked.
    """
    if not isinstance(name, str):
        raise TypeError(f"{where}: a name is a str, got {name!r}")
    if name == "":
        raise ModuleNameError(f"{where}: a name can't be empty; give it one such as 'fc1'")
    if "." in name:
        raise ModuleNameError(
            f'{where}: the name {name!r} can\'t contain "." (state_dict() joins names with dots, so it '
            f"would read as a sub-Module's); use '_' instead: {name.replace('.', '_')!r}"
        )
    if registry is not None and name not in registry and hasattr(owner, name):
        raise ModuleNameError(
            f"{where}: the attribute {name!r} already exists ({type(getattr(owner, name)).__name__}); "
            "choose another name, or del the attribute first"
        )


def unregistered(owner: Any, name: str, value: Any, module_class: type) -> str | None:
    """The warning for a plain list, tuple or dict of Modules or Parameters (None if it holds none)."""
    if not isinstance(value, (list, tuple, dict)):
        return None
    items = list(value.values() if isinstance(value, dict) else value)
    where = f"{type(owner).__name__}.{name}"
    kind = type(value).__name__
    if any(isinstance(item, Parameter) for item in items):
        return (
            f"{where}: the Parameters in this {kind} are not registered, so parameters(), "
            "state_dict() and the optimizer will not see them; register each one, "
            f"e.g. self.register_parameter('{name}_0', p), or assign them as attributes one by one"
        )
    if any(isinstance(item, module_class) for item in items):
        container = "ModuleDict({...})" if isinstance(value, dict) else "ModuleList([...])"
        return (
            f"{where}: the Modules in this {kind} are not registered, so parameters(), state_dict(), "
            f"train()/eval() and the optimizer will not see them; assign an nn.{container} instead"
        )
    return None
