"""Habits from NumPy and today's PyTorch, met with what to write here instead.

A student who knows ``a.sum(axis=0)`` or ``x.detach()`` reaches for them first. v0.1.3 had neither,
and Python's own answer (``TypeError: sum() got an unexpected keyword argument 'axis'``,
``AttributeError: 'Variable' object has no attribute 'detach'``) does not say what to write instead.
Variable mixes in ``TodaysHabits``; the methods that take a dim are wrapped in ``numpy_keywords``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .errors import BackwardError

# NumPy's keyword -> this kit's (and PyTorch's) name for it
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}

# A name today's PyTorch (or NumPy) has and this kit, like v0.1.3, does not -> what to write instead
INSTEAD = {
    "detach": "Variable(x.data, requires_grad=False) cuts x out of the graph, as v0.1 wrote it (renamed "
    "detach() in January 2017, chapter 06)",
    "detach_": "Variable(x.data, requires_grad=False) cuts x out of the graph, as v0.1 wrote it",
    "retain_grad": "a non-leaf's .grad stays zeros here, as in v0.1.3; a hook sees its gradient: "
    "x.register_hook('keep', lambda g: kept.append(g)) (chapter 06)",
    "requires_grad_": "set the attribute of a leaf: x.requires_grad = True",
    "zero_": "x.data[...] = 0 changes the data outside the graph; x.grad[...] = 0 zeros a gradient",
    "fill_": "x.data[...] = value changes the data outside the graph",
    "relu_": "x = x.relu(); in place here are only add_ sub_ mul_ div_ neg_ exp_ tanh_ sigmoid_",
    "clamp_": "x = x.clamp(...); in place here are only add_ sub_ mul_ div_ neg_ exp_ tanh_ sigmoid_",
    "pow_": "x = x ** c; in place here are only add_ sub_ mul_ div_ neg_ exp_ tanh_ sigmoid_",
    "flatten": "x.view(-1)",
    "ravel": "x.view(-1)",
    "contiguous": "nothing: every Variable here holds an array of its own (leave the call out)",
    "astype": "x.type(np.float32) keeps the graph; x.data.astype(...) gives the plain array",
    "long": "x.type(np.int64)",
    "int": "x.type(np.int32)",
    "half": "x.type(np.float16)",
    "bool": "x != 0, or x.type(np.bool_)",
    "type_as": "x.type(y.dtype)",
    "to": "x.cuda() or x.cpu() for a device, x.type(np.float32) for a dtype",
    "tolist": "x.data.tolist()",
    "argmax": "x.max(dim).indices (or [1]): max along a dim gives (values, indices)",
    "argmin": "x.min(dim).indices (or [1]): min along a dim gives (values, indices)",
    "clip": "x.clamp(min, max)",
    "minimum": "x.cmin(y), v0.1's name",
    "maximum": "x.cmax(y), v0.1's name",
    "square": "x ** 2",
    "rsqrt": "x.sqrt().reciprocal()",
    "norm": "(x ** 2).sum().sqrt()",
    "var": "((x - x.mean(dim, keepdim=True)) ** 2).sum(dim) / (n - 1): PyTorch's default divides by n - 1",
    "std": "the square root of the variance: ((x - x.mean(dim, keepdim=True)) ** 2).sum(dim).div(n - 1)"
    ".sqrt()",
    "eq": "x == y (a boolean Variable; also !=, <, <=, >, >=)",
    "ne": "x != y (a boolean Variable)",
    "lt": "x < y (a boolean Variable)",
    "le": "x <= y (a boolean Variable)",
    "gt": "x > y (a boolean Variable)",
    "ge": "x >= y (a boolean Variable)",
    "all": "bool(x.data.all()) for the whole Variable, or x.data.all(axis) for an array",
    "any": "bool(x.data.any()) for the whole Variable, or x.data.any(axis) for an array",
    "flip": "a reversed slice keeps the graph: x[::-1] along dim 0, x[:, ::-1] along dim 1",
    "sort": "x[np.argsort(x.data)] for a 1-d x (indexing keeps the graph)",
    "argsort": "np.argsort(x.data), an array of indices (indices get no gradient)",
    "repeat": "varfunc.cat([x, x], dim) puts copies side by side; x.expand(...) stretches a dim of size 1",
    "chunk": "slices: x[:n], x[n:] (indexing keeps the graph)",
    "split": "slices: x[:n], x[n:] (indexing keeps the graph)",
    "unbind": "x[i] for each i (indexing keeps the graph)",
    "mT": "x.transpose(-2, -1)",
    "zeros_like": "Variable(np.zeros_like(x.data))",
    "new_zeros": "Variable(np.zeros(shape, dtype=x.dtype))",
    "copy_": "x.data[...] = y.data changes the data outside the graph",
    "abs_": "x = x.abs(); in place here are only add_ sub_ mul_ div_ neg_ exp_ tanh_ sigmoid_",
    "swapaxes": "x.transpose(dim0, dim1)",
}


class _Instead:
    """A name that today's PyTorch or NumPy has: reading it raises an AttributeError that says what
    to write here. (A __getattr__ would say the same, but Python then looks every attribute of every
    Variable up more slowly.)"""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self  # Variable.detach itself: for help() and inspect
        raise AttributeError(
            f"a Variable has no {self.name} (today's PyTorch or NumPy has); here: {INSTEAD[self.name]}"
        )


class TodaysHabits:
    """One _Instead per name of INSTEAD (a mixin of Variable)."""

    __slots__ = ()


for _name in INSTEAD:
    setattr(TodaysHabits, _name, _Instead(_name))


def numpy_keywords(method: Callable) -> Callable:
    """method (one that takes a dim), with NumPy's keywords answered by a TypeError that names ours."""

    @functools.wraps(method)
    def method_with_hint(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # (an empty dict is the usual case: nothing to look at)
            _refuse_numpy_keywords(method.__name__, kwargs)
        return method(*args, **kwargs)

    return method_with_hint


def _refuse_numpy_keywords(name: str, kwargs: dict) -> None:
    """A TypeError for axis=, keepdims=, and the out= that np.sum(x) passes; another keyword is left
    to Python's own TypeError, which names it."""
    if "out" in kwargs:  # np.sum(x), np.mean(x), np.max(x) call x.sum(axis=None, out=None)
        fix = f"np.{name}(x) calls x.{name} with NumPy's keywords: write x.{name}(...) instead"
    elif kwargs.keys() & NUMPY_KEYWORDS.keys():
        fix = ", ".join(f"{ours}= for {k}=" for k, ours in NUMPY_KEYWORDS.items() if k in kwargs)
    else:
        return
    raise TypeError(
        f"{name}: got NumPy's keywords ({', '.join(kwargs)}); a Variable's {name} takes PyTorch's dim "
        f"and keepdim, as in x.sum(dim=1, keepdim=True): {fix}"
    )


def refuse_todays_backward_keywords(keywords: dict) -> None:
    """Raise for backward(retain_graph=True) and the other keywords of today's backward."""
    names = ", ".join(f"{k}={v!r}" for k, v in keywords.items())
    if keywords.keys() <= {"retain_graph", "retain_variables", "create_graph", "inputs"}:
        raise BackwardError(
            f"backward: got {names}, today's PyTorch's keywords; this kit keeps the graph after backward, "
            "as v0.1.3 did, so backward() runs again without retain_graph (chapter 06), and it computes "
            "first derivatives only"
        )
    raise BackwardError(f"backward: got {names}; it takes gradient, and engine= and recorder= (chapter 04)")
