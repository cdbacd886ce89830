"""Guards for code written outside the kit (a student's): against writes where they must not go,
and against a Function class whose objects compare by value.

The arrays the engine hands a hook, and a student's Function's ``backward``, are shared: ``Add``
hands one gradient to both its inputs, the root's is the caller's own array, and saved tensors are
the Variables' data. Writing into one would change gradients or data the writer was never given,
silently (v0.1.3 let it happen). So they are handed over as read-only views, and a write becomes an
error that says what to do; so do the attributes a student's ``forward`` sets to an input's or
output's array (``self.x = x``). (The ``forward`` itself is checked against copies instead, since it
may legitimately change an input it marks dirty: see dirty.py.) CuPy has no read-only arrays: on
the GPU these rules are the user's to keep.

A Function object is one node of one graph, and the engine tells nodes apart by identity (they are
the keys of its dependency counts). A class that defines ``__eq__`` (a ``@dataclass`` does) would
make two equal nodes one, and a gradient would be lost without an error; it is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import VarfuncError

# For each writer: what the kit handed it, and what to do instead of writing into it
BACKWARD_FIX = (
    "Its gradients, its saved tensors and any attribute holding an input's or output's array",
    "compute new arrays (grad_output * 2, not grad_output *= 2; or change a .copy())",
)
VARIABLE_HOOK_FIX = ("The gradients a hook gets", "return a new array (grad * 2, not grad *= 2)")
FUNCTION_HOOK_FIX = ("The gradients a hook gets", "return a new tuple of gradients instead")


def call_on_read_only(fn: Callable, args: tuple, role: str, function: Any, fix: tuple) -> Any:
    """fn(*args), where args hold read-only arrays: a write into one becomes an error that names fn
    by its role ("backward of", "hook 'h' on") and its Function, and says what to do (fix)."""
    try:
        return fn(*args)
    except TypeError as error:  # g2 * 3 where g2 is None: an output nothing used
        if error.__traceback__.tb_next is None and role.startswith("hook"):  # the call itself failed
            raise VarfuncError(
                f"{role} {function!r} could not be called ({error}): a Variable's hook takes one "
                "argument, hook(grad); a Function's hook takes two, hook(grad_input, grad_output)"
            ) from error
        if "NoneType" not in str(error) or not any(a is None for a in args):
            raise
        raise VarfuncError(
            f"{role} {function!r} failed on None ({error}), and a gradient it was given is None: an "
            "output that nothing used, or one marked non-differentiable, gets None instead of an "
            "array; treat None as zeros (if g is None: ...). If the None it met is another, look in "
            "its own code"
        ) from error
    except ValueError as error:
        if "read-only" not in str(error):
            raise
        handed, what_to_do = fix
        raise VarfuncError(
            f"{role} {function!r} wrote into a read-only array ({error}). {handed} are read-only, "
            f"since other Functions and Variables share them: {what_to_do}. (If the array was "
            "none of these but one it made itself, read-only as np.broadcast_to's are, write into "
            "a .copy() of it instead.)"
        ) from error


def read_only_views(*arrays: Any) -> tuple:
    """Read-only views of the NumPy arrays in arrays, the rest as they are (CuPy has no read-only ones)."""
    # One view per distinct array, so that `is` still tells a hook when two gradients are one array.
    views: dict = {}
    for array in arrays:
        if isinstance(array, np.ndarray) and id(array) not in views:
            view = array.view()
            view.flags.writeable = False
            views[id(array)] = view
    return tuple(views.get(id(array), array) for array in arrays)


def make_attributes_read_only(function: Any, arrays: tuple) -> set:
    """Each attribute that forward set to one of arrays, a view of one, or a tuple, list or dict
    holding them, becomes a read-only view: backward must not write into a Variable's data through it.
    Returns the positions in arrays of those that an attribute holds."""
    kit = [vars(cls) for cls in type(function).__mro__ if cls.__module__.startswith("varfunc.")]
    held: set = set()
    fields = vars(function)
    for name, value in list(fields.items()):
        if not any(name in names for names in kit):  # the kit's own fields (to_save, ...) stay
            fields[name] = _read_only_if_shared(value, arrays, held)
    return held


def _read_only_if_shared(value: Any, arrays: tuple, held: set) -> Any:
    if isinstance(value, np.ndarray):
        sharing = [
            i for i, a in enumerate(arrays) if isinstance(a, np.ndarray) and np.may_share_memory(value, a)
        ]
        held.update(sharing)
        return read_only_views(value)[0] if sharing else value
    if type(value) in (tuple, list):
        return type(value)(_read_only_if_shared(item, arrays, held) for item in value)
    if type(value) is dict:
        return {key: _read_only_if_shared(item, arrays, held) for key, item in value.items()}
    return value


def refuse_value_equality(function: Any) -> None:
    """Raise if function's class compares its objects by value: the engine would merge equal nodes."""
    cls = type(function)
    if cls.__eq__ is object.__eq__ and cls.__hash__ is object.__hash__:
        return
    raise VarfuncError(
        f"{cls.__name__} defines __eq__ or __hash__ (@dataclass defines __eq__): a Function object is "
        "one node of the graph, and two nodes that compare equal would be one to the engine, which "
        "would lose a gradient; write @dataclass(eq=False), or remove __eq__ and __hash__"
    )
