"""Containers of Modules: Sequential runs them in turn; ModuleList and ModuleDict only hold them.

A Module registers what is assigned to it one attribute at a time, so layers kept in a plain list
or dict are not the model's: parameters(), state_dict() and eval() never see them. These
containers are Modules whose children are the layers, as in torch.nn.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError
from .module import Module
from .registry import check_name
from .serialization import with_article


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: Modules in order, usually named "0", "1", ...

    Every change checks what it was given before it changes anything: a wrong argument leaves the
    layers as they were (docs/differences.md, row 51).
    """

    def _name_at(self, index: Any) -> str:
        """The name of the Module at a position (model[-1] too), or a clear error."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(
                f"{type(self).__name__}: index it with an int (model[0], model[-1]) or read a slice "
                f"(model[:2]), got {index!r}"
            )
        count = len(self._modules)
        if not -count <= index < count:
            raise IndexError(f"{type(self).__name__}: index {index} is out of range for {count} modules")
        # Walk the names up to the position (as torch's Sequential does), not a list of all of them:
        # a model's names need not be "0", "1", ... (an OrderedDict, a slice, add_module by hand).
        return next(itertools.islice(self._modules, int(index) % count, None))

    def _at(self, index: Any) -> Module:
        """The Module at a position (model[-1] too), or a clear error."""
        return self._modules[self._name_at(index)]

    def _modules_given(self, method: str, modules: Any) -> list[Module]:
        """modules as a list, each checked to be a Module, before anything changes."""
        try:
            modules = list(modules)
        except TypeError:
            raise TypeError(
                f"{type(self).__name__}.{method}: expected an iterable of Modules ([nn.ReLU(), ...]), "
                f"got {with_article(type(modules).__name__)}; add a single Module with append"
            ) from None
        for index, module in enumerate(modules):
            if not isinstance(module, Module):
                raise DTypeError(
                    f"{type(self).__name__}.{method}: item {index} is {with_article(type(module).__name__)}, "
                    "not a Module; nothing was added"
                )
        return modules

    def _renumber(self, modules: list[Module]) -> None:
        """Hold these modules, named "0", "1", ... (the new registry is complete before it is swapped in)."""
        numbered = OrderedDict((str(index), module) for index, module in enumerate(modules))
        self._modules.clear()
        self._modules.update(numbered)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __setitem__(self, index: int, module: Module) -> None:
        if isinstance(index, slice):
            raise TypeError(
                f"{type(self).__name__}: assign one Module at an int position (model[0] = nn.ReLU()); "
                f"assigning to a slice ({index!r}) is not supported"
            )
        self.add_module(self._name_at(index), module)  # the same errors as reading it; the name stays

    def __delitem__(self, index: int | slice) -> None:
        """Remove the Module(s) at index; the others are renamed "0", "1", ... as torch renames them."""
        names = list(self._modules)[index] if isinstance(index, slice) else [self._name_at(index)]
        self._renumber([module for name, module in self._modules.items() if name not in names])

    def pop(self, index: int | slice) -> Any:
        """Remove the Module at index and return it (the others are renamed "0", "1", ...)."""
        module = self[index]
        del self[index]
        return module

    def append(self, module: Module) -> Any:
        """Add a module at the end, named str(len(self)) as in torch, or the next number not taken."""
        number = len(self)
        while str(number) in self._modules:  # a slice keeps its names: model[1:] holds "1" and "2"
            number += 1  # (torch's append would replace the module called "2")
        self.add_module(str(number), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Any:
        """Add these modules at the end, in order (all checked first: a wrong one adds none)."""
        for module in self._modules_given("extend", modules):
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put module before position index; the ones after it move up one (and are renamed)."""
        count = len(self._modules)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"{type(self).__name__}.insert: the position is an int, got {index!r}")
        if not -count <= index <= count:
            raise IndexError(
                f"{type(self).__name__}.insert: position {index} is out of range for {count} modules "
                f"(from {-count} to {count})"
            )
        if not isinstance(module, Module):
            raise DTypeError(
                f"{type(self).__name__}.insert: expected a Module, got "
                f"{with_article(type(module).__name__)}; nothing was changed"
            )
        modules = list(self._modules.values())
        modules.insert(int(index), module)
        self._renumber(modules)


class Sequential(_ModuleSequence):
    """Modules applied one after the other: Sequential(Linear(2, 8), ReLU(), Linear(8, 1)).

    Also takes an OrderedDict of named Modules. Index it (model[0]), iterate it, take its len();
    change it as a ModuleList (append, extend, insert, pop, del model[i], model[i] = layer): insert,
    pop and del rename the layers "0", "1", ..., as torch does.
    """

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    def forward(self, input: Any) -> Any:
        for name, module in self._modules.items():
            try:
                input = module(input)
            except ShapeError as error:  # say where in the model the shapes stopped fitting
                raise ShapeError(f"{type(self).__name__} layer ({name}): {error}") from error
        return input

    def __getitem__(self, index: int | slice) -> Module:
        if isinstance(index, slice):  # the layers keep their names, as in torch: "2.weight" stays
            return Sequential(OrderedDict(list(self._modules.items())[index]))
        return self._at(index)


class ModuleList(_ModuleSequence):
    """A list of Modules that the model owns (their parameters are its own); it has no forward.

    ``self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])``, then in forward:
    ``for layer in self.layers: x = layer(x)``. Index, iterate, append, extend, insert, assign,
    pop, del.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        self.extend(modules or ())

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            "ModuleList only holds Modules and has no forward(); call its layers in your Module's "
            "forward (for layer in self.layers: x = layer(x)), or use nn.Sequential"
        )

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return ModuleList(list(self._modules.values())[index])
        return self._at(index)


class ModuleDict(Module):
    """Modules by name, owned by the model: ``self.heads = nn.ModuleDict({"age": ..., "size": ...})``.

    Look up (``self.heads["age"]``), assign, delete, test with ``in``; keys(), values(), items()
    keep the order in which the names were added.
    """

    def __init__(self, modules: dict[str, Module] | None = None) -> None:
        super().__init__()
        self.update(modules or {})

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            "ModuleDict only holds Modules and has no forward(); call the one you need in your "
            "Module's forward (self.heads['age'](x))"
        )

    def __getitem__(self, name: str) -> Module:
        if name not in self._modules:
            raise KeyError(f"ModuleDict has no module {name!r}; it has {list(self._modules)}")
        return self._modules[name]

    def __setitem__(self, name: str, module: Module) -> None:
        self._add([(name, module)], f"ModuleDict[{name!r}] = ...")

    def __delitem__(self, name: str) -> None:
        self[name]  # the same error as reading a name that is not there
        del self._modules[name]

    def __contains__(self, name: str) -> bool:
        return name in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Any:
        """The names, in the order they were added."""
        return self._modules.keys()

    def values(self) -> Any:
        """The Modules, in the order they were added."""
        return self._modules.values()

    def items(self) -> Any:
        """(name, Module) pairs, in the order they were added."""
        return self._modules.items()

    def update(self, modules: Any) -> None:
        """Add (or replace) the modules of a dict or of (name, Module) pairs (all checked first: a
        wrong one adds none)."""
        self._add(
            list(modules.items()) if isinstance(modules, Mapping) else list(modules), "ModuleDict.update"
        )

    def _add(self, pairs: list, where: str) -> None:
        """Register (name, Module) pairs once every one has been checked."""
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"{where}: expected a dict or (name, Module) pairs, got {pair!r}")
            name, module = pair
            if not isinstance(module, Module):
                raise DTypeError(
                    f"{where}: expected a Module for {name!r}, got {with_article(type(module).__name__)}; "
                    "nothing was added"
                )
            check_name(self, where, name, self._modules)
        for name, module in pairs:
            self._modules[name] = module
