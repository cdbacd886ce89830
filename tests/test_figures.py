"""figures/: the README's pictures come from code; the text ones are regenerated and compared here."""

import re
from pathlib import Path

import pytest

from varfunc.viz import available_renderers, draw
from varfunc.viz.figures import example, main

ROOT = Path(__file__).resolve().parents[1]
TEXT_FIGURES = ("graph_v01.dot", "graph_modern.dot", "engine_replay.txt", "orders.txt")


def test_committed_text_figures_are_what_the_code_makes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VARFUNC_VIZ_RENDERER", "none")  # text only: fast, and the same everywhere
    assert main(str(tmp_path)) == 1  # no renderer: says what is missing
    assert "MISSING" in capsys.readouterr().err
    for name in TEXT_FIGURES:
        assert (tmp_path / name).read_text() == (ROOT / "figures" / name).read_text(), (
            f"figures/{name} is stale: run `make figures`"
        )


def test_readme_shows_the_figures_and_they_exist():
    shown = re.findall(r'src="(figures/[^"]+)"', (ROOT / "README.md").read_text())
    assert {"figures/graph_v01.svg", "figures/graph_modern.svg", "figures/engine_replay.gif"} <= set(shown)
    assert all((ROOT / path).stat().st_size > 1000 for path in shown)


def svg_texts(svg):
    """The words an SVG shows, in document order: the same for any renderer and layout."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_committed_svgs_show_what_the_code_draws():
    if not available_renderers("svg"):
        pytest.skip("no SVG renderer")
    loss, params = example()
    for style, name in (("v0.1", "graph_v01.svg"), ("modern", "graph_modern.svg")):
        picture = draw(loss, style=style, show_shapes=True, show_saved=True, params=params, legend=True)
        committed = (ROOT / "figures" / name).read_text()
        assert "saved tensor" in svg_texts(committed) and len(svg_texts(committed)) > 15
        assert sorted(svg_texts(picture.svg())) == sorted(svg_texts(committed)), f"{name}: run `make figures`"
