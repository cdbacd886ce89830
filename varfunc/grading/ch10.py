"""Chapter 10 (Then and now): modern names, next_functions from previous_functions, orderings."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Function
from ..variable import Variable
from ..viz import ORDERINGS, compare_orders, naive_recursive_backward
from .core import (
    NOT_SOLVED,
    SECRET,
    CheckFailed,
    exercise,
    expect_equal,
    expect_no_text,
    kit_code_refused,
    parts,
    require,
    running,
)
from .predictions import expect_written_by_hand, set_hint


def _holds_ellipsis(value: Any) -> bool:
    """True when a template's ... is still somewhere in value (a key, a value, an item)."""
    return any(part is ... for part in parts(value))


# --- ch10.predict_modern ----------------------------------------------------------------------------


def _modern_graph() -> dict:
    """{grad_fn name: [(next name or None, output_nr), ...]} for q = (x * c).exp() + x, c a constant."""
    x = Variable(np.array([1.0, 2.0]), requires_grad=True)
    c = Variable(np.array([3.0, 4.0]), requires_grad=False)
    q = (x * c).exp() + x
    graph, todo = {}, [q.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn.name() in graph:
            continue
        graph[fn.name()] = [(None if g is None else g.name(), nr) for g, nr in fn.next_functions]
        todo += [g for g, _ in fn.next_functions]
    return graph


@exercise(
    "ch10.predict_modern",
    title="Predict today's grad_fn names and next_functions",
    points=2,
)
def check_predict_modern(ns: dict) -> None:
    require(ns, "predicted_next")
    expect_written_by_hand(ns, "predicted_next")
    predicted = ns["predicted_next"]
    if _holds_ellipsis(predicted):  # the template, not filled in yet
        raise CheckFailed(
            NOT_SOLVED,
            hint="fill in predicted_next: replace the ... with one entry per grad_fn of q, "
            '"NameBackward0": [(next name or None, output_nr), ...]',
        )
    truth = _modern_graph()
    if not isinstance(predicted, dict):
        raise CheckFailed(
            "predicted_next",
            "a dict {name: [(name or None, output_nr), ...]}",
            type(predicted).__name__,
            'one key per grad_fn: {"NameBackward0": [(next name or None, output_nr), ...], ...}',
        )
    names = sorted(k for k in truth if k != "AccumulateGrad")
    if "AccumulateGrad" in predicted:
        raise CheckFailed(
            "the keys of predicted_next",
            "one key per operation",
            "a key 'AccumulateGrad'",
            "AccumulateGrad nodes have no inputs to list: name them only inside the pairs",
        )
    expect_equal(
        "the grad_fn names in the graph (keys of predicted_next)",
        sorted(predicted),
        names,
        f"one key per operation ({len(names)} of them), named as PyTorch 2 names it (Mul -> MulBackward0)",
        secret=True,
    )
    for name in names:
        _expect_pairs(name, predicted[name])
        got = [tuple(edge) for edge in predicted[name]]
        expect_equal(
            f"{name}.next_functions",
            got,
            truth[name],
            "one (name, output_nr) pair per input, in input order; a leaf that requires grad is "
            "'AccumulateGrad', an input that needs no gradient is (None, 0)",
            secret=True,
        )


def _expect_pairs(name: str, edges: Any) -> None:
    """CheckFailed saying the form when edges is not a list of (name or None, output_nr) pairs."""
    case, form = f"{name}.next_functions", "a list of (name or None, output_nr) pairs"
    if _is_pair(edges):
        raise CheckFailed(case, form, edges, f"one pair alone still goes in a list: [{edges!r}]")
    if not isinstance(edges, (list, tuple)):
        raise CheckFailed(case, form, edges, f"write a list of pairs: [{_PAIR}, ...]")
    for edge in edges:
        if isinstance(edge, str):
            hint = f"({edge!r}) is a string, not a pair (brackets alone make no tuple): write ({edge!r}, 0)"
        elif edge is None or isinstance(edge, (int, np.integer)):
            hint = f"{edge!r} alone is not a pair: each input's entry is {_PAIR}, such as (None, 0)"
        elif (
            isinstance(edge, (tuple, list)) and len(edge) == 2 and not isinstance(edge[1], (int, np.integer))
        ):
            hint = f"the second element of {edge!r} is the output number, an int such as 0, not {edge[1]!r}"
        elif not _is_pair(edge):
            hint = f"each input's entry is one pair, {_PAIR}"
        else:
            continue
        raise CheckFailed(case, form, edges, hint)


_PAIR = "(name or None, output_nr)"


def _is_pair(edge: Any) -> bool:
    """True for a (name or None, output_nr) pair, as a tuple or a list."""
    return (
        isinstance(edge, (tuple, list))
        and len(edge) == 2
        and (edge[0] is None or isinstance(edge[0], str))
        and isinstance(edge[1], (int, np.integer))
    )


# --- ch10.next_functions ----------------------------------------------------------------------------


class _Halves(Function):
    """Two outputs: the first and the second half of a vector."""

    def forward(self, a):
        self.half = a.shape[0] // 2
        return a[: self.half].copy(), a[self.half :].copy()

    def backward(self, grad_lo, grad_hi):
        zeros = np.zeros(self.half)
        return np.concatenate([zeros if grad_lo is None else grad_lo, zeros if grad_hi is None else grad_hi])


def _next_cases() -> list:
    x = Variable(np.array([1.0, 2.0, 3.0, 4.0]), requires_grad=True)
    c = Variable(np.array([2.0, 2.0, 2.0, 2.0]), requires_grad=False)
    lo, hi = _Halves()(x)
    values, indices = Variable(np.array([[1.0, 5.0], [3.0, 2.0]]), requires_grad=True).max(dim=0)
    w = Variable(np.array([0.5, 0.5, 0.5, 0.5]), requires_grad=True)
    x_times_w = (x * w).creator
    w.requires_grad = False  # frozen after the Function ran: its needs_input_grad still says yes
    return [
        ("x * c (c needs no grad)", (x * c).creator),
        ("x * x (one input used twice)", (x * x).creator),
        ("hi * 2 + lo, the Add (hi is output 1 of a two-output Function)", (hi * 2 + lo).creator),
        ("hi * 2, the MulConstant (hi is output 1)", (hi * 2).creator),
        ("values * indices after max(dim=0) (indices are not differentiable)", (values * indices).creator),
        ("a Leaf (no inputs)", x.creator),
        ("x * w, w frozen (w.requires_grad = False) after the product was made", x_times_w),
    ]


def _describe(edges: Any) -> Any:
    """The pairs with each Function shown by its class name, in the form given (a list stays a list,
    a name given as a string shows as one)."""
    try:
        return [type(pair)((_shown(fn), nr)) for pair in edges for fn, nr in [pair]]
    except (TypeError, ValueError):
        return edges


def _shown(fn: Any) -> Any:
    if fn is None:
        return None
    return f"{fn!r} (a string)" if isinstance(fn, str) else type(fn).__name__


@exercise(
    "ch10.next_functions",
    title="next_functions from previous_functions, output_ids and needs_input_grad",
    points=3,
    needs=("next_functions_of",),
)
def check_next_functions(ns: dict) -> None:
    next_functions_of = ns["next_functions_of"]
    owner = next(klass for klass in Function.__mro__ if "next_functions" in vars(klass))
    getter = (vars(owner)["next_functions"], "fget")  # the property's function: reading it refuses
    hint = "compute the pairs from fn.previous_functions, fn.needs_input_grad and output_ids"
    for case, fn in _next_cases():
        expected = fn.next_functions
        where = f"{case}: next_functions_of"
        with running(where), kit_code_refused(where, hint, getter):
            got = next_functions_of(fn)
        if not isinstance(got, tuple):
            raise CheckFailed(
                f"{case}: the type of the result", "tuple", type(got).__name__, "return a tuple"
            )
        hint = _first_difference(got, expected)
        if hint:
            raise CheckFailed(case, _describe(expected), _describe(got), hint)


def _first_difference(got: tuple, expected: tuple) -> str:
    """A hint at the first place where got differs from the expected pairs ("" if it does not)."""
    if len(got) != len(expected):
        return f"one pair per input: this Function has {len(expected)} (fn.previous_functions)"
    for index, (pair, right) in enumerate(zip(got, expected)):
        if not (isinstance(pair, tuple) and len(pair) == 2):
            return f"pair {index} must be a tuple of two: (Function or None, output number)"
        if isinstance(pair[0], str):
            return f"pair {index}: return the Function objects, not their names (fn.previous_functions)"
        if pair[0] is None and right[0] is not None:
            return f"pair {index}: the Function needed input {index}'s gradient as it ran (needs_input_grad)"
        if pair[0] is not right[0]:
            return f"pair {index}: which Function made input {index}, and does that input need a gradient?"
        if pair[1] != right[1] and right[0] is None:
            return f"pair {index}: input {index} needs no gradient; such an input's pair is (None, 0)"
        if pair[1] != right[1]:
            return f"pair {index}: which output of that Function is input {index}? (its output_ids)"
    return ""


# --- ch10.double_count ------------------------------------------------------------------------------


def _reused_graph() -> tuple:
    a = Variable(np.array([2.0]), requires_grad=True)
    b = a * a
    c = b * 3 + b
    return c.sum(), {"a": a}


@exercise(
    "ch10.double_count",
    title="Predict which backward ordering counts a reused intermediate twice",
    points=2,
)
def check_double_count(ns: dict) -> None:
    require(ns, "wrong_orders", "naive_grad_a")
    expect_written_by_hand(ns, "wrong_orders", "naive_grad_a")
    loss, params = _reused_graph()
    loss.backward()
    true_grad = float(params["a"].grad[0])
    results = dict(compare_orders(_reused_graph).results)
    naive_loss, naive_params = _reused_graph()
    results["naive"] = naive_recursive_backward(naive_loss, params=naive_params)
    wrong = {name for name, r in results.items() if not np.isclose(float(r.leaf_grads["a"][0]), true_grad)}
    predicted = ns["wrong_orders"]
    known = set(ORDERINGS) | {"naive"}
    if not isinstance(predicted, (set, frozenset, list, tuple)) or not set(predicted) <= known:
        raise CheckFailed(
            "wrong_orders",
            f"a set of names from {sorted(known)}",
            predicted,
            _orders_hint(predicted, known),
        )
    expect_equal(
        "the orderings that give a wrong gradient for a",
        sorted(set(predicted)),
        sorted(wrong),
        "for each ordering: may b's backward run before both uses of b in c have sent their gradient?",
        secret=True,
    )
    naive = float(results["naive"].leaf_grads["a"][0])
    guess = _one_number(ns["naive_grad_a"])
    if not np.isclose(guess, naive):
        raise CheckFailed(
            "the gradient of a that the naive recursion reports",
            SECRET,
            guess,
            "follow the recursion by hand: a node sends a gradient to each input's slot, then the "
            "recursion visits its inputs in order, first input first (b * 3 before b); each time it "
            "reaches b = a * a it runs Mul's backward with everything b's slot holds so far, and sends "
            "it to a twice (a is both inputs)",
        )


def _orders_hint(predicted: Any, known: set) -> str:
    """What is wrong with the form of wrong_orders: one name not in a set, or a name's spelling."""
    if isinstance(predicted, str) and predicted in known:
        return f"{predicted!r} alone is a string: write {{{predicted!r}}}, a set (brackets alone make none)"
    names = predicted if isinstance(predicted, (set, frozenset, list, tuple)) else ()
    if names and all(isinstance(n, str) for n in names) and {n.strip().lower() for n in names} <= known:
        return "write each name exactly as listed, in lower case"
    return set_hint(
        predicted, "a set of the names listed, one string each (set() if you think none is wrong)"
    )


def _one_number(value: Any) -> float:
    """naive_grad_a as a float: a number, or a list or array holding one (as the chapter prints a=[8])."""
    try:
        array = None if value is None else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or array.size != 1:
        raise CheckFailed(
            "naive_grad_a",
            "a number",
            value,
            "write the gradient of a as one number, e.g. naive_grad_a = 5.0",
        )
    expect_no_text("naive_grad_a", value)
    return float(array.reshape(-1)[0])
