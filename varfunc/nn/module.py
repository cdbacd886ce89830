"""Module and Parameter: the building blocks of a model, in the style of 2017's ``torch.nn``.

A Module keeps its Parameters and its sub-Modules in two ordered registries that ``__setattr__``
fills: ``self.fc = Linear(4, 1)`` registers a sub-Module, ``self.w = Parameter(...)`` a Parameter.
Everything else (``parameters()``, ``state_dict()``, ``to(device)``) walks those registries.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from ..backend import check_flag, loaded_array, to_device
from ..errors import DTypeError, ShapeError, VarfuncError
from ..variable import Variable
from .registry import Parameter, check_name, unregistered
from .serialization import arrays_to_save, read_npz, write_atomically

__all__ = ["IncompatibleKeys", "Module", "Parameter", "load", "save"]


class IncompatibleKeys(NamedTuple):
    """What load_state_dict did not match: names the model has and the dict lacks, and the reverse."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class of layers and models: subclass it, assign Parameters and Modules, write forward."""

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def forward(self, *input: Any) -> Any:
        """Compute the output from the input Variables (override this)."""
        raise NotImplementedError(f"{type(self).__name__} has no forward(); define forward(self, x)")

    def __call__(self, *input: Any, **kwargs: Any) -> Any:
        return self.forward(*input, **kwargs)

    # --- registries ------------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise VarfuncError(
                f"cannot assign {name!r} before Module.__init__() ran; call super().__init__() "
                f"first in {type(self).__name__}.__init__"
            )
        if name in self._parameters and not (value is None or isinstance(value, Parameter)):
            raise TypeError(
                f"cannot assign a {type(value).__name__} as parameter {name!r} of "
                f"{type(self).__name__}: it would stop being trained and saved; assign an "
                f"nn.Parameter (or None), or change the values in place through {name}.data"
            )
        if name in self._modules and not (value is None or isinstance(value, Module)):
            raise TypeError(
                f"cannot assign a {type(value).__name__} as submodule {name!r} of "
                f"{type(self).__name__}: its parameters would silently leave the model; assign a "
                "Module (or None)"
            )
        # A name assigned again keeps its place in its registry (the order of parameters() and of a
        # Sequential's layers), as in torch, and so does a parameter set to None (a placeholder that
        # parameters() skips); a sub-Module set to None leaves (a container's len() stays right).
        if isinstance(value, (Parameter, Module)):
            check_name(self, f"setattr({type(self).__name__}, {name!r})", name)
            self.__dict__.pop(name, None)
            mine, other = (
                (self._parameters, self._modules)
                if isinstance(value, Parameter)
                else (self._modules, self._parameters)
            )
            other.pop(name, None)
            mine[name] = value
        elif value is None and name in self._parameters:
            self._parameters[name] = None
        else:
            message = unregistered(self, name, value, Module)
            if message:
                warnings.warn(message, stacklevel=2)
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        registries = self.__dict__
        for registry in ("_parameters", "_modules"):
            if registry in registries and name in registries[registry]:
                return registries[registry][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        """The usual attributes and the registered names (tab completion offers model.fc1), as torch's."""
        names = [*super().__dir__(), *self._parameters, *self._modules]
        return sorted({name for name in names if not name[:1].isdigit()})  # not "0": model.0 is no Python

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register param under name (None keeps the name's place, as for a Linear without bias)."""
        if param is not None and not isinstance(param, Parameter):
            raise DTypeError(
                f"register_parameter({name!r}): expected a Parameter, got {type(param).__name__}; "
                "wrap the array with varfunc.nn.Parameter(array)"
            )
        check_name(self, f"{type(self).__name__}.register_parameter({name!r})", name, self._parameters)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module) -> None:
        """Register a sub-Module under name."""
        if not isinstance(module, Module):
            raise DTypeError(f"add_module({name!r}): expected a Module, got {type(module).__name__}")
        check_name(self, f"{type(self).__name__}.add_module({name!r})", name, self._modules)
        self._modules[name] = module

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, Parameter) for this Module's parameters and, with recurse, its sub-Modules',
        each once (with remove_duplicate=False, under every name that reaches it, as state_dict
        lists them). The arguments come in torch's order."""
        check_flag("named_parameters", "recurse", recurse)
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        seen = set()
        for module_name, module in modules:
            for name, param in module._parameters.items():
                if param is None or (remove_duplicate and id(param) in seen):
                    continue
                seen.add(id(param))
                yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every Parameter of this Module and (with recurse) its sub-Modules, each once (for an optimizer)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, Module) for the direct sub-Modules; one registered under two names comes once."""
        seen = set()
        for name, module in self._modules.items():
            if id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct sub-Modules (each once)."""
        for _, module in self.named_children():
            yield module

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(dotted name, Module) for this Module (name prefix) and every sub-Module, depth first;
        a shared sub-Module once, or under each of its names with remove_duplicate=False. memo, the
        Modules already listed, comes first, as in torch."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This Module and every sub-Module."""
        for _, module in self.named_modules():
            yield module

    def apply(self, fn: Any) -> Module:
        """Call fn(module) on every sub-Module and then on this one; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- training helpers ------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = False) -> None:
        """Set every gradient that exists to zero, in place (2017's ``if p.grad is not None: zero_()``).

        Only those a backward made: reading ``.grad`` would make zeros that an optimizer then steps
        on (weight decay, Adam's counters) for a parameter no backward reached. set_to_none=True
        (today's PyTorch's default) drops them instead, and an optimizer skips a parameter without one.
        """
        check_flag("zero_grad", "set_to_none", set_to_none)
        for param in self.parameters():
            if set_to_none:
                param.grad = None
            elif param._grad is not None:
                param._grad[...] = 0

    def train(self, mode: bool = True) -> Module:
        """Put this Module and its sub-Modules in training mode (or evaluation mode if mode is False)."""
        check_flag(f"{type(self).__name__}.train", "mode", mode)
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode: the same as train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set requires_grad on every parameter (False freezes them: no gradient, no step); returns self."""
        check_flag(f"{type(self).__name__}.requires_grad_", "requires_grad", requires_grad)
        params = list(self.parameters())
        for name, param in self.named_parameters():  # all checked before any changes
            if requires_grad and param.dtype.kind != "f":
                raise DTypeError(
                    f"{type(self).__name__}.requires_grad_(True): the parameter {name!r} holds "
                    f"{param.dtype} data, which cannot require grad; convert it first (model.float())"
                )
        for param in params:
            param.requires_grad = requires_grad
        return self

    def num_parameters(self) -> int:
        """The number of scalar parameters."""
        return sum(p.numel() for p in self.parameters())

    # --- state -----------------------------------------------------------------------------------

    def state_dict(self, *, prefix: str = "") -> OrderedDict:
        """{prefix + dotted name: a copy of the parameter's array}, in registration order.

        Copies, where torch gives the parameters' own tensors: ``best = model.state_dict()`` keeps
        the values of that moment here, while in torch it follows later training unless copied
        (``copy.deepcopy``). docs/differences.md, row 51.
        """
        return OrderedDict(
            (prefix + name, param.data.copy())
            for name, param in self.named_parameters(remove_duplicate=False)
        )

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> IncompatibleKeys:
        """Copy arrays into the parameters of the same names (onto each parameter's device and dtype).

        With strict, the names must match exactly; a missing or unexpected name is an error. Shapes
        must always match. Nothing is changed unless every entry fits. Returns the names that did
        not match, as torch does: (missing_keys, unexpected_keys).
        """
        if not isinstance(state_dict, Mapping):
            raise DTypeError(
                f"load_state_dict for {type(self).__name__}: expected a dict of arrays (model.state_dict() "
                f"or nn.load(path)), got {type(state_dict).__name__}"
            )
        check_flag("load_state_dict", "strict", strict)
        params = OrderedDict(self.named_parameters(remove_duplicate=False))
        missing = [name for name in params if name not in state_dict]
        unexpected = [name for name in state_dict if name not in params]
        if strict and (missing or unexpected):
            raise VarfuncError(  # a RuntimeError, as torch raises
                f"load_state_dict for {type(self).__name__}: missing keys {missing}, unexpected keys "
                f"{unexpected}; pass strict=False to load only the names that match"
            )
        updates = []
        for name, param in params.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            value = value.data if isinstance(value, Variable) else value
            # Converted here, before any parameter changes: a bad entry leaves the model as it was.
            array = loaded_array(f"load_state_dict for {type(self).__name__}: {name!r}", value, param.data)
            if array.shape != param.shape:
                raise ShapeError(
                    f"load_state_dict for {type(self).__name__}: {name!r} has shape {array.shape} in "
                    f"the state dict but {param.shape} in the model"
                )
            updates.append((param, array))
        for param, array in updates:
            param.data = array
        return IncompatibleKeys(missing, unexpected)

    # --- devices and dtypes ----------------------------------------------------------------------

    def to(self, device: str) -> Module:
        """Move every parameter (and its gradient) to 'cpu' or 'cuda[:N]'; returns self.

        Raises the backend's DeviceError (saying what is missing) when the device is not there;
        the parameters are then left where they were.
        """
        params = list(self.parameters())
        moved = [
            (to_device(p.data, device), None if p._grad is None else to_device(p._grad, device))
            for p in params
        ]
        for param, (data, grad) in zip(params, moved):
            param._move_arrays(data, grad)
        return self

    def cpu(self) -> Module:
        """to('cpu')."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """to('cuda') or to('cuda:N')."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def type(self, dtype: Any) -> Module:
        """Convert every floating-point parameter to dtype (np.float64, say), as torch converts only
        those (an integer Parameter, a count that does not require grad, keeps its dtype); their
        gradients are reset."""
        if np.dtype(dtype).kind != "f":  # checked first: a half-converted model could not be undone
            raise DTypeError(
                f"{type(self).__name__}.type: parameters hold floating-point data, got {np.dtype(dtype)}; "
                "use np.float32 or np.float64"
            )
        for param in self.parameters():
            if param.dtype.kind == "f":
                param.data = param.data.astype(dtype)
                param.grad = None
        return self

    def double(self) -> Module:
        """Parameters as float64 (needed for gradcheck)."""
        return self.type(np.float64)

    def float(self) -> Module:
        """Parameters as float32 (PyTorch's default)."""
        return self.type(np.float32)

    # --- printing --------------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The layer's settings, shown inside its repr."""
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        if self.extra_repr():  # on lines of its own before the sub-Modules, as torch prints it
            lines = self.extra_repr().split("\n") + lines
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def save(obj: Any, path: Any) -> None:
    """Save a Module's parameters (or a state dict of arrays) in NumPy's .npz format, names as keys.

    The file gets the name given, as torch.save names it (np.savez would add ``.npz``), so
    ``load(path)`` finds it under the same name. Every entry is checked before any file is touched,
    and an existing file is replaced only by a complete new one (varfunc/nn/serialization.py).
    """
    state = obj.state_dict() if isinstance(obj, Module) else obj
    write_atomically(arrays_to_save(state), path)


def load(path: Any) -> OrderedDict:
    """Read a .npz file written by save() back as a state dict: {name: NumPy array}, in order."""
    return read_npz(path)
