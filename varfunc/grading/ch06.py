"""Checks for chapter 06 (hooks, accumulation, volatile, in-place): predictions and a clipping hook."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import VarfuncError
from ..variable import Variable
from .core import SECRET, CheckFailed, as_numbers, exercise, expect_close, expect_equal, require, running
from .predictions import expect_written_by_hand, predictions_wrong, set_hint

# The snippets of the in-place exercise: the notebook prints them from here, and the check runs them.
INPLACE_SNIPPETS = {
    "A": "w = Variable(np.ones(3))\nw.mul_(2)",
    "B": "c = Variable(np.ones(3), requires_grad=False)\nc.mul_(2)",
    "C": "w = Variable(np.ones(3))\nh = w * 2\nh.add_(1)\nh.sum().backward()",
    "D": "w = Variable(np.ones(3))\nh = w.exp()\nh.add_(1)\nh.sum().backward()",
    "E": "w = Variable(np.ones(3))\nh = w.tanh()\nh.tanh_()\nh.sum().backward()",
    "F": "w = Variable(np.ones(3))\nh = w * 2\nz = h * h\nh.data[0] = 5.0\nz.sum().backward()",
    "G": "w = Variable(np.ones(3))\nh = w * 2\nz = h * h\nh.data = h.data + 1\nz.sum().backward()",
}


def snippet_raises(source: str) -> bool:
    """Run one snippet in a fresh namespace: True if it raises one of the kit's errors."""
    try:
        exec(source, {"np": np, "Variable": Variable})  # noqa: S102 - the check's own snippets
    except VarfuncError:
        return True
    return False


@exercise(
    "ch06.accumulate",
    title="Predict .grad after repeated backward calls",
    points=1,
)
def check_accumulate(ns: dict) -> None:
    """The three predictions against what the engine really leaves in x.grad."""
    x = Variable(np.array([1.0, -2.0, 3.0]))
    y = (x * x).sum()
    truth = {}
    y.backward()
    truth["grad_after_one"] = x.grad.copy()
    y.backward()
    truth["grad_after_two"] = x.grad.copy()
    x.grad = None
    (x * 3).sum().backward()
    truth["grad_after_reset"] = x.grad.copy()
    hints = {  # questions, not the facts the predictions test
        "grad_after_one": "what is the derivative of sum(x * x) with respect to each element of x?",
        "grad_after_two": "does a second backward replace what .grad holds, or add to it?",
        "grad_after_reset": "what does .grad hold after x.grad = None, before this backward adds to it?",
    }
    require(ns, *truth)
    expect_written_by_hand(ns, *truth)
    for name, expected in truth.items():
        expect_close(name, as_numbers(name, ns[name]), expected, hints[name], secret=True)


@exercise(
    "ch06.clip_hook",
    title="A hook that records and clips a gradient",
    points=2,
    needs=("make_clip_hook",),
)
def check_clip_hook(ns: dict) -> None:
    """The hook records the largest |g| before clipping and returns a clipped copy, never changing g."""
    make_clip_hook = ns["make_clip_hook"]
    _check_hook_on_a_sum(make_clip_hook)
    _check_hook_on_one_leaf(make_clip_hook)
    _check_hook_called_twice(make_clip_hook)
    _check_fractional_values(make_clip_hook)
    _check_nothing_to_clip(make_clip_hook)
    _check_float32_gradient(make_clip_hook)
    case = "m.grad for a 2x3 leaf m, L = sum(m^2), limit 2.5"
    m = Variable(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -6.0]]))
    log_m: list = []
    with running(case):
        m.register_hook("clip", make_clip_hook(2.5, log_m))
        (m * m).sum().backward()  # dL/dm = 2m
    expect_close(
        case,
        m.grad,
        np.clip(2 * m.data, -2.5, 2.5),
        "work on whole arrays (np.abs, np.clip), whatever their shape",
    )
    expect_close(
        "log for the 2x3 gradient",
        np.array(log_m, dtype=float),
        [12.0],
        "append max |g| over the whole array, before clipping",
    )


def _clip_hint(got: Any, grad: np.ndarray, limit: float) -> str:
    """What the hook did to grad, judged from the gradient that came out (got)."""
    got, grad = np.asarray(got, dtype=float), np.asarray(grad, dtype=float)
    if got.shape != grad.shape:
        return "return an array of the gradient's shape: the clipped gradient"
    if np.allclose(got, grad):
        return "the gradient came through unclipped: return the clipped array from the hook"
    if np.allclose(got, np.minimum(grad, limit)):
        return f"values above {limit:g} are clipped, but values below -{limit:g} are not"
    if np.allclose(got, np.maximum(grad, -limit)):
        return f"values below -{limit:g} are clipped, but values above {limit:g} are not"
    bound = float(np.abs(got).max()) if got.size else limit
    if not np.isclose(bound, limit) and np.allclose(got, np.clip(grad, -bound, bound)):
        return (
            f"the values were clipped to [-{bound:g}, {bound:g}], not to [-{limit:g}, {limit:g}]: use the "
            "limit as it is given (it need not be a whole number)"
        )
    return f"clip every value into [-{limit:g}, {limit:g}] (np.clip) and return the clipped array"


def _check_hook_on_a_sum(make_clip_hook: Any) -> None:
    case = "a hook on s = a + b, limit 1, backward(seed [5, -7, 0.5])"
    a, b = Variable(np.array([1.0, 2.0, 3.0])), Variable(np.array([4.0, 5.0, 6.0]))
    s = a + b
    log: list = []
    seed = np.array([5.0, -7.0, 0.5])
    with running(case):
        hook = make_clip_hook(1.0, log)
        s.register_hook("clip", hook)
        s.backward(seed)
    hint = _clip_hint(a.grad, [5.0, -7.0, 0.5], 1.0)
    for name, leaf in (("a", a), ("b", b)):
        expect_close(f"{name}.grad for a hook on s = a + b", leaf.grad, [1.0, -1.0, 0.5], hint)
    expect_close(
        "the seed passed to backward",
        seed,
        [5.0, -7.0, 0.5],
        "don't clip in place: the root's gradient is the very array passed to backward; return a new one",
    )
    expect_close("log after one backward", np.asarray(log, dtype=float), [7.0], _log_hint(hook, log))


def _log_hint(hook: Any, log: list) -> str:
    """What to append, or, where the log given stayed empty while the hook kept a list of its own, to
    append to the given one."""
    if not log and any(
        isinstance(cell.cell_contents, list) and cell.cell_contents is not log
        for cell in getattr(hook, "__closure__", None) or ()
    ):
        return (
            "the log list given to make_clip_hook is still empty: append to it, don't make a new list "
            "(log = [] inside make_clip_hook makes one that the caller never sees)"
        )
    return "append max |g|, before clipping"


def _check_hook_on_one_leaf(make_clip_hook: Any) -> None:
    case = "c.grad for a hook on leaf c of c + d"
    c, d = Variable(np.array([1.0, 2.0, 3.0])), Variable(np.array([4.0, 5.0, 6.0]))
    log_c: list = []
    with running(case):
        c.register_hook("clip", make_clip_hook(1.0, log_c))
        (c + d).backward(np.array([9.0, -3.0, 0.5]))  # the largest |g| is a positive g this time
    expect_close(case, c.grad, [1.0, -1.0, 0.5], _clip_hint(c.grad, [9.0, -3.0, 0.5], 1.0))
    expect_close(
        "d.grad (no hook on d)", d.grad, [9.0, -3.0, 0.5], "a hook changes only its own Variable's gradient"
    )
    expect_close(
        "log for the gradient [9, -3, 0.5]",
        np.asarray(log_c, dtype=float),
        [9.0],
        "append max |g|, before clipping",
    )


def _check_hook_called_twice(make_clip_hook: Any) -> None:
    case = "x.grad through a hook on h = 3x, L = sum(h^2), limit 2"
    x = Variable(np.array([0.1, 1.0, -2.0]))
    h = x * 3
    log2: list = []
    with running(case):
        h.register_hook("clip", make_clip_hook(2.0, log2))
        (h * h).sum().backward()  # dL/dh = 2h = 6x = [0.6, 6, -12]
    expect_close(
        case,
        x.grad,
        3 * np.clip(6 * x.data, -2.0, 2.0),
        "the hook's return value replaces h's gradient before Mul's backward runs",
    )
    with running("a second backward through h: L = sum(0.5 h^2)"):
        (0.5 * h * h).sum().backward()  # dL/dh = h = [0.3, 3, -6]: a smaller largest |g| than the first
    expect_equal("log after two backward calls", len(log2), 2, "append one entry per call of the hook")
    expect_close(
        "values in the log (the second backward's gradient is [0.3, 3, -6])",
        np.array(log2, dtype=float),
        [12.0, 6.0],
        "append this call's max |g|, not the largest so far",
    )
    expect_close(
        "x.grad after the second backward through h (both calls' clipped gradients, summed)",
        x.grad,
        3 * np.clip(6 * x.data, -2.0, 2.0) + 3 * np.clip(3 * x.data, -2.0, 2.0),
        "the first backward's x.grad was right, the second's is not: at every call the hook returns that "
        "call's gradient, clipped (nothing kept from an earlier call)",
    )


def _check_fractional_values(make_clip_hook: Any) -> None:
    """A limit and a largest |g| that are not whole numbers: neither may be rounded."""
    seed = np.array([0.3, -1.75, 0.5])
    case = "e.grad for a hook on leaf e of e + f, limit 1.25, backward(seed [0.3, -1.75, 0.5])"
    e, f = Variable(np.array([1.0, 2.0, 3.0])), Variable(np.array([4.0, 5.0, 6.0]))
    log_e: list = []
    with running(case):
        e.register_hook("clip", make_clip_hook(1.25, log_e))
        (e + f).backward(seed.copy())
    expect_close(case, e.grad, [0.3, -1.25, 0.5], _clip_hint(e.grad, seed, 1.25))
    expect_close(
        f"{case}: the 0.3 passed through with every float64 digit",
        e.grad,
        [0.3, -1.25, 0.5],
        "the gradient came back rounded to float32's 7 digits: return the clipped array in the "
        "gradient's own dtype (no float32 cast)",
        rtol=1e-12,
        atol=0.0,
    )
    logged = np.array(log_e, dtype=float)
    whole = logged.shape == (1,) and logged[0] in (1.0, 2.0)  # 1.75 rounded down or up
    expect_close(
        "log for the gradient [0.3, -1.75, 0.5]",
        logged,
        [1.75],
        "the log holds a whole number: append max |g| as it is, a Python float, not rounded"
        if whole
        else "append max |g|, before clipping",
    )


def _check_nothing_to_clip(make_clip_hook: Any) -> None:
    """A gradient already within the limit: logged all the same, and passed on with every digit."""
    seed = np.array([0.123456789, -0.5, 0.25])
    case = "p.grad for a hook on leaf p of p + q, limit 1, backward(seed [0.123456789, -0.5, 0.25])"
    p, q = Variable(np.array([1.0, 2.0, 3.0])), Variable(np.array([4.0, 5.0, 6.0]))
    log_p: list = []
    with running(case):
        p.register_hook("clip", make_clip_hook(1.0, log_p))
        (p + q).backward(seed.copy())
    expect_close(
        f"{case}: nothing to clip",
        p.grad,
        seed,
        "a gradient within [-limit, limit] must come out as it went in, every digit (np.clip leaves it "
        "alone; nothing rounded)",
        rtol=1e-12,
        atol=0.0,
    )
    expect_close(
        "log for the gradient [0.123456789, -0.5, 0.25], which needs no clipping",
        np.array(log_p, dtype=float),
        [0.5],
        "append max |g| at every call of the hook, also when nothing needs clipping",
    )


@exercise(
    "ch06.inplace",
    title="Predict which in-place snippets raise",
    points=2,
)
def check_inplace(ns: dict) -> None:
    """The predicted set of snippet letters against running each snippet."""
    require(ns, "predicted_raises")
    expect_written_by_hand(ns, "predicted_raises")
    predicted = ns["predicted_raises"]
    if not isinstance(predicted, (set, frozenset, list, tuple)):
        raise CheckFailed(
            "predicted_raises",
            "a set of letters like {'A', 'C'}",
            type(predicted).__name__,
            set_hint(predicted, "one string per snippet, in a set: {'A', 'C'}, not 'AC' or 'A, C'"),
        )
    predicted = {str(letter).strip().upper() for letter in predicted}
    unknown = sorted(predicted - set(INPLACE_SNIPPETS))
    if unknown:
        raise CheckFailed(
            "predicted_raises",
            f"letters from {min(INPLACE_SNIPPETS)} to {max(INPLACE_SNIPPETS)}",
            unknown,
            "the snippets' letters only, one per item: {'A', 'C'}, not {'A, C'}",
        )
    actual = {letter for letter, source in INPLACE_SNIPPETS.items() if snippet_raises(source)}
    wrong = [letter for letter in sorted(INPLACE_SNIPPETS) if (letter in predicted) != (letter in actual)]
    if wrong:  # not which ones: for a yes-or-no question, that would be the answer
        raise CheckFailed(
            predictions_wrong(len(wrong), len(INPLACE_SNIPPETS)),
            SECRET,
            "raises: " + (", ".join(sorted(predicted)) or "none"),
            "; ".join(f"{letter}: {hint}" for letter, hint in _HINTS.items()),
        )


# Questions, not facts: the hints are shown for every letter, and a fact would give its answer away.
_HINTS: dict[str, Any] = {
    "A": "may a leaf that requires grad change in place?",
    "B": "and a leaf that requires no grad?",
    "C": "what does MulConstant save for its backward?",
    "D": "what does Exp save for its backward?",
    "E": "what did the first Tanh save, and what does tanh_ change?",
    "F": "does a write through .data[...] move the version counter?",
    "G": "does assigning .data move it?",
}


def _check_float32_gradient(make_clip_hook: Any) -> None:
    """A float32 leaf: np.abs(grad).max() is an np.float32 there, which is no Python float."""
    case = "the log for a hook on a float32 leaf w of w + v, backward(seed [0.25, -2.5], float32)"
    w = Variable(np.array([1.0, 2.0], dtype=np.float32))
    v = Variable(np.array([3.0, 4.0], dtype=np.float32))
    log_w: list = []
    with running(case):
        w.register_hook("clip", make_clip_hook(1.0, log_w))
        (w + v).backward(np.array([0.25, -2.5], dtype=np.float32))
    expect_close(case, np.array(log_w, dtype=float), [2.5], "append max |g|, before clipping")
    expect_equal(
        f"{case}: the type of the entry",
        type(log_w[0]).__name__,
        "float",
        "the entry is a NumPy scalar (np.abs(grad).max() of a float32 gradient is an np.float32): "
        "append it as a Python float, float(...)",
    )
