"""The graph in words: one line per Function, output first, with its inputs (what draw() shows when
a picture cannot be made, and ``str()`` of every Picture)."""

from __future__ import annotations

from .graph import GraphView


def summary(view: GraphView, style: str = "v0.1") -> str:
    """A plain-text description: one line per Function, output first, with its inputs."""
    functions = view.functions if style == "v0.1" else view.modern_functions()
    leaves = sum(view.is_leaf(fn) for fn in functions)
    names = {fn: view.name(fn, style) for fn in functions}
    roots = ", ".join(view.variable_label(slot) for slot in view.root_slots()) or "a Variable without graph"
    lines = [
        f"graph of {roots} ({style} names): {_count(len(functions) - leaves, 'Function', 'Functions')}, "
        f"{_count(leaves, 'leaf', 'leaves')}"
    ]
    width = max((len(n) for n in names.values()), default=0)
    for fn in reversed(functions):
        if view.is_leaf(fn):
            facts = view.facts((fn, 0))
            shape = f"shape {facts.shape}" if facts.exists else "freed"
            grad = "requires grad" if facts.requires_grad else "no grad"
            kind = "AccumulateGrad of a leaf" if style == "modern" else "Leaf"
            lines.append(f"  {names[fn]:<{width}}  {kind}, {shape}, {grad}")
            continue
        inputs = []
        for e in view.inputs[fn]:
            if style == "modern" and not e.needed:
                continue
            text = view.name(e.source, style)
            if len(e.source.output_ids or ()) > 1:
                text += f"[{e.output_nr}]"
            if not e.needed:
                text += " (no grad)"
            inputs.append(text)
        lines.append(f"  {names[fn]:<{width}}  <- {', '.join(inputs) if inputs else '(nothing)'}")
    return "\n".join(lines)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
