"""Driving a notebook in JupyterLab 4 through Playwright, and reading what the page shows.

Cells are addressed by their index in the notebook file (markdown cells count): JupyterLab keeps
every cell in the DOM in that order (windowing mode "contentVisibility", the default).
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import re
import time
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
STUDENT_DIR = "student"  # the released copies, next to the instructor copies in the server's folder
STUDENT_CHAPTER = "02_variables_and_leaves.ipynb"

# The whole run, from the server's start, stays under 3 minutes (VARFUNC_E2E_BUDGET: seconds).
BUDGET_S = float(os.environ.get("VARFUNC_E2E_BUDGET", "170"))
_deadline = [float("inf")]

CELLS = ".jp-Notebook .jp-Cell"
CODE_PROMPTS = ".jp-Notebook .jp-CodeCell .jp-InputPrompt"
SVG_IMAGE = 'img[src^="data:image/svg+xml"]'
PNG_IMAGE = 'img[src^="data:image/png"]'
SVG_NS = "{http://www.w3.org/2000/svg}"


def start_clock() -> None:
    """Start the run's time budget (every wait below is cut to what is left of it)."""
    _deadline[0] = time.monotonic() + BUDGET_S


def left(timeout: float) -> float:
    """Seconds to wait: timeout, or less when the run's budget ends sooner."""
    return max(0.0, min(timeout, _deadline[0] - time.monotonic()))


def open_notebook(page: Any, lab: Any, path: str) -> None:
    """Open a notebook (no restored tabs) and wait until its kernel, the kit's, is idle."""
    page.goto(f"{lab.url}/lab/tree/{path}?reset&token={lab.token}")
    page.wait_for_selector(CELLS)
    page.wait_for_function(
        """() => {
            const name = document.querySelector('.jp-NotebookPanel-toolbar .jp-Toolbar-kernelName');
            const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
            return name && !/No Kernel/.test(name.textContent) && status && status.dataset.status === 'idle';
        }"""
    )


def kernel_name(page: Any) -> str:
    """The kernel's display name in the notebook's toolbar."""
    return page.locator(".jp-NotebookPanel-toolbar .jp-Toolbar-kernelName").first.inner_text().strip()


def cell(page: Any, index: int) -> Any:
    """The locator of the notebook's cell number `index`."""
    return page.locator(CELLS).nth(index)


def prompts(page: Any) -> list[str]:
    """The input prompts of all code cells, such as '[3]:', '[*]:' or '[ ]:' (off-screen ones too)."""
    return [p.strip() for p in page.locator(CODE_PROMPTS).all_text_contents()]


def _wait_for_prompts(page: Any, done: Any, timeout: float, what: str) -> list[str]:
    deadline = time.monotonic() + left(timeout)
    while time.monotonic() < deadline:
        current = prompts(page)
        if done(current):
            return current
        time.sleep(0.25)
    raise AssertionError(f"{what} did not finish in {timeout:.0f} s; prompts: {prompts(page)}")


def run_all(page: Any, timeout: float = 120) -> list[str]:
    """Run > Run All Cells, then wait until no cell is queued or running; the final prompts."""
    cell(page, 0).click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    # All cells turn [*] at once when queued; an error stops the queue and leaves the rest at [ ].
    _wait_for_prompts(page, lambda ps: any("*" in p or re.search(r"\d", p) for p in ps), 30, "queueing")
    return _wait_for_prompts(page, lambda ps: not any("*" in p for p in ps), timeout, "Run All Cells")


def run_cell(page: Any, index: int, timeout: float = 60) -> None:
    """Select cell `index` (command mode), press Shift+Enter, and wait for its new execution count."""
    prompt = cell(page, index).locator(".jp-InputPrompt")
    before = prompt.text_content().strip()
    prompt.click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")
    deadline = time.monotonic() + left(timeout)
    while time.monotonic() < deadline:
        now = prompt.text_content().strip()
        if re.fullmatch(r"\[\d+\]:", now) and now != before:
            return
        time.sleep(0.2)
    raise AssertionError(f"cell {index} did not run in {timeout:.0f} s (prompt {prompt.text_content()!r})")


def replace_source(page: Any, index: int, text: str) -> None:
    """Type new source into a cell as a student would paste it: click the editor, select all, insert."""
    editor = cell(page, index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    page.keyboard.press("Escape")


def output_text(page: Any, index: int) -> str:
    """The text of all of a cell's outputs."""
    return "\n".join(cell(page, index).locator(".jp-OutputArea-output").all_text_contents())


def save(page: Any, timeout: float = 30) -> None:
    """File > Save Notebook, then wait until the tab no longer shows unsaved changes."""
    page.get_by_role("menuitem", name="File", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Save Notebook")).first.click()
    clean_tab = ".lm-TabBar-tab.jp-mod-current:not(.jp-mod-dirty)"
    page.wait_for_selector(clean_tab, timeout=max(1.0, left(timeout)) * 1000)


def svg_of_img(src: str) -> str:
    """The SVG document inside an <img src="data:image/svg+xml,...">."""
    header, _, data = src.partition(",")
    if header.endswith(";base64"):
        return base64.b64decode(data).decode("utf-8")
    return urllib.parse.unquote(data)


def svg_node_titles(svg: str) -> list[str]:
    """The titles (DOT node ids) of every <g class="node"> in a Graphviz SVG."""
    tree = ET.fromstring(svg)
    return [
        (g.findtext(f"{SVG_NS}title") or g.findtext("title") or "")
        for g in tree.iter()
        if g.tag in (f"{SVG_NS}g", "g") and g.get("class") == "node"
    ]


_DOT_NODE = re.compile(r'^\s*(?:"((?:[^"\\]|\\.)*)"|([\w.]+))\s*\[', re.M)


def dot_node_ids(source: str) -> list[str]:
    """The node ids declared in DOT text (statements `id [...]`; graph/node/edge defaults left out)."""
    ids = [quoted if quoted else plain for quoted, plain in _DOT_NODE.findall(source)]
    return [i for i in ids if i not in ("graph", "node", "edge")]


def code_cells(nb: Any) -> list[int]:
    """Indices of a notebook's code cells."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def first_cell(nb: Any, pattern: str) -> int:
    """Index of the first code cell whose source matches the regex."""
    for i in code_cells(nb):
        if re.search(pattern, nb.cells[i].source):
            return i
    raise LookupError(f"no code cell matches {pattern!r}")


def replay(nb: Any, upto: int, expression: str) -> Any:
    """Run the notebook's code cells before `upto` in this process (output hidden); evaluate expression.

    The expected pictures come from the same code the page ran, through varfunc.viz here.
    """
    namespace: dict = {"__name__": "__replay__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for i in code_cells(nb):
            if i >= upto:
                break
            exec(compile(nb.cells[i].source, f"<cell {i}>", "exec"), namespace)
        return eval(expression, namespace)


def last_expression(source: str) -> str:
    """The cell's last line (the expression whose value the cell shows)."""
    return source.strip().splitlines()[-1].strip()


def errors_in(path: Path) -> list[str]:
    """Error outputs, and stderr streams that hold a traceback, in a saved notebook."""
    import nbformat

    found = []
    for i, c in enumerate(nbformat.read(path, as_version=4).cells):
        for out in c.get("outputs", []):
            if out.output_type == "error":
                found.append(f"cell {i}: {out.ename}: {out.evalue}")
            elif out.output_type == "stream" and out.name == "stderr" and "Traceback" in out.text:
                found.append(f"cell {i}: traceback on stderr: {out.text[-500:]}")
    return found


def screenshot(page: Any, target: Any, path: Path, block: str = "start") -> None:
    """Scroll an element (a locator) into view ('start': to the top) and save what the student sees."""
    target.first.evaluate("(el, block) => el.scrollIntoView({block})", block)
    page.wait_for_timeout(300)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
