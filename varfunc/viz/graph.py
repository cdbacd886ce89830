"""A read-only, deterministic view of a varfunc graph: Functions numbered in graph order, and names.

The walk starts at the creators of the given Variables (in the order given) and follows
``previous_functions`` depth first, inputs in order, without recursion (deep graphs are fine). A
Function gets its number when all its inputs are numbered (post-order), so numbers grow in the
direction of the forward pass: ``Leaf#0`` and ``MulConstant#1`` come before the ``Sum#3`` they feed.
Numbers never come from ``id()``, so the same code gives the same numbers on every run.

A Variable in the picture is one output slot of a Function: ``(creator, output index)``. The graph
holds no reference to intermediate Variables (a Function keeps only their ids), so an intermediate
is known by its slot, its shape (from the consumer's ``input_shapes``) and nothing else; the
Variables given to ``GraphView`` (roots, ``params`` values) and the leaves (``Leaf.variable``) are
known in full.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from ..leaf import Leaf
from ..variable import Variable

# draw() renders pictures of at most this many nodes unless max_nodes says otherwise: a 10,000-op
# chain drew a 13 MB SVG that took 43 s to show in a notebook. A node is anything the picture draws:
# a Function or Leaf box, a Variable, a saved tensor (a chain of n ops draws 2n + 2 in v0.1 style).
MAX_NODES = 1000
NODES_MEANING = "nodes (Function and Leaf boxes, Variables, saved tensors)"


def _as_list(var_or_vars: Any) -> list:
    if isinstance(var_or_vars, (list, tuple)):
        items = list(var_or_vars)
        if not items:
            raise ValueError("viz: got an empty list; give the Variable (or Variables) to draw")
    else:
        items = [var_or_vars]
    for item in items:
        if not isinstance(item, Variable):
            raise TypeError(
                f"viz: expected a Variable or a list of Variables, got {_described(item)}; "
                "wrap an array in Variable(array) first"
            )
    return items


class VariableFacts(NamedTuple):
    """What a picture shows of one Variable, as read from the live objects (``GraphView.facts``)."""

    exists: bool  # the Variable object is known (a leaf's may have been freed; intermediates are not kept)
    shape: tuple | None  # None if unknown
    requires_grad: bool  # a leaf's: its Leaf's flag; another's: its own (True if unknown)
    overwritten: bool  # a leaf's Variable changed in place since: its data is no longer the Leaf's
    data: Any  # None unless the Variable is known
    grad: Any  # a leaf's .grad (None before its first backward); None for the others


class Edge:
    """One use of an input: ``source`` output ``output_nr`` is input ``input_nr`` of ``target``."""

    __slots__ = ("source", "output_nr", "target", "input_nr", "needed")

    def __init__(self, source: Any, output_nr: int, target: Any, input_nr: int, needed: bool) -> None:
        self.source = source
        self.output_nr = output_nr
        self.target = target
        self.input_nr = input_nr
        self.needed = needed


def post_order(start: Any, children: Callable[[Any], list], visited: set) -> list:
    """Every Function reachable from start that is not in visited yet, each one after all it reaches.

    Depth-first, like a recursive walk (micrograd's build_topo), but with an explicit stack of
    (Function, its children still to look at), so a deep chain cannot hit Python's recursion limit.
    visited is updated, so several calls can share it.
    """
    order = []
    visited.add(start)
    stack = [(start, iter(children(start)))]
    while stack:
        fn, pending = stack[-1]
        for child in pending:
            if child not in visited:
                visited.add(child)
                stack.append((child, iter(children(child))))
                break
        else:  # every child done: fn comes after all of them
            stack.pop()
            order.append(fn)
    return order


class GraphView:
    """Functions of the graph behind ``roots`` in post-order, their input edges, and their names.

    ``params`` maps names to Variables (leaves, intermediates or roots); a named leaf's Leaf is
    called by that name in logs (``x``), unnamed ones ``Leaf#k``; other Functions ``Type#k``.
    """

    def __init__(self, roots: Any, params: dict | None = None) -> None:
        self.roots = _as_list(roots)
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(
                f"viz: params is {_described(params)}, not a dict; it names Variables: params={{'w': w}}, "
                "or a model's: params=dict(model.named_parameters())"
            )
        self.params = dict(params or {})
        for name, value in self.params.items():
            if not isinstance(name, str):
                raise TypeError(f"viz: the params key {name!r} is not a str; params maps names to Variables")
            if not isinstance(value, Variable):
                raise TypeError(
                    f"viz: params[{name!r}] is {_described(value)}, not a Variable; name the Variable "
                    f"itself (params={{{name!r}: x}}, not x.data)"
                )
        self.functions: list = []  # post-order: every input before its consumers
        self.index: dict = {}  # Function -> number
        self.inputs: dict = {}  # Function -> [Edge per input, in input order]
        self._walk()
        self._consumers: dict = {}  # Function -> edges that read one of its outputs, in graph order
        for fn in self.functions:
            for edge in self.inputs[fn]:
                self._consumers.setdefault(edge.source, []).append(edge)
        self.variable_names: dict = {}  # (Function, output_nr) -> name from params
        for name, variable in self.params.items():
            slot = self.slot_of(variable)
            if slot is not None and slot not in self.variable_names:
                self.variable_names[slot] = name
        self._find_roots_and_known()

    def _find_roots_and_known(self) -> None:
        """Root slots and known Variables, found once, as they are now (as the walk is): a label asks
        about its node, and a scan of the roots per node would cost nodes x roots."""
        self._root_slots: list = []  # in the order given, once each
        self._root_set: set = set()  # the same, for `in`
        self._root_outputs: dict = {}  # Function -> [output index of each root it made]
        self._known: dict = {}  # slot -> the first of params' values, then roots, that is there
        self._graphless: list = []  # positions in roots of Variables with no graph (volatile ones)
        self._modern_starts: list = []  # each root's grad_fn, where it has one (modern_functions)
        for variable in list(self.params.values()) + self.roots:
            slot = self.slot_of(variable)
            if slot is not None:
                self._known.setdefault(slot, variable)
        for i, root in enumerate(self.roots):
            slot = self.slot_of(root)
            if slot is None:
                self._graphless.append(i)
            elif slot not in self._root_set:
                self._root_slots.append(slot)
                self._root_set.add(slot)
                self._root_outputs.setdefault(slot[0], []).append(slot[1])
            # as in PyTorch, no grad_fn for a leaf, nor for a root that needs no gradient (max's indices)
            if slot is not None and root.requires_grad and not self.is_leaf(slot[0]):
                self._modern_starts.append(slot[0])

    # --- the walk -------------------------------------------------------------------------------

    def _walk(self) -> None:
        visited = set()
        for root in self.roots:
            start = getattr(root, "creator", None)
            if start is None or start in visited:
                continue
            for fn in post_order(start, lambda f: [e.source for e in self._edges(f)], visited):
                self.index[fn] = len(self.functions)
                self.functions.append(fn)

    def _edges(self, fn: Any) -> list:
        edges = self.inputs.get(fn)
        if edges is None:
            edges = []
            needs = fn.needs_input_grad or ()
            for input_nr, ((prev_fn, arg_id), needed) in enumerate(zip(fn.previous_functions or (), needs)):
                edges.append(Edge(prev_fn, prev_fn.output_ids[arg_id], fn, input_nr, bool(needed)))
            self.inputs[fn] = edges
        return edges

    # --- questions about the graph ------------------------------------------------------------

    @staticmethod
    def is_leaf(fn: Any) -> bool:
        """Whether fn is a Leaf (a user-made Variable's creator) rather than a Function."""
        return isinstance(fn, Leaf)

    def slot_of(self, variable: Any) -> tuple | None:
        """(creator, output index) of a Variable of this graph, or None."""
        creator = getattr(variable, "creator", None)
        if creator is None or creator not in self.index:
            return None
        return creator, creator.output_ids[id(variable)]

    def known_variable(self, slot: tuple) -> Any:
        """The Variable object for a slot when the graph can reach it (leaf, root, params), else None."""
        fn = slot[0]
        if self.is_leaf(fn):
            return fn.variable
        return self._known.get(slot)

    def overwritten(self, slot: tuple) -> bool:
        """True for a Leaf whose Variable was changed in place since: its data is no longer the Leaf's."""
        fn = slot[0]
        variable = fn.variable if self.is_leaf(fn) else None
        return variable is not None and variable.creator is not fn

    def facts(self, slot: tuple) -> VariableFacts:
        """What a picture shows of the Variable at slot, read now from the live objects."""
        fn, variable = slot[0], self.known_variable(slot)
        if self.is_leaf(fn):
            requires_grad = fn.requires_grad  # its own: after an in-place op the Variable's is another's
        else:
            requires_grad = variable is None or variable.requires_grad
        data = None if variable is None else variable.data
        grad = variable._grad if variable is not None and self.is_leaf(fn) else None  # _grad: no zeros stored
        return VariableFacts(
            variable is not None, self.variable_shape(slot), requires_grad, self.overwritten(slot), data, grad
        )

    def saved_tensors(self, fn: Any) -> tuple | None:
        """fn's saved tensors, or None when one was changed in place since forward (they are refused)."""
        try:
            return fn.saved_tensors
        except Exception:  # noqa: BLE001 - a picture says so, it never fails
            return None

    def graphless_roots(self) -> list:
        """Positions in roots of the Variables that have no graph (volatile ones)."""
        return list(self._graphless)

    def root_slots(self) -> list:
        """(Function, output index) of each root Variable, once each, in the order given."""
        return list(self._root_slots)

    def is_root(self, slot: tuple) -> bool:
        """Whether slot holds one of the root Variables."""
        return slot in self._root_set

    def root_outputs(self, fn: Any) -> list:
        """The output indices of fn that hold a root Variable, in the order given."""
        return list(self._root_outputs.get(fn, ()))

    def consumers(self, fn: Any) -> list:
        """Edges that read an output of fn, in graph order."""
        return list(self._consumers.get(fn, ()))

    def modern_functions(self) -> list:
        """The Functions a modern walk over ``next_functions`` reaches (edges that need a gradient).

        The walk starts at each root's ``grad_fn``: none for a leaf, nor for a root that needs no
        gradient (the indices of ``max``), as in PyTorch.
        """
        reached = set(self._modern_starts)
        todo = list(reached)
        while todo:
            fn = todo.pop()
            for edge in self.inputs[fn]:
                if edge.needed and edge.source not in reached:
                    reached.add(edge.source)
                    todo.append(edge.source)
        return [fn for fn in self.functions if fn in reached]

    # --- names ----------------------------------------------------------------------------------

    def type_name(self, fn: Any, style: str = "v0.1") -> str:
        """The class name (``MulConstant``), or the grad_fn name PyTorch shows in modern style."""
        return fn.name() if style == "modern" else type(fn).__name__

    def label_name(self, fn: Any, style: str = "v0.1") -> str:
        """``Type#k`` always (the node label in pictures), ``Leaf#0`` even for a named leaf."""
        return f"{self.type_name(fn, style)}#{self.index.get(fn, '?')}"

    def name(self, fn: Any, style: str = "v0.1") -> str:
        """``MulConstant#1`` (``MulBackward0#1`` in modern style); a named leaf's Leaf is its name."""
        if self.is_leaf(fn):
            named = self.variable_names.get((fn, 0))
            if named is not None:
                return named
        return self.label_name(fn, style)

    def variable_label(self, slot: tuple) -> str:
        """The name from params, else ``output`` for a root and ``Variable`` for the others."""
        named = self.variable_names.get(slot)
        if named is not None:
            return named
        return "output" if self.is_root(slot) else "Variable"

    def variable_shape(self, slot: tuple) -> tuple | None:
        """The shape of the Variable at slot: its own, or as a consumer saw it; None if unknown."""
        variable = self.known_variable(slot)
        if variable is not None:
            return tuple(variable.shape)
        fn, output_nr = slot
        for edge in self.consumers(fn):
            if edge.output_nr == output_nr:
                return tuple(edge.target.input_shapes[edge.input_nr])
        return None


def _described(item: Any) -> str:
    """``a numpy.ndarray of shape (2,)``, ``a float``: what was given instead of a Variable."""
    kind = type(item)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    shape = f" of shape {item.shape}" if hasattr(item, "shape") else ""
    return f"a {name}{shape}"


def check_max_nodes(where: str, max_nodes: Any) -> None:
    """Refuse a max_nodes that is not None or a whole number, 0 or more (a string failed much later)."""
    if max_nodes is None:
        return
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer)):
        raise TypeError(
            f"{where}: max_nodes must be a number of nodes (an int) or None for no limit, got {max_nodes!r}"
        )
    if max_nodes < 0:
        raise ValueError(f"{where}: max_nodes must be 0 or more (or None for no limit), got {max_nodes}")


def too_large(nodes: int, max_nodes: int | None) -> str:
    """'' when a picture of this many nodes is within max_nodes (None: no limit), else a sentence.

    nodes: what the picture draws (dot.node_count): Function and Leaf boxes, Variables, saved tensors.
    """
    if max_nodes is None or nodes <= max_nodes:
        return ""
    return f"a picture of this graph has {nodes:,} {NODES_MEANING}, more than max_nodes={max_nodes}"
