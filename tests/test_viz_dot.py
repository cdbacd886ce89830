"""varfunc.viz drawing: exact DOT text for small graphs, determinism, reused intermediates, summaries."""

import html
import re

import numpy as np
import pytest

import varfunc as vf
from varfunc.viz import GraphTooLarge, draw

HEADER = (
    "digraph varfunc {\n"
    "\tgraph [nodesep=0.25 rankdir=TB ranksep=0.3]\n"
    "\tnode [fontname=monospace fontsize=10 height=0.3 shape=box style=filled]\n"
    "\tedge [arrowsize=0.7 fontname=monospace fontsize=9]\n"
)


def small():
    """x reused: y = x * 2, z = y + x, loss = z.sum(). Post-order: Leaf#0, MulConstant#1, Add#2, Sum#3."""
    x = vf.Variable(np.array([1.0, 2.0]))
    loss = (x * 2 + x).sum()
    return x, loss


def test_v01_dot_text_exact():
    x, loss = small()
    got = draw(loss, params={"x": x, "loss": loss}, show_shapes=True).source
    assert got == HEADER + (
        '\tf0 [label="Leaf#0" fillcolor=lightgrey]\n'
        '\tv0 [label="x\\n(2,)" fillcolor=lightblue shape=ellipse]\n'
        '\tf1 [label="MulConstant#1\\n(2)" fillcolor=lightgrey]\n'
        '\tv1 [label="Variable\\n(2,)" fillcolor=white shape=ellipse]\n'
        '\tf2 [label="Add#2" fillcolor=lightgrey]\n'
        '\tv2 [label="Variable\\n(2,)" fillcolor=white shape=ellipse]\n'
        '\tf3 [label="Sum#3" fillcolor=lightgrey]\n'
        '\tv3 [label="loss\\n()" fillcolor=darkolivegreen1 shape=ellipse]\n'
        "\tf0 -> v0\n"
        "\tv0 -> f1\n"
        "\tf1 -> v1\n"
        "\tv1 -> f2\n"
        "\tv0 -> f2\n"
        "\tf2 -> v2\n"
        "\tv2 -> f3\n"
        "\tf3 -> v3\n"
        "}\n"
    )


def test_modern_dot_text_exact_skips_constant_leaf():
    """loss = (x * c).sum() with c a constant: AccumulateGrad only for x; next_functions skip c."""
    x = vf.Variable(np.array([1.0, 2.0]))
    c = vf.Variable(np.array([3.0, 4.0]), requires_grad=False)
    loss = (x * c).sum()  # Leaf x #0, Leaf c #1, Mul #2, Sum #3
    got = draw(loss, style="modern", params={"x": x}).source
    assert got == HEADER + (
        '\tv0 [label="x" fillcolor=lightblue]\n'
        '\tf0 [label="AccumulateGrad#0" fillcolor=lightgrey]\n'
        '\tf2 [label="MulBackward0#2" fillcolor=lightgrey]\n'
        '\tf3 [label="SumBackward0#3" fillcolor=lightgrey]\n'
        '\tv3 [label="output" fillcolor=darkolivegreen1]\n'
        "\tv0 -> f0\n"
        "\tf0 -> f2\n"
        "\tf2 -> f3\n"
        "\tf3 -> v3\n"
        "}\n"
    )
    v01 = draw(loss, params={"x": x, "c": c}).source
    assert '\tv1 [label="c" fillcolor=white shape=ellipse style="filled,dashed"]\n' in v01
    assert "\tv1 -> f2 [color=grey style=dashed]\n" in v01  # needs_input_grad is False


def test_same_code_same_text_and_no_ids():
    first = [draw(small()[1], style=s, show_shapes=True).source for s in ("v0.1", "modern")]
    second = [draw(small()[1], style=s, show_shapes=True).source for s in ("v0.1", "modern")]
    assert first == second
    assert not re.search(r"\d{7,}", first[0] + first[1])  # nothing that looks like an id()


def test_reused_intermediate_drawn_once_with_one_edge_per_use():
    a = vf.Variable(1.0)
    b = a + a  # Add#1, both inputs from Leaf#0
    c = b + b  # Add#2, both inputs from b
    v01 = draw(c, params={"a": a, "b": b}).source
    assert v01.count("\tv1 [") == 1 and v01.count('label="b"') == 1
    assert v01.count("\tv1 -> f2\n") == 2
    assert v01.count("\tv0 -> f1\n") == 2
    modern = draw(c, style="modern").source
    assert modern.count("\tf1 -> f2\n") == 2 and modern.count("\tf0 -> f1\n") == 2


def walk_functions(root):
    """An independent walk: every Function reachable through previous_functions, by identity."""
    seen, todo = [], [root.creator]
    while todo:
        fn = todo.pop()
        if any(fn is s for s in seen):
            continue
        seen.append(fn)
        todo.extend(prev for prev, _ in fn.previous_functions)
    return seen


def test_every_function_and_leaf_appears_once():
    rng = np.random.default_rng(0)
    x = vf.Variable(rng.normal(size=(3, 2)))
    w = vf.Variable(rng.normal(size=(2, 4)))
    h = x.mm(w).tanh()
    loss = (h * h + h.exp()).sum() + (x * 3).sum()
    functions = walk_functions(loss)
    for style in ("v0.1", "modern"):
        source = draw(loss, style=style).source
        nodes = re.findall(r"^\tf(\d+) \[", source, flags=re.M)
        assert sorted(map(int, nodes)) == list(range(len(functions)))  # each number exactly once
        assert len(set(nodes)) == len(nodes)
    leaves = [fn for fn in functions if isinstance(fn, vf.Leaf)]
    assert draw(loss).source.count('label="Leaf#') == len(leaves) == 2


def test_values_grads_saved_and_legend():
    x = vf.Variable(np.array([1.0, 2.0]))
    w = vf.Variable(np.array([3.0, -1.0]))
    loss = (x * w).sum()  # Mul saves both inputs
    loss.backward()
    source = draw(
        loss, params={"x": x, "w": w}, show_values=True, show_grads=True, show_saved=True, legend=True
    ).source
    assert '\tv0 [label="x\\ndata [1, 2]\\ngrad [3, -1]" fillcolor=lightblue shape=ellipse]\n' in source
    assert '\tv1 [label="w\\ndata [3, -1]\\ngrad [1, 2]" fillcolor=lightblue shape=ellipse]\n' in source
    assert '\ts2_0 [label="saved 0\\n(2,)\\n[1, 2]" fillcolor=orange]\n' in source
    assert "\ts2_1 -> f2 [arrowhead=none style=dotted]\n" in source
    assert (
        "subgraph cluster_legend" in source
        and 'legend_saved [label="saved tensor" fillcolor=orange]' in source
    )


def test_summary_text():
    x, loss = small()
    picture = draw(loss, params={"x": x, "loss": loss})
    assert (
        str(picture)
        == picture.summary()
        == (
            "graph of loss (v0.1 names): 3 Functions, 1 leaf\n"
            "  Sum#3          <- Add#2\n"
            "  Add#2          <- MulConstant#1, x\n"
            "  MulConstant#1  <- x\n"
            "  x              Leaf, shape (2,), requires grad"
        )
    )
    modern = draw(loss, style="modern", params={"x": x, "loss": loss}).summary()
    assert modern.splitlines()[1] == "  SumBackward0#3  <- AddBackward0#2"


def test_several_outputs_share_one_graph():
    x = vf.Variable(np.array([1.0, 2.0]))
    h = x * 2
    p, q = h.sum(), (h * h).sum()
    source = draw([p, q], params={"p": p, "q": q}).source
    assert source.count("\tf1 [") == 1  # h's MulConstant drawn once
    assert 'label="p" fillcolor=darkolivegreen1' in source and 'label="q" fillcolor=darkolivegreen1' in source


def test_draw_does_not_change_the_graph():
    x, loss = small()
    before = [(fn.previous_functions, fn.output_ids) for fn in walk_functions(loss)]
    draw(loss, show_saved=True, show_shapes=True)
    draw(loss, style="modern", legend=True)
    assert [(fn.previous_functions, fn.output_ids) for fn in walk_functions(loss)] == before


def test_a_leaf_changed_in_place_keeps_its_own_no_grad_look():
    x = vf.Variable(np.array([1.0, 2.0]))
    a = vf.Variable(np.array([1.0, 2.0]), requires_grad=False)
    a.add_(x)  # a's creator is now Add, which requires grad; the Leaf drawn for a does not
    src = draw((a * 2).sum(), show_values=True, show_grads=True, params={"x": x, "a": a}).source
    (leaf_a,) = [line for line in src.splitlines() if 'style="filled,dashed"' in line and "label=" in line]
    assert "grad" not in leaf_a


def test_modern_style_leaves_indices_unconnected_as_pytorch_has_no_grad_fn_for_them():
    values, indices = vf.Variable(np.array([[1.0, 3.0], [4.0, 2.0]])).max(1)
    src = draw([values.sum(), indices], style="modern").source
    assert "v1_1 [label=" in src and "-> v1_1" not in src  # drawn, but not as MaxBackward's output
    assert "-> v2" in src


def test_a_constant_leaf_changed_in_place_shows_no_data_that_is_no_longer_its_own():
    """x.add_(w): x's Leaf made [1, 1], x now holds [3, 4]; the Leaf must not claim [3, 4]."""
    w = vf.Variable(np.array([2.0, 3.0]))
    x = vf.Variable(np.array([1.0, 1.0]), requires_grad=False)
    x.add_(w)  # Leaf#0 (x before), Leaf#1 (w), Add#2 (x now)
    source = draw(x.sum(), params={"x": x, "w": w}, show_values=True, show_shapes=True).source
    assert (
        '\tv0 [label="Variable\\n(2,)\\noverwritten in place" fillcolor=white shape=ellipse '
        'style="filled,dashed"]\n'
    ) in source
    assert '\tv2 [label="x\\n(2,)\\ndata [3, 4]" fillcolor=white shape=ellipse]\n' in source


def test_integer_data_is_shown_exactly_and_floats_with_four_digits():
    rows = vf.Variable(np.array([123456, 7]))
    x = vf.Variable(np.array([123456.0, 0.5]))
    source = draw(x[rows.data % 2].sum(), params={"rows": rows, "x": x}, show_values=True).source
    assert "data [1.235e+05, 0.5]" in source
    picture = draw(rows * 1, params={"rows": rows}, show_values=True)
    assert "data [123456, 7]" in picture.source and "1.235e+05" not in picture.source


def test_drawing_anything_but_variables_is_a_type_error():
    with pytest.raises(TypeError, match=r"got a numpy.ndarray of shape \(2,\); wrap an array in Variable"):
        draw(np.ones(2))
    with pytest.raises(TypeError, match="got a float"):
        draw([vf.Variable(1.0), 2.0])
    x = vf.Variable(np.ones(2))
    with pytest.raises(TypeError, match=r"params\['x'\] is a numpy.ndarray of shape \(2,\), not a Variable"):
        draw(x * 2, params={"x": x.data})  # was drawn silently, with x left unnamed


def test_modern_style_draws_an_output_without_grad_alone():
    """torchviz draws a tensor without grad_fn as one node: the picture is not empty."""
    c = vf.Variable(np.ones(2), requires_grad=False)
    assert draw(c * 2, style="modern").source == HEADER + (
        '\tv1 [label="output" fillcolor=darkolivegreen1]\n}\n'
    )
    assert draw(c, style="modern", params={"c": c}).source == HEADER + (
        '\tv0 [label="c" fillcolor=darkolivegreen1]\n}\n'
    )


def test_show_grads_does_not_create_a_gradient():
    a = vf.Variable(np.array([1.0, 2.0]))
    source = draw(a, show_grads=True, params={"a": a}).source
    assert '\tv0 [label="a\\ngrad [0, 0]" fillcolor=darkolivegreen1 shape=ellipse]\n' in source
    assert a._grad is None  # the .grad getter would have stored zeros


def test_a_graph_past_max_nodes_is_not_rendered_but_described():
    x = vf.Variable(np.array([1.0]))
    y = x
    for _ in range(500):
        y = y * 1.0  # Leaf#0 and 500 MulConstants, each a box and a Variable: 1,002 nodes
    picture = draw(y, params={"x": x})
    assert picture.refused == (
        "draw: a picture of this graph has 1,002 nodes (Function and Leaf boxes, Variables, saved "
        "tensors), more than max_nodes=1000: too big a picture to read, and slow to render. Pass "
        "draw(..., max_nodes=1002) or max_nodes=None to draw it anyway"
    )
    shown = picture._repr_mimebundle_()
    assert list(shown) == ["text/plain"] and "image/svg+xml" not in shown
    lines = shown["text/plain"].splitlines()
    assert lines[0] == picture.refused
    assert lines[1] == "graph of output (v0.1 names): 500 Functions, 1 leaf"
    assert lines[-1] == "  ... (490 more lines: print(picture))" and len(lines) == 14
    assert picture.html() == "<pre>" + html.escape(shown["text/plain"]) + "</pre>"
    with pytest.raises(GraphTooLarge, match="more than max_nodes=1000"):
        picture.svg()
    with pytest.raises(GraphTooLarge):
        picture.png()
    assert picture.source.count("MulConstant#") == 500  # the DOT text is still there
    assert not draw(y, max_nodes=1002).refused and not draw(y, max_nodes=None).refused
    assert not draw(y, style="modern").refused  # 503 nodes: no Variable ellipses in between


def test_modern_style_starts_at_a_roots_grad_fn_which_a_leaf_or_an_index_output_has_not():
    m = vf.Variable(np.array([[1.0, 5.0], [7.0, 3.0]]))
    values, indices = m.max(dim=1)
    for root in (indices, m):  # torch: grad_fn is None for both, so torchviz draws one node
        picture = draw(root, style="modern")
        assert "Backward" not in picture.source and "AccumulateGrad" not in picture.source
        assert picture.summary().startswith("graph of output (modern names): 0 Functions, 0 leaves")
    loss = (m * vf.Variable(np.ones((2, 2)), requires_grad=False)).sum()  # the constant is no modern node
    assert draw(loss).summary().splitlines()[0].endswith("(v0.1 names): 2 Functions, 2 leaves")
    assert (
        draw(loss, style="modern").summary().splitlines()[0].endswith("(modern names): 2 Functions, 1 leaf")
    )


def test_an_ops_settings_show_numpy_scalars_as_numbers_and_stay_short():
    x = vf.Variable(np.arange(2000.0))
    assert 'label="Index#1\\n(3)"' in draw(x[np.int64(3)]).source  # NumPy 2's repr: np.int64(3)
    assert "threshold=0.25," in draw(vf.functions.Threshold(np.float32(0.25), 0.0)(x)).source
    long = next(line for line in draw(x[np.arange(1000)]).source.splitlines() if "Index#1" in line)
    assert len(long.split('label="', 1)[1].split('"', 1)[0]) <= len("Index#1\\n") + 52 and "…" in long


def test_draw_refuses_an_empty_list_and_a_name_that_is_not_a_string():
    x = vf.Variable(np.ones(2))
    with pytest.raises(ValueError, match="viz: got an empty list; give the Variable"):
        draw([])
    with pytest.raises(TypeError, match="viz: the params key 1 is not a str"):
        draw(x * 2, params={1: x})
    # a list gave "dictionary update sequence element #0 has length 2", a Variable built Index ops
    for params in ([x], vf.Variable(np.ones(2))):
        with pytest.raises(TypeError, match=r"params is a .*, not a dict; .*dict\(model.named_parameters"):
            draw(x * 2, params=params)


@pytest.mark.parametrize("style, shape", [("v0.1", " shape=ellipse"), ("modern", "")])
def test_the_legend_draws_variables_in_the_shape_the_picture_gives_them(style, shape):
    x = vf.Variable(np.ones(2))
    source = draw((x * 2).sum(), legend=True, style=style).source
    for key in ("leaf", "output"):
        line = next(line for line in source.splitlines() if f"legend_{key} " in line)
        assert line.endswith(f"{shape}]"), line
