"""viz on wide graphs: the work grows with the graph, not with its square.

Each test counts what the code does or makes (calls, entries looked at, items recorded, characters
logged) for a graph and for one four times as wide, so no test depends on the speed of the machine.
"""

import numpy as np
import pytest
from graphs import Split

import varfunc as vf
from varfunc import Function
from varfunc.engine import EventLog
from varfunc.viz import GraphView, draw, replay_order, trace
from varfunc.viz.dot import DotOptions, Overlay, build_dot
from varfunc.viz.orders import _generation, _Replay
from varfunc.viz.summary import summary


def split_loss(k: int):
    """(x split into k Variables, concatenated again, summed; x); Split's buffer fills slot by slot."""
    x = vf.Variable(np.arange(float(k)))
    return vf.cat(list(Split()(x)), 0).sum(), x


class ItemCounter:
    """A recorder that counts the items in every tuple, list and dict the engine hands it."""

    def __init__(self) -> None:
        self.items = 0

    def record(self, kind: str, function: object, **details: object) -> None:
        self.items += sum(len(v) for v in details.values() if isinstance(v, (tuple, list, dict)))


# --- draw and summary with many roots ---------------------------------------------------------


def slot_of_calls(monkeypatch, make_picture, roots: int) -> int:
    """How many times GraphView.slot_of runs while a picture of `roots` roots is made."""
    calls = []
    original = GraphView.slot_of
    monkeypatch.setattr(GraphView, "slot_of", lambda self, v: calls.append(1) or original(self, v))
    make_picture([vf.Variable(np.ones(1)) * 2 for _ in range(roots)])
    return len(calls)


@pytest.mark.parametrize(
    "make_picture",
    [
        lambda roots: draw(roots),
        lambda roots: draw(roots, style="modern", show_shapes=True),
        lambda roots: draw(roots, max_nodes=10),  # refused: the summary is still made
        lambda roots: summary(GraphView(roots)),
    ],
)
def test_a_picture_of_many_roots_finds_each_roots_slot_a_few_times(monkeypatch, make_picture):
    """Before: every label asked for the list of root slots, made afresh each time (roots^2 calls)."""
    small = slot_of_calls(monkeypatch, make_picture, 50)
    large = slot_of_calls(monkeypatch, make_picture, 200)
    assert large <= 4.5 * small


def test_many_roots_are_still_drawn_as_outputs_once_each():
    xs = [vf.Variable(np.ones(1)) for _ in range(3)]
    ys = [x * 2 for x in xs]
    source = draw([*ys, ys[0]], params={"first": ys[0]}).source
    assert source.count("fillcolor=darkolivegreen1") == 3
    assert '\tv1 [label="first" fillcolor=darkolivegreen1 shape=ellipse]' in source
    assert summary(GraphView([*ys, ys[1]])).startswith("graph of output, output, output (v0.1 names)")


# --- modern-style frames ------------------------------------------------------------------------


class CountingLines(dict):
    """A frame's Variable lines that count the entries a picture looks through."""

    looked_at = 0

    def items(self):
        for item in super().items():
            CountingLines.looked_at += 1
            yield item


def test_a_modern_frame_looks_through_the_variable_lines_once():
    """Before: each Function's box scanned every Variable's lines for its own (Functions x lines)."""
    x = vf.Variable(np.ones(2))
    y = x
    for _ in range(100):
        y = y * 2.0
    view = GraphView(y.sum())
    lines = CountingLines({(fn, 0): ["buffer [1, 1]"] for fn in view.functions})
    CountingLines.looked_at = 0
    source = build_dot(view, DotOptions(style="modern"), Overlay(variable_lines=lines))
    assert CountingLines.looked_at <= len(lines)
    assert '\tf50 [label="MulBackward0#50\\nbuffer [1, 1]" fillcolor=lightgrey]' in source
    assert '\tv101 [label="output\\nbuffer [1, 1]" fillcolor=darkolivegreen1]' in source  # not on its box
    assert '\tf101 [label="SumBackward0#101" fillcolor=lightgrey]' in source


# --- many-output Functions in the engine's recording and its replay -----------------------------


def test_recording_a_many_output_function_costs_its_outputs_not_their_square():
    """Before: each of the k sends to Split recorded all k slots of its buffer and all k counts."""

    def items_told(k: int) -> int:
        counter = ItemCounter()
        split_loss(k)[0].backward(recorder=counter)
        return counter.items

    assert items_told(400) <= 4.5 * items_told(100)


def test_each_buffer_event_holds_the_one_slot_that_changed():
    loss, x = split_loss(3)
    log = EventLog()
    loss.backward(recorder=log)
    split = next(e.function for e in log.events if isinstance(e.function, Split))
    mine = [e for e in log.events if e.function is split and e.kind in ("buffered", "became_ready")]
    assert [(e.kind, e.details["output_nr"], e.details["remaining"]) for e in mine] == [
        ("buffered", 0, 0),
        ("buffered", 1, 0),
        ("became_ready", 2, 0),
    ]
    assert [e.details["grad_so_far"].tolist() for e in mine] == [[1.0]] * 3


def test_the_log_of_a_many_output_function_grows_with_its_outputs():
    """Before: every buffer line listed all k slots and all k counts (k^2 characters)."""

    def characters(k: int) -> int:
        return len(trace(split_loss(k)[0], max_nodes=None).text)

    assert characters(400) <= 4.5 * characters(100)


def test_a_wide_buffer_line_names_the_slot_and_how_many_still_wait():
    loss, x = split_loss(10)
    recording = trace(loss, params={"x": x})
    lines = [line for line in recording.lines if line[4:].startswith("Split#1: ")]
    assert lines[0] == (
        "  8 Split#1: stored in buffer slot 0, now [1], deps 0 left for this slot, "
        "9 of 10 outputs still wait -> waits; ready: -"
    )
    assert lines[-1].endswith(
        "slot 9, now [1], deps 0 left for this slot, 0 of 10 outputs still wait -> ready; ready: Split#1"
    )
    ready_frame = recording.frame_source(int(lines[-1].split()[0]))
    assert ready_frame.count("buffer [1]") == 10  # every slot's gradient, rebuilt by the replay


def test_a_narrow_buffer_line_still_lists_the_whole_buffer():
    lines = [line for line in trace(split_loss(3)[0]).lines if line[4:].startswith("Split#1: ")]
    assert lines == [
        "  8 Split#1: stored in buffer slot 0, buffer ([1], None, None), deps [0, 1, 1] -> waits; ready: -",
        " 10 Split#1: stored in buffer slot 1, buffer ([1], [1], None), deps [0, 0, 1] -> waits; ready: -",
        " 12 Split#1: stored in buffer slot 2, buffer ([1], [1], [1]), deps [0, 0, 0] -> ready; "
        "ready: Split#1",
    ]


# --- the replay of a wide Function's sends ------------------------------------------------------


def test_the_replay_takes_each_send_from_the_front_of_a_queue():
    """Before: a list, and list.pop(0) moves every edge left behind it (inputs^2 moves)."""
    xs = [vf.Variable(np.ones(1)) for _ in range(5)]
    recording = trace(vf.cat(xs, 0).sum())
    replayed = recording._replay()
    for line, state in replayed:
        if ".backward(" in line and "Concat" in line:
            assert hasattr(state.sends_left, "popleft") and len(state.sends_left) == 5
            break
    highlighted = [state.edge[2] for line, state in replayed if " sends " in line]
    assert highlighted == [0, 1, 2, 3, 4]


# --- DeZero's generation order --------------------------------------------------------------------


def generation_by_sorting(replay) -> None:
    """The order DeZero's list gives, sorted after every insertion (the kit's code before the heap)."""
    generation = {}
    for fn in replay.view.functions:
        inputs = [generation[e.source] for e in replay.view.inputs[fn]]
        generation[fn] = 1 + max(inputs) if inputs else 0
    pending, seen = [replay.root], {replay.root}
    while pending:
        fn = pending.pop()
        for e in replay.run(fn):
            if e.source not in seen:
                seen.add(e.source)
                pending.append(e.source)
                pending.sort(key=generation.__getitem__)


def random_graph(rng: np.random.Generator):
    """A random graph over a few leaves: sums and products of earlier values, many of one generation."""
    values = [vf.Variable(rng.standard_normal(2)) for _ in range(rng.integers(1, 6))]
    for _ in range(rng.integers(1, 30)):
        a, b = (values[i] for i in rng.integers(0, len(values), 2))
        values.append(a + b if rng.random() < 0.5 else a * b)
    picked = [values[i] for i in rng.integers(0, len(values), rng.integers(1, 6))]
    return vf.cat(picked, 0).sum() if len(picked) > 1 else picked[0].sum()


@pytest.mark.parametrize("seed", range(40))
def test_the_heap_pops_in_the_order_of_the_sorted_list(seed):
    loss = random_graph(np.random.default_rng(seed))
    reference = _Replay(loss, None, None, "test")
    generation_by_sorting(reference)
    heap = _Replay(loss, None, None, "test")
    _generation(heap)
    assert heap.visits == reference.visits
    assert replay_order(loss, "generation").visits == [reference.view.name(fn) for fn in reference.visits]


class Ident(Function):
    """y = x, counting how often a dict or set looks one of them up (each lookup hashes it)."""

    hashes = 0

    def __hash__(self):
        Ident.hashes += 1
        return id(self) >> 4

    def forward(self, a):
        return a.copy()

    def backward(self, grad):
        return grad


def test_the_generation_order_looks_each_function_up_a_few_times(monkeypatch):
    """Before: the pending list was sorted after every insertion, looking up every pending one."""
    # Ident hashes by identity, as every Function does, so the guard against value equality may rest
    monkeypatch.setattr(vf.function, "refuse_value_equality", lambda function: None)

    def hashes(n: int) -> int:
        loss = vf.cat([Ident()(vf.Variable(np.ones(1))) for _ in range(n)], 0).sum()
        Ident.hashes = 0
        replay_order(loss, "generation")
        return Ident.hashes

    assert hashes(400) <= 4.5 * hashes(100)


def test_ties_go_to_the_one_inserted_last():
    xs = [vf.Variable(np.ones(1)) for _ in range(3)]
    result = replay_order(vf.cat(xs, 0).sum(), "generation", params={"a": xs[0], "b": xs[1], "c": xs[2]})
    assert result.visits == ["Sum#4", "Concat#3", "c", "b", "a"]
