"""Chapters as a student meets them: opened in JupyterLab in a real browser, Run All, and what shows.

Expected pictures are not hard-coded: the test runs the same notebook code in this process and
compares the node ids of the DOT text that varfunc.viz builds with the nodes of the SVG that the
page shows (decoded from its <img src="data:image/svg+xml,...">).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from varfunc.lab import KERNEL_DISPLAY_NAME

from .labpage import (
    NOTEBOOKS,
    PNG_IMAGE,
    SVG_IMAGE,
    cell,
    code_cells,
    dot_node_ids,
    errors_in,
    first_cell,
    kernel_name,
    last_expression,
    open_notebook,
    output_text,
    replay,
    run_all,
    save,
    screenshot,
    svg_node_titles,
    svg_of_img,
)

pytestmark = pytest.mark.e2e

CH02 = "02_variables_and_leaves.ipynb"
CH04 = "04_the_execution_engine.ipynb"
CH08 = "08_training.ipynb"


def read(name: str) -> Any:
    """The stored (instructor) notebook."""
    import nbformat

    return nbformat.read(NOTEBOOKS / name, as_version=4)


def run_chapter(page: Any, lab: Any, name: str) -> None:
    """Open a chapter on the kit's kernel, run all cells, save, and assert that no cell shows an error."""
    open_notebook(page, lab, name)
    assert kernel_name(page) == KERNEL_DISPLAY_NAME, "the chapter should run on the kit's kernel"
    final = run_all(page)
    unrun = [p for p in final if not re.fullmatch(r"\[\d+\]:", p)]
    save(page)
    errors = errors_in(lab.root / name)
    assert not errors, f"{name}: cells show errors: {errors}"
    assert not unrun, f"{name}: {len(unrun)} code cell(s) did not run: {final}"
    broken = page.locator(".jp-OutputArea-output", has_text="Error displaying widget")
    assert broken.count() == 0, f"{name}: a widget failed to display"
    assert not lab.blocked, f"the page tried to reach beyond the local server: {lab.blocked[:5]}"


def graph_cells(nb: Any) -> dict[int, str]:
    """{cell index: shown expression} for cells that end by showing a viz.draw picture."""
    return {
        i: last_expression(nb.cells[i].source)
        for i in code_cells(nb)
        if "viz.draw(" in nb.cells[i].source and last_expression(nb.cells[i].source).isidentifier()
    }


def assert_graphs_rendered(page: Any, nb: Any) -> int:
    """Each drawn graph shows as an SVG image with exactly the nodes of its DOT text; the first cell."""
    cells = graph_cells(nb)
    assert cells, "the chapter should draw a graph"
    for index, expression in cells.items():
        expected = dot_node_ids(replay(nb, index + 1, expression).source)
        image = cell(page, index).locator(SVG_IMAGE)
        image.wait_for()
        titles = svg_node_titles(svg_of_img(image.get_attribute("src")))
        assert len(titles) == len(expected) > 0, f"cell {index}: {len(titles)} nodes, expected {expected}"
        assert sorted(titles) == sorted(expected), f"cell {index}: nodes {titles}, expected {expected}"
    return min(cells)


def test_ch02_graph_pictures(page: Any, lab: Any, artifacts: Path) -> None:
    nb = read(CH02)
    run_chapter(page, lab, CH02)
    first = assert_graphs_rendered(page, nb)
    screenshot(page, cell(page, first), artifacts / "ch02_graph.png")


def _widget_state(widget: Any) -> tuple[int, str, str]:
    """The stepper's (slider value, caption line, picture SVG)."""
    value = int(widget.locator(".widget-readout").text_content().strip())
    caption = widget.locator(".widget-html-content pre").first.text_content()
    picture = widget.locator(".widget-html-content svg").first.evaluate("svg => svg.outerHTML")
    return value, caption, picture


def test_ch04_graph_and_engine_stepper(page: Any, lab: Any, artifacts: Path) -> None:
    nb = read(CH04)
    run_chapter(page, lab, CH04)
    assert_graphs_rendered(page, nb)

    index = first_cell(nb, r"\.stepper\(")
    frames = replay(nb, index, last_expression(nb.cells[index].source).split(".stepper(")[0]).frames
    widget = cell(page, index).locator(".widget-vbox").first
    widget.locator(".widget-play").wait_for()
    value, caption, picture = _widget_state(widget)
    assert (value, caption.strip()) == (0, frames[0].line.strip())

    widget.locator(".widget-play button:has(i.fa-play)").click()  # Play: one frame every 900 ms
    deadline = time.monotonic() + 20
    while _widget_state(widget)[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    pause = widget.locator(".widget-play button:has(i.fa-pause)")
    if pause.count():
        pause.click()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the caption and picture follow the slider through the kernel
        value, caption, now = _widget_state(widget)
        if value and caption.strip() == frames[value].line.strip() and now != picture:
            break
        time.sleep(0.1)
    assert value >= 1, "the stepper did not move when Play was clicked"
    assert caption.strip() == frames[value].line.strip(), f"frame {value} shows {caption!r}"
    assert now != picture, "the picture did not change with the frame"
    shown = svg_node_titles(widget.locator(".widget-html-content svg").first.evaluate("s => s.outerHTML"))
    assert sorted(shown) == sorted(dot_node_ids(frames[value].source))
    screenshot(page, cell(page, index), artifacts / "ch04_stepper.png")


def test_ch08_progress_bar_and_loss_plot(page: Any, lab: Any, artifacts: Path) -> None:
    nb = read(CH08)
    run_chapter(page, lab, CH08)

    fit_cell = first_cell(nb, r"\bfit\(")
    bar = cell(page, fit_cell).locator(".widget-hprogress")
    assert bar.count() >= 1, "fit() should show a progress bar widget (tqdm.auto)"
    assert "100%" in output_text(page, fit_cell), "the progress bar should end at 100%"

    plot_cell = first_cell(nb, r"history\.plot\(")
    image = cell(page, plot_cell).locator(PNG_IMAGE)
    assert image.count() >= 1, "the loss plot should show as a PNG image"
    assert image.first.evaluate("img => img.naturalWidth") > 100
    screenshot(page, bar, artifacts / "ch08_progress_bar.png")
    screenshot(page, image, artifacts / "ch08_loss_plot.png", block="center")
