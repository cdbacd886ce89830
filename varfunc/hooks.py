"""Hooks on a Function: called with an output's gradient before backward, or with both sides after.

``Variable.register_hook`` registers on the Variable's creator with the output's index; the engine
runs them in ``Function._do_backward`` (and ``Leaf._do_backward``). A hook gets read-only views of
the gradients (guards.py): they are shared (with other paths, with the seed given to backward), so a
hook that changed one in place would change gradients it was never given. Kept apart from
function.py so that the graph-building code reads on its own.

``viz.trace`` watches the hooks through ``hooks_reported_to(recorder)``: while it is on, each hook
call is also reported to the recorder as a ``hook`` event (what the hook was given, what it returned).
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

from .backend import as_gradient, device_of, is_array
from .errors import DTypeError, ShapeError, VarfuncError
from .guards import FUNCTION_HOOK_FIX, VARIABLE_HOOK_FIX, call_on_read_only, read_only_views

# The recorder that hears of each hook call, set by viz.trace around its backward (None: nobody).
_hook_recorder: ContextVar[Any] = ContextVar("hook_recorder", default=None)


@contextlib.contextmanager
def hooks_reported_to(recorder: Any) -> Iterator[None]:
    """Within: each hook call is reported to recorder.record("hook", function, ...) after it returns."""
    token = _hook_recorder.set(recorder)
    try:
        yield
    finally:
        _hook_recorder.reset(token)


class FunctionHooks:
    """register_hook / remove_hook, and running the hooks during backward (a mixin of Function)."""

    __slots__ = ()
    backward_hooks: OrderedDict | None = None  # name -> (hook, output index or None)

    def register_hook(self, name: str, hook: Callable | None = None, variable: Any = None) -> None:
        """Call hook(grad) for one output's gradient, or hook(grad_input, grad_output) if no variable.

        What a hook returns, unless None, replaces the gradient (or the tuple grad_input) it was given.
        """
        if hook is None and callable(name):  # today's x.register_hook(fn)
            raise VarfuncError(
                "register_hook takes a name, then the hook: register_hook('my_hook', fn), as in v0.1 "
                "(remove_hook('my_hook') removes it); today's PyTorch takes the hook alone"
            )
        if hook is None:  # @x.register_hook('clip') as a decorator, or the hook forgotten
            raise VarfuncError(
                f"register_hook({name!r}) needs the hook too: register_hook({name!r}, fn), with fn "
                "defined first (it is not a decorator)"
            )
        if not callable(hook):
            raise VarfuncError(f"register_hook({name!r}): the hook must be callable, got {hook!r}")
        if not isinstance(name, str):  # remove_hook takes it back by name: a list is not a key at all
            raise VarfuncError(
                f"register_hook: the name is a string, register_hook('clip', fn), got {name!r}"
            )
        if self.backward_hooks is None:
            self.backward_hooks = OrderedDict()
        index = None if variable is None else self.output_ids[id(variable)]
        if name in self.backward_hooks:
            taken = self.backward_hooks[name][1]
            by = "" if taken == index else f" by {_hook_owner(taken)}, and its outputs share the names"
            raise VarfuncError(
                f"a hook named {name!r} is already registered on {self!r}{by}; "
                f"call remove_hook({name!r}) {'there ' if by else ''}first or choose another name"
            )
        self.backward_hooks[name] = (hook, index)

    def remove_hook(self, name: str, variable: Any = None) -> None:
        """Remove the hook registered under name (only if it is variable's, when one is given)."""
        hooks = self.backward_hooks or {}
        entry = hooks.get(name)
        index = None if variable is None else self.output_ids.get(id(variable))
        if entry is None or (variable is not None and entry[1] != index):
            # a sibling output's hook, or this Function's own, is not variable's to remove
            where = f"on {self!r}" if variable is None else f"on this output of {self!r}"
            mine = list(hooks) if variable is None else [n for n, (_, i) in hooks.items() if i == index]
            owner = "" if entry is None else f"; {name!r} is registered by {_hook_owner(entry[1])}"
            raise VarfuncError(
                f"no hook named {name!r} {where} (registered there: {mine}{owner}); a hook registered "
                "before an in-place op stays with the Function that made the earlier value"
            )
        del hooks[name]

    def _run_variable_hooks(self, grad_output: tuple) -> tuple:
        grads = list(grad_output)
        for name, (hook, index) in tuple(self.backward_hooks.items()):  # a hook may remove itself
            if index is None or grads[index] is None:
                continue
            view = read_only_views(grads[index])
            role = f"hook {name!r} on output {index} of"
            replacement = self._call_hook(name, index, hook, view, role, VARIABLE_HOOK_FIX)
            if replacement is not None:
                grads[index] = self._checked_hook_result(replacement, grads[index], index)
        return tuple(grads)

    def _call_hook(
        self, name: str, index: int | None, hook: Callable, args: tuple, role: str, fix: tuple
    ) -> Any:
        """hook(*args), guarded (guards.py); reported as a ``hook`` event when a recorder listens."""
        recorder = _hook_recorder.get()
        if recorder is None:
            return call_on_read_only(hook, args, role, self, fix)
        with hooks_reported_to(None):  # a backward that the hook runs is another one: not reported
            returned = call_on_read_only(hook, args, role, self, fix)
        recorder.record("hook", self, name=name, output_nr=index, given=args, returned=returned)
        return returned

    def _checked_hook_result(self, replacement: Any, grad: Any, index: int) -> Any:
        """A hook's replacement gradient, in the gradient's dtype; an error unless an array of its shape."""
        if isinstance(replacement, np.generic):  # g * 2 for a 0-d gradient (a loss's) is a NumPy scalar
            replacement = np.asarray(replacement)
        if not is_array(replacement) or replacement.shape != grad.shape:
            got = replacement.shape if is_array(replacement) else f"a {type(replacement).__name__}"
            raise ShapeError(
                f"a hook on output {index} of {self!r} returned {got} for a gradient of shape "
                f"{grad.shape}; return an array of that shape (not a Variable) or None"
            )
        returned = f"a hook on output {index} of {self!r} returned"
        return as_gradient(_floating(replacement, returned), grad.dtype, returned, device_of(grad))

    def _run_function_hooks(self, grad_input: tuple, grad_output: tuple) -> tuple:
        """Call each Function hook in order; one that returns a tuple replaces grad_input (checked as
        backward's) for the hooks after it too, as Variable hooks and PyTorch's post-hooks chain."""
        views = read_only_views(*grad_input, *grad_output)
        seen_input, seen_output = views[: len(grad_input)], views[len(grad_input) :]
        for name, (hook, index) in tuple(self.backward_hooks.items()):  # a hook may remove itself
            if index is None:
                args = (seen_input, seen_output)
                replacement = self._call_hook(name, None, hook, args, f"hook {name!r} on", FUNCTION_HOOK_FIX)
                if replacement is not None:
                    if not isinstance(replacement, tuple) or len(replacement) != len(grad_input):
                        raise VarfuncError(
                            f"a hook on {self!r} returned {_described(replacement)}; a Function hook "
                            f"returns None or a tuple of {len(grad_input)} gradient(s), one per input"
                        )
                    if replacement:  # (a Leaf has no inputs: nothing to replace)
                        returned = f"hook {name!r} on {self!r} returned"
                        devices = tuple(None if g is None else device_of(g) for g in grad_input)
                        for grad in replacement:
                            _floating(grad, returned)
                        grad_input = self._checked_grad_input(replacement, devices, returned)
                        seen_input = read_only_views(*grad_input)  # the next hook sees the replacement
        return grad_input


def _floating(grad: Any, returned: str) -> Any:
    """grad, unless a hook returned boolean or integer data: a mask (g > 0) by mistake, which a cast
    would make a gradient of zeros and ones (PyTorch refuses any change of dtype from a hook)."""
    kind = getattr(getattr(grad, "dtype", None), "kind", "f")
    if kind in "biu":
        raise DTypeError(
            f"{returned} {grad.dtype} data, not a gradient; return floating-point values, such as "
            "grad * (grad > 0) for a mask"
        )
    return grad


def _hook_owner(index: int | None) -> str:
    return "the Function itself" if index is None else f"its output {index}"


def _described(value: Any) -> str:
    return f"a tuple of {len(value)}" if isinstance(value, tuple) else f"a {type(value).__name__}"
