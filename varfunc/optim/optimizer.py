"""Optimizer: parameter groups, per-parameter state, zero_grad and state_dict, as torch.optim's."""

from __future__ import annotations

import copy
import math
import numbers
import reprlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ..backend import check_flag, device_of, is_array, loaded_array
from ..errors import DeviceError, DTypeError, ShapeError
from ..variable import Variable


def _listed(optimizer: str, params: Any) -> list:
    if hasattr(params, "parameters") and callable(params.parameters):  # a Module, not its parameters
        raise DTypeError(f"{optimizer}: got the model {type(params).__name__}; pass model.parameters()")
    try:
        return list(params)
    except TypeError:  # None, a number: not iterable
        raise DTypeError(
            f"{optimizer}: params must be an iterable of Variables (model.parameters() or [w, b]), "
            f"got {type(params).__name__}"
        ) from None


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of 'params' and settings) and ``state`` per parameter.

    ``params`` is an iterable of Variables (leaves; frozen ones are skipped while frozen), or of dicts
    ``{'params': [...], 'lr': ...}`` to give groups their own settings. Subclasses write step().
    """

    number_settings: tuple[str, ...] = ()  # the settings that must be numbers (lr, ...)
    state_buffers: tuple[str, ...] = ()  # the names of the per-parameter arrays step() keeps
    state_counters: tuple[str, ...] = ()  # and of its per-parameter counts
    required_state: tuple[str, ...] = ()  # what a parameter's state holds once step() made it

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = dict(defaults)
        # Variable -> dict of its running buffers; {} for one no step has reached (as torch.optim's)
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Variable):
            raise DTypeError(
                f"{type(self).__name__}: params must be an iterable of Variables (model.parameters() "
                "or [w, b]), got a single Variable; wrap it in a list"
            )
        groups = _listed(type(self).__name__, params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        """Add a group of parameters with its own settings (missing settings take the defaults)."""
        if not isinstance(group, dict) or "params" not in group:
            raise DTypeError(f"{type(self).__name__}: a parameter group must be a dict with a 'params' key")
        params = group["params"]
        params = [params] if isinstance(params, Variable) else _listed(type(self).__name__, params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for index, param in enumerate(params):
            if not isinstance(param, Variable):
                raise DTypeError(
                    f"{type(self).__name__}: parameter {index} is a {type(param).__name__}, "
                    "not a Variable; an optimizer updates Variables (model.parameters())"
                )
            if param.dtype.kind not in "fc":
                raise DTypeError(
                    f"{type(self).__name__}: parameter {index} holds {param.dtype} data, which can "
                    "never require grad, so no step could train it; parameters hold floating-point "
                    "data (leave labels and indices out)"
                )
            if not param.is_leaf:
                raise ValueError(
                    f"{type(self).__name__}: parameter {index} (shape {param.shape}) was computed by "
                    f"{param.creator!r}, not created by you, so a step could not change it; optimize "
                    "the leaves it was computed from"
                )
            if id(param) in seen:
                raise ValueError(
                    f"{type(self).__name__}: parameter {index} (shape {param.shape}) appears twice; "
                    "each parameter may be in only one group, once"
                )
            seen.add(id(param))
        filled = {"params": params}
        for name, default in self.defaults.items():
            value = group.get(name, default)
            if value is required:
                raise ValueError(
                    f"{type(self).__name__}: the setting {name!r} is required, as in 2017's torch.optim "
                    f"(today's PyTorch defaults SGD's lr to 0.001); give it, e.g. {name}=0.01"
                )
            filled[name] = value
        for name in group:
            if name not in filled:
                raise ValueError(
                    f"{type(self).__name__}: unknown setting {name!r}; known: {sorted(self.defaults)}"
                )
        self._check_numbers(filled)
        self._check_group(filled)
        self.param_groups.append(filled)

    def _check_numbers(self, group: dict) -> None:
        """DTypeError for a setting that should be a number and is not (lr="0.1"), ValueError for nan or
        inf (a first step would make every weight nan), before any range test. A Fraction or a NumPy
        number becomes the float it holds (a Fraction times an array gives objects)."""
        for name in self.number_settings:
            value = group[name]
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise DTypeError(f"{type(self).__name__}: {name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{type(self).__name__}: {name} must be a finite number, got {value!r}")
            if type(value) is not int:
                group[name] = float(value)

    def _check_group(self, group: dict) -> None:
        """Raise ValueError for settings out of range (subclasses)."""

    def _params(self) -> list:
        return [p for group in self.param_groups for p in group["params"]]

    def _trained_groups(self) -> list:
        """(group, the parameters a step updates in it) for every group, all checked before the step
        changes any: a step either updates every parameter or none."""
        return [(group, self._trained(group["params"])) for group in self.param_groups]

    def _trained(self, params: list) -> list:
        """The parameters a step updates: those that require grad and have a gradient.

        A parameter no backward has reached (its gradient is None, or was set to None) is skipped,
        as torch.optim skips it: a zero gradient would still move it through weight decay,
        momentum or Adam's running averages. (Reading ``.grad`` first makes it zeros, as v0.1.3's
        were, and the step then counts them.) A frozen one (requires_grad False) is skipped too, where
        torch.optim steps any parameter with a .grad: freeze layers before or after making the
        optimizer, unfreeze them later (docs/differences.md, row 47).
        """
        trained = [p for p in params if p.requires_grad and p._grad is not None]
        for param in trained:
            if not getattr(param.data.flags, "writeable", True):
                raise ValueError(
                    f"{type(self).__name__}.step: a parameter of shape {param.shape} holds read-only data "
                    "(np.broadcast_to, a read-only file, writeable=False), which a step cannot update; "
                    "give it an array of its own: p.data = p.data.copy()"
                )
            self._check_state(param)
        return trained

    def _check_state(self, param: Variable) -> None:
        """Refuse a state step() could not use: one lacking a buffer, or a buffer of the wrong kind."""
        state = self.state.get(param)
        if not state:  # none yet: step() makes it
            return
        for key in self.required_state:
            if key not in state:
                name, missing = type(self).__name__, [k for k in self.required_state if k not in state]
                raise ValueError(
                    f"{name}.step: the state of a parameter of shape {param.shape} holds "
                    f"{sorted(map(str, state))} but lacks {missing}; {name} keeps all of "
                    f"{list(self.required_state)} or nothing: del optimizer.state[p] to start that "
                    "parameter afresh"
                )
        data = param.data
        for key, value in state.items():
            if key in self.state_buffers:
                fits = is_array(value) and value.shape == data.shape and value.dtype == data.dtype
                if not fits or device_of(value) != device_of(data):
                    self._refuse_buffer(param, key, value)
            elif key in self.state_counters and type(value) is not int:
                if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                    raise DTypeError(
                        f"{type(self).__name__}.step: the {key!r} of a parameter of shape "
                        f"{param.shape} must be a whole number, got {value!r}"
                    )

    def _refuse_buffer(self, param: Variable, key: str, value: Any) -> None:
        """Raise the error for a buffer that is not an array of its parameter's shape, dtype and device."""
        where = f"{type(self).__name__}.step: the {key!r} of a parameter of shape {param.shape}"
        if not is_array(value) or value.shape != param.shape:
            got = f"has shape {value.shape}" if is_array(value) else f"is a {type(value).__name__}"
            raise ShapeError(
                f"{where} {got}, where a buffer is an array of its parameter's shape; "
                "del optimizer.state[p] to start that parameter afresh"
            )
        # a model converted or moved after steps were taken leaves its buffers behind
        if value.dtype != param.dtype:
            raise DTypeError(
                f"{where} is {value.dtype}, the parameter {param.dtype} (the model was converted "
                "after steps were taken); convert the state along with "
                "optimizer.load_state_dict(optimizer.state_dict()), or make the optimizer after "
                "model.double()"
            )
        raise DeviceError(
            f"{where} is on {device_of(value)}, the parameter on {param.device} (the model was "
            "moved after steps were taken); move the state along with "
            "optimizer.load_state_dict(optimizer.state_dict()), or make the optimizer after "
            "model.to(...)"
        )

    def zero_grad(self, set_to_none: bool = False) -> None:
        """Set every gradient that exists to zero, in place (PyTorch's zero_grad(set_to_none=False)).

        A frozen parameter's too, as in torch: a gradient kept through frozen steps would be stepped
        on once the parameter is unfrozen. set_to_none=True (today's PyTorch's default) drops them
        instead, so that a step skips a parameter no backward reached since.
        """
        check_flag("zero_grad", "set_to_none", set_to_none)
        for param in self._params():
            if set_to_none:
                param.grad = None
            elif param._grad is not None:
                param._grad[...] = 0

    def step(self) -> None:
        """Update the parameters from their .grad (subclasses)."""
        raise NotImplementedError

    # --- state -----------------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """{'state': {index: {name: value}}, 'param_groups': [{settings, 'params': [indices]}]}.

        Parameters are replaced by their position across the groups (as torch.optim does), so the
        dict can be loaded into a new optimizer built over a new model of the same shape. It is a
        deep copy, where torch's holds the running buffers themselves: a dict kept aside here does
        not follow later steps (docs/differences.md, row 51).
        """
        index = {id(p): i for i, p in enumerate(self._params())}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: copy.deepcopy(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore settings and running buffers saved by state_dict() (onto each parameter's device)."""
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            keys = sorted(map(str, state_dict))[:4] if isinstance(state_dict, dict) else None
            got = f"a dict with the keys {keys}" if keys is not None else f"a {type(state_dict).__name__}"
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: expected an optimizer's state dict, with 'state' "
                f"and 'param_groups' (optimizer.state_dict()), got {got}; a model's goes to "
                "model.load_state_dict"
            )
        groups = state_dict["param_groups"]
        if not isinstance(groups, (list, tuple)) or not all(
            isinstance(saved, Mapping) and "params" in saved for saved in groups
        ):
            raise DTypeError(
                f"{type(self).__name__}.load_state_dict: the state dict's 'param_groups' must be a list "
                f"of dicts, each with 'params' and the settings (as optimizer.state_dict() makes), got "
                f"{reprlib.repr(groups)}"
            )
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: the state dict has {len(groups)} parameter "
                f"group(s), this optimizer {len(self.param_groups)}"
            )
        by_index, settings = {}, []
        for number, (saved, group) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: group {number} has "
                    f"{len(saved['params'])} parameter(s) in the state dict, {len(group['params'])} here"
                )
            by_index.update(zip(saved["params"], group["params"]))
            settings.append({name: value for name, value in saved.items() if name != "params"})
            if set(settings[-1]) != set(self.defaults):
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: group {number} has the settings "
                    f"{sorted(settings[-1])}, a {type(self).__name__} has {sorted(self.defaults)}; "
                    f"load a state dict that a {type(self).__name__} saved"
                )
            self._check_numbers(settings[-1])  # saved values are checked as new ones are
            self._check_group(settings[-1])
        new_state, keys = {}, {}
        if not isinstance(state_dict["state"], Mapping):
            raise DTypeError(
                f"{type(self).__name__}.load_state_dict: the state dict's 'state' must be a dict "
                f"{{parameter position: {{name: value}}}}, got a {type(state_dict['state']).__name__}"
            )
        for key, saved in state_dict["state"].items():
            param = by_index.get(self._position(key, by_index))
            if param is None:
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: the state dict has state for parameter "
                    f"{key}, which none of its param_groups lists (they list {sorted(by_index)})"
                )
            if param in new_state:
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: the state dict has state for parameter "
                    f"{key} twice, under the keys {keys[param]!r} and {key!r}; keep one"
                )
            self._check_complete(key, saved)
            new_state[param] = {name: self._loaded_entry(key, param, name, v) for name, v in saved.items()}
            keys[param] = key
        for checked, group in zip(settings, self.param_groups):
            group.update(checked)
        self.state = defaultdict(dict, new_state)

    def _position(self, key: Any, by_index: dict) -> int:
        """The parameter position a key of the saved 'state' names: an int, or its digits as a str."""
        if isinstance(key, str) and key.isascii() and key.isdigit():  # as a JSON round trip leaves it
            return int(key)
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            return int(key)
        raise ValueError(
            f"{type(self).__name__}.load_state_dict: the state dict's 'state' has the key {key!r}, "
            f"where its keys are parameter positions, the integers its param_groups list "
            f"({sorted(by_index)}); load a state dict that optimizer.state_dict() made"
        )

    def _check_complete(self, key: Any, saved: Any) -> None:
        """Refuse a saved state that step() could not use: not a dict, or one that holds some of
        the buffers and counters a step keeps but not all (an empty one starts afresh)."""
        where = f"{type(self).__name__}.load_state_dict: the state of parameter {key}"
        if not isinstance(saved, Mapping):
            raise DTypeError(f"{where} must be a dict {{name: value}}, got a {type(saved).__name__}")
        missing = [name for name in self.required_state if name not in saved]
        if saved and missing:
            raise ValueError(
                f"{where} holds {sorted(map(str, saved))} but lacks {missing}; "
                f"{type(self).__name__} keeps all of {list(self.required_state)} or nothing (an "
                "empty state starts that parameter afresh); load a state dict that "
                f"{type(self).__name__}.state_dict() made"
            )

    def _loaded_entry(self, key: int, param: Variable, name: str, value: Any) -> Any:
        """A saved state entry, checked and converted: a buffer becomes an array of the parameter's
        shape, dtype and device (a NumPy scalar would be rebound, not changed, by step's in-place
        updates), a counter a whole number; any other name is refused."""
        where = f"{type(self).__name__}.load_state_dict: {name!r} of parameter {key}"
        if name in self.state_counters:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise DTypeError(f"{where} must be a whole number >= 0, got {value!r}")
            return int(value)
        if name not in self.state_buffers:
            kept = sorted(self.state_buffers + self.state_counters)
            raise ValueError(f"{where}: {type(self).__name__} keeps no such state (it keeps {kept})")
        if getattr(value, "shape", None) != param.shape:
            raise ShapeError(
                f"{where} has shape {getattr(value, 'shape', type(value).__name__)}, the parameter "
                f"has {param.shape}; a buffer has its parameter's shape"
            )
        return loaded_array(where, value, param.data)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for number, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {number}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"
