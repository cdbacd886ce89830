"""What draw(show_saved=True) shows against PyTorch's grad_fn._saved_* tensors (docs/differences.md row 50).

The kit draws the tensors its Functions saved, in both styles. Where PyTorch saves the same, the
shapes agree; where it saves something else, the difference is the one row 50 states.
"""

from __future__ import annotations

import numpy as np
import pytest

from varfunc import Variable, viz

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

DATA = [1.0, 2.0, 3.0]

SAME = {
    "x ** 2": lambda x: x**2,
    "2 ** x": lambda x: 2**x,
    "exp": lambda x: x.exp(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "sqrt": lambda x: x.sqrt(),
    "relu": lambda x: x.relu(),
    "tan": lambda x: x.tan(),
    "log": lambda x: x.log(),
    "abs": lambda x: x.abs(),
    "sin": lambda x: x.sin(),
    "clamp": lambda x: x.clamp(0.5),
    "x + 2": lambda x: x + 2,
    "sum": lambda x: x.sum(),
}

# row 50: {op: (PyTorch's saved tensors as (name, shape), the kit's saved shapes)}
SAVES_SELF_AND_RESULT = [("result", ()), ("self", (3,))]
DIFFERENT = {
    "x * 2": (lambda x: x * 2, [("other", ())], []),
    "2 * x": (lambda x: 2 * x, [("other", ())], []),
    "x / 2": (lambda x: x / 2, [("other", ())], []),
    "2 / x": (lambda x: 2 / x, [("other", ())], [(3,)]),
    "max": (lambda x: x.max(), SAVES_SELF_AND_RESULT, []),
    "min": (lambda x: x.min(), SAVES_SELF_AND_RESULT, []),
    "median": (lambda x: x.median(), SAVES_SELF_AND_RESULT, []),
}


def _torch_saved(op) -> list:
    """(name, shape) of each tensor PyTorch's node saved, sorted."""
    node = op(torch.tensor(DATA, dtype=torch.float64, requires_grad=True)).grad_fn
    tensors = {a[len("_saved_") :]: getattr(node, a) for a in dir(node) if a.startswith("_saved_")}
    return sorted((name, tuple(t.shape)) for name, t in tensors.items() if isinstance(t, torch.Tensor))


def _kit_saved(op) -> tuple:
    """The shapes of the tensors the kit's Function saved, and the saved nodes its modern drawing has."""
    y = op(Variable(np.array(DATA)))
    shapes = [tuple(t.shape) for t in y.creator.saved_tensors]
    source = viz.draw(y, style="modern", show_saved=True).source
    return shapes, source.count('label="saved ')


@pytest.mark.parametrize("name", SAME)
def test_the_saved_tensors_drawn_are_pytorchs_where_row_50_says_so(name):
    shapes, drawn = _kit_saved(SAME[name])
    want = _torch_saved(SAME[name])
    assert sorted(shapes) == sorted(shape for _, shape in want) and drawn == len(want)


@pytest.mark.parametrize("name", DIFFERENT)
def test_the_saved_tensors_differ_from_pytorchs_as_row_50_says(name):
    op, theirs, ours = DIFFERENT[name]
    assert _torch_saved(op) == theirs
    assert _kit_saved(op) == (ours, len(ours))
