"""Hypothesis-generated expression graphs (DAGs with reused intermediates and broadcasting) over 1-3
leaves, each checked with varfunc.gradcheck in float64."""

import numpy as np
from graphs import LEAF_SHAPES, Program, build, output_shape, programs
from hypothesis import example, given, note, settings

import varfunc as vf


def _check(program: Program) -> None:
    note(str(program))
    with np.errstate(all="raise"):  # an unsafe domain or an overflow is a strategy bug: fail loudly
        assert vf.gradcheck(lambda *leaves: build(program, *leaves), program.leaf_data())


@settings(max_examples=40)
@given(programs())
@example(  # x reused four times, through broadcasting: r = (x*tanh(y) + x) - max(x, dim 0)
    Program(
        ((3, 1), (1, 4)),
        7,
        (
            ("binary", "mul_tanh", (0, 1), None),
            ("binary", "add", (2, 0), None),
            ("reduce_dim", "max", (0,), 0),
            ("binary", "sub", (3, 4), None),
        ),
    )
)
def test_random_graph_gradients(program):
    _check(program)


@settings(max_examples=15)
@given(programs(max_leaves=1, max_steps=8))
def test_random_chains_over_one_leaf(program):
    _check(program)


@settings(max_examples=20)
@given(programs())
def test_output_shape_is_what_the_strategy_tracks(program):
    leaves = [vf.Variable(a) for a in program.leaf_data()]
    out = build(program, *leaves)
    assert out.shape == output_shape(program)
    assert out.dtype == np.float64
    assert out.requires_grad


def test_leaf_shapes_broadcast_with_each_other():
    for a in LEAF_SHAPES:
        for b in LEAF_SHAPES:
            assert np.broadcast_shapes(a, b) in {(3, 4), (3, 1), (1, 4), (4,), (1,), ()}
