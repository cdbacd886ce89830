"""FrozenView: a GraphView that answers as the graph was at one moment, for pictures drawn later.

A Recording's frames are drawn when asked for (``stepper()``, ``.frames``), often cells after the
backward it recorded: by then a leaf may be frozen (``requires_grad = False``), freed, or changed in
place, and its ``.grad`` and data have moved on. ``GraphView`` reads those from the live objects;
``FrozenView`` reads them once, when it is made, so every frame shows the graph as the engine saw it.
The walk, the names and the edges are the GraphView's own: they never change after forward.
"""

from __future__ import annotations

from typing import Any

from .graph import GraphView, VariableFacts


class FrozenView(GraphView):
    """``view``'s graph, with what pictures read from live objects copied now.

    Data, gradients and saved tensors are copied only when a picture will show them (``values``,
    ``grads``, ``saved``: the DotOptions ``show_values``, ``show_grads``, ``show_saved``).
    """

    def __init__(
        self, view: GraphView, values: bool = False, grads: bool = False, saved: bool = False
    ) -> None:
        self.__dict__.update(view.__dict__)  # shared, not copied: none of it changes after forward
        self._facts = {slot: self._frozen_facts(view, slot, values, grads) for slot in self._slots()}
        self._saved = {fn: _copied(view.saved_tensors(fn)) for fn in self.functions if saved}

    def _slots(self) -> list:
        """Every (Function, output index) of the graph."""
        return [(fn, j) for fn in self.functions for j in range(len(fn.output_ids))]

    @staticmethod
    def _frozen_facts(view: GraphView, slot: tuple, values: bool, grads: bool) -> VariableFacts:
        facts = view.facts(slot)
        return facts._replace(
            data=_copied(facts.data) if values else None,
            grad=_copied(facts.grad) if grads else None,
        )

    def facts(self, slot: tuple) -> VariableFacts:
        """What a picture shows of the Variable at slot, as it was when this view was made."""
        return self._facts[slot]

    def saved_tensors(self, fn: Any) -> tuple | None:
        """fn's saved tensors as they were (None: changed in place already, or not kept)."""
        return self._saved.get(fn)


def _copied(value: Any) -> Any:
    """A copy of an array, or of each array in a tuple; None as it is."""
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    return None if value is None else value.copy()
