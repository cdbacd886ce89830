"""Random expression graphs for the property tests: a Hypothesis strategy and a builder.

A ``Program`` is a DAG written as a list of steps over 1-3 leaves. Each step applies one op to
earlier values (leaves or step results, so intermediates get reused) and appends its result. The
last step is the output. Every op is written with methods that varfunc Variables and torch tensors
share, so ``build`` runs the same program on either (tests/test_torch_oracle.py compares them).

Ops keep to safe domains (log of v*v + 1, sqrt of v*v + 0.25, ...) and keep values bounded (products
take a tanh of one side), so central differences stay accurate; reductions along a dim keep the dim,
so every value's shape stays in the broadcast family of ``LEAF_SHAPES``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import varfunc as vf

LEAF_SHAPES = ((3, 1), (1, 4), (4,), (3, 4), (1,), ())


def _maximum(a, b):
    return a.cmax(b) if hasattr(a, "cmax") else a.maximum(b)


def _minimum(a, b):
    return a.cmin(b) if hasattr(a, "cmin") else a.minimum(b)


# name -> function of one value; all keep the shape.
UNARY = {
    "neg": lambda v: -v,
    "tanh": lambda v: v.tanh(),
    "sigmoid": lambda v: v.sigmoid(),
    "sin": lambda v: v.sin(),
    "cos": lambda v: v.cos(),
    "atan": lambda v: v.atan(),
    "abs": lambda v: v.abs(),
    "exp_tanh": lambda v: v.tanh().exp(),
    "log_sq": lambda v: (v * v + 1).log(),
    "sqrt_sq": lambda v: (v * v + 0.25).sqrt(),
    "inv_sq": lambda v: 1 / (v * v + 1),
    "rpow": lambda v: 2 ** v.tanh(),
    "pow_c": lambda v: (v.sigmoid() + 0.5) ** 2.5,
    "affine": lambda v: 0.5 * v - 1,
}

# Shape-preserving ops that need at least one dim.
UNARY_NDIM = {
    "softmax": lambda v: v.softmax(-1),
    "log_softmax": lambda v: v.log_softmax(-1),
}

# name -> function of two values; the result has the broadcast shape.
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul_tanh": lambda a, b: a * b.tanh(),
    "div_safe": lambda a, b: a / (b * b + 1),
    "pow_safe": lambda a, b: (a.sigmoid() + 0.5) ** b.tanh(),
    "cmax": _maximum,
    "cmin": _minimum,
}

# name -> function of (value, dim): reduce along dim, keeping it as size 1.
REDUCE_DIM = {
    "sum": lambda v, d: v.sum(d, keepdim=True),
    "mean": lambda v, d: v.mean(d, keepdim=True),
    "max": lambda v, d: v.max(d, keepdim=True)[0],
    "min": lambda v, d: v.min(d, keepdim=True)[0],
}

# name -> function of one value, reducing to 0-d.
REDUCE_ALL = {
    "sum_all": lambda v: v.sum(),
    "mean_all": lambda v: v.mean(),
    "max_all": lambda v: v.max(),
}


@dataclass(frozen=True)
class Program:
    """Leaf shapes, a seed for their data, and steps ``(kind, name, operand indices, dim)``."""

    leaf_shapes: tuple
    seed: int
    steps: tuple

    def leaf_data(self) -> list:
        """The leaves' float64 data, drawn from the seed: values in [-1.5, 1.5), one in each of n equal
        slots in a random order, so a leaf has no near-ties (seed 275 once had two maxima 4.5e-7 apart,
        closer than gradcheck's eps: its central difference then straddled the switch)."""
        rng = np.random.default_rng(self.seed)
        leaves = []
        for shape in self.leaf_shapes:
            n = math.prod(shape)
            slots = rng.permutation(n) + rng.uniform(0.25, 0.75, size=n)
            leaves.append((slots * (3.0 / n) - 1.5).reshape(shape))
        return leaves

    def __str__(self) -> str:
        lines = [f"leaves {list(self.leaf_shapes)} seed {self.seed}"]
        for i, (_kind, name, operands, dim) in enumerate(self.steps, start=len(self.leaf_shapes)):
            extra = "" if dim is None else f", dim={dim}"
            lines.append(f"  v{i} = {name}({', '.join(f'v{j}' for j in operands)}{extra})")
        return "\n".join(lines)


def _broadcast(a: tuple, b: tuple):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


@st.composite
def programs(draw, max_leaves: int = 3, max_steps: int = 6) -> Program:
    """A random Program: leaves from LEAF_SHAPES, then 1..max_steps ops over earlier values."""
    n_leaves = draw(st.integers(1, max_leaves))
    shapes = [draw(st.sampled_from(LEAF_SHAPES)) for _ in range(n_leaves)]
    seed = draw(st.integers(0, 2**32 - 1))
    steps = []
    n_steps = draw(st.integers(1, max_steps))
    for _ in range(n_steps):
        # Prefer recent values, so graphs get deep as well as wide.
        last = len(shapes) - 1
        pick = st.integers(0, last) | st.integers(max(0, last - 1), last)
        kinds = ["unary", "binary", "binary", "reduce_all"]
        if any(len(s) > 0 for s in shapes):
            kinds += ["reduce_dim", "unary_ndim"]
        kind = draw(st.sampled_from(kinds))
        if kind == "unary":
            a = draw(pick)
            steps.append((kind, draw(st.sampled_from(sorted(UNARY))), (a,), None))
            shapes.append(shapes[a])
        elif kind == "binary":
            a = draw(pick)
            partners = [j for j, s in enumerate(shapes) if _broadcast(shapes[a], s) is not None]
            b = draw(st.sampled_from(partners))
            if draw(st.booleans()):
                a, b = b, a
            steps.append((kind, draw(st.sampled_from(sorted(BINARY))), (a, b), None))
            shapes.append(_broadcast(shapes[a], shapes[b]))
        elif kind == "reduce_all":
            a = draw(pick)
            steps.append((kind, draw(st.sampled_from(sorted(REDUCE_ALL))), (a,), None))
            shapes.append(())
        else:
            candidates = [j for j, s in enumerate(shapes) if len(s) > 0]
            a = draw(st.sampled_from(candidates))
            if kind == "unary_ndim":
                steps.append((kind, draw(st.sampled_from(sorted(UNARY_NDIM))), (a,), None))
                shapes.append(shapes[a])
            else:
                ndim = len(shapes[a])
                dim = draw(st.integers(-ndim, ndim - 1))
                steps.append((kind, draw(st.sampled_from(sorted(REDUCE_DIM))), (a,), dim))
                shape = list(shapes[a])
                shape[dim] = 1
                shapes.append(tuple(shape))
    return Program(tuple(shapes[:n_leaves]), seed, tuple(steps))


_TABLES = {"unary": UNARY, "unary_ndim": UNARY_NDIM, "binary": BINARY, "reduce_all": REDUCE_ALL}


def build(program: Program, *leaves):
    """Run the program on the given leaves (varfunc Variables or torch tensors); return the output."""
    values = list(leaves)
    for kind, name, operands, dim in program.steps:
        args = [values[j] for j in operands]
        if kind == "reduce_dim":
            values.append(REDUCE_DIM[name](args[0], dim))
        else:
            values.append(_TABLES[kind][name](*args))
    return values[-1]


def output_shape(program: Program) -> tuple:
    """The shape of the program's output, worked out without running it."""
    shapes = list(program.leaf_shapes)
    for kind, _name, operands, dim in program.steps:
        first = shapes[operands[0]]
        if kind == "binary":
            shapes.append(np.broadcast_shapes(first, shapes[operands[1]]))
        elif kind == "reduce_all":
            shapes.append(())
        elif kind == "reduce_dim":
            shape = list(first)
            shape[dim] = 1
            shapes.append(tuple(shape))
        else:
            shapes.append(first)
    return shapes[-1]


def chain(n: int) -> tuple:
    """(x, y): y = x * 1.0 repeated n times, a graph of n + 1 nodes for the size limits' tests."""
    x = vf.Variable(np.array([1.0]))
    y = x
    for _ in range(n):
        y = y * 1.0
    return x, y


class Split(vf.Function):
    """A student's op with one output per element: k outputs, so one buffer of k slots."""

    def forward(self, a):
        return tuple(a[i : i + 1].copy() for i in range(a.shape[0]))

    def backward(self, *grads):
        return np.concatenate([np.zeros(1) if g is None else g for g in grads])
