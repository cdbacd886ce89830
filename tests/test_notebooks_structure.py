"""The chapter notebooks' shape: valid, executed, opening and closing as the house rules say, linked.

Reads the stored notebooks only (no kernel), so it runs in well under a second per chapter.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
LAST_CHAPTER = 10

# nbval's markers that stop it from running a cell or from comparing its outputs.
SKIP_MARKERS = {"NBVAL_SKIP", "NBVAL_IGNORE_OUTPUT"}
SKIP_TAGS = {"nbval-skip", "nbval-ignore-output"}


@cache
def read(path: Path):
    return nbformat.read(path, as_version=4)


def number(path: Path) -> int:
    return int(path.name[:2])


def code_cells(path: Path) -> list:
    return [cell for cell in read(path).cells if cell.cell_type == "code"]


def comment_lines(source: str) -> list[str]:
    """The text of each comment line of a cell (what follows the #), stripped."""
    return [line.strip().lstrip("#").strip() for line in source.splitlines() if line.strip().startswith("#")]


def test_there_are_chapters():
    assert CHAPTERS, "no notebooks/NN_*.ipynb found"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_valid_nbformat_4_with_a_python3_kernel(path):
    nb = read(path)
    assert nb.nbformat == 4
    nbformat.validate(nb)
    kernelspec = nb.metadata.get("kernelspec", {})
    assert kernelspec.get("name") == "python3" and kernelspec.get("language") == "python", kernelspec


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_first_cell_says_chapter_and_what_you_will_learn(path):
    first = read(path).cells[0]
    assert first.cell_type == "markdown"
    assert re.match(rf"# Chapter {number(path):02d}\b", first.source), first.source.splitlines()[0]
    assert "## What you will learn" in first.source


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_last_cell_summarises_and_links_the_next_chapter(path):
    last = read(path).cells[-1]
    assert last.cell_type == "markdown"
    assert "## Summary" in last.source
    if number(path) == LAST_CHAPTER:
        return
    following = f"{number(path) + 1:02d}"
    links = re.findall(rf"\]\(({following}_[a-z0-9_]+\.ipynb)\)", last.source)
    assert links, f"no link to chapter {following} in the last cell"
    existing = [p.name for p in CHAPTERS if p.name.startswith(following + "_")]
    if existing:
        assert existing[0] in links, f"the link {links} does not name {existing[0]}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_and_outputs_are_stored(path):
    cells = code_cells(path)
    unexecuted = [i for i, cell in enumerate(cells) if not isinstance(cell.execution_count, int)]
    assert not unexecuted, f"code cells {unexecuted} have no execution_count: execute the notebook"
    assert any(cell.outputs for cell in cells), "no outputs stored"
    errors = [cell.execution_count for cell in cells for out in cell.outputs if out.output_type == "error"]
    assert not errors, f"cells {errors} stored an error"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_ipython_magics_or_shell_escapes(path):
    # The exercise tests run the cells with exec, where magics are syntax errors.
    for cell in code_cells(path):
        for line in cell.source.splitlines():
            assert not line.lstrip().startswith(("%", "!")), f"magic or shell escape: {line!r}"
            assert "get_ipython()" not in line, f"IPython call: {line!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_cells_skipped_by_nbval_say_why(path):
    for cell in code_cells(path):
        comments = comment_lines(cell.source)
        markers = SKIP_MARKERS.intersection(comments)
        tags = SKIP_TAGS.intersection(cell.metadata.get("tags", []))
        if markers or tags:
            reasons = [c for c in comments if c not in SKIP_MARKERS and len(c.split()) >= 3]
            assert reasons, f"{sorted(markers | tags)} without a comment saying why:\n{cell.source}"


def test_the_readme_links_every_chapter():
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([0-9]{2}_[a-z0-9_]+\.ipynb)\)", readme))
    missing = [p.name for p in CHAPTERS if p.name not in linked]
    assert not missing, f"notebooks/README.md does not link {missing}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_stored_notebooks_are_tidy(path):
    # Execution counts run 1, 2, 3, ... (executed top to bottom in one kernel) and cells carry no
    # timestamps (nbclient's `execution` metadata changes on every run and means nothing to a reader).
    counts = [cell.execution_count for cell in code_cells(path)]
    assert counts == list(range(1, len(counts) + 1)), f"execution counts {counts}: re-execute top to bottom"
    timed = [i for i, cell in enumerate(read(path).cells) if "execution" in cell.metadata]
    assert not timed, f"cells {timed} carry timing metadata: execute with record_timing=False or strip it"
    # A print can reach the notebook as two stream outputs ("text", then "\n") when the kernel flushes
    # between its writes; which cells split changes from run to run, so stored outputs are coalesced.
    split = [
        i
        for i, cell in enumerate(read(path).cells)
        for a, b in zip(cell.get("outputs", []), cell.get("outputs", [])[1:])
        if a.output_type == b.output_type == "stream" and a.name == b.name
    ]
    assert not split, (
        f"cells {split} hold split stream outputs: store with --coalesce-streams (notebooks/README.md)"
    )


# nbgrader's cell metadata schema, version 3 (nbgrader/nbgraderformat/v3.json and v3.py).
NBGRADER_REQUIRED = {"schema_version", "grade", "locked", "solution"}
NBGRADER_KEYS = NBGRADER_REQUIRED | {"task", "grade_id", "points", "checksum", "cell_type"}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_nbgrader_metadata_follows_nbgrader_schema_v3(path):
    ids = set()
    for cell in read(path).cells:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        assert NBGRADER_REQUIRED <= set(meta) <= NBGRADER_KEYS, f"nbgrader keys {sorted(meta)}"
        assert meta["schema_version"] == 3
        for flag in ("grade", "locked", "solution", "task"):
            assert isinstance(meta.get(flag, False), bool), f"{flag} must be a bool: {meta}"
        assert not meta.get("task", False), "task cells are markdown-only in nbgrader; the chapters use none"
        assert re.fullmatch(r"[a-zA-Z0-9_\-]+", meta.get("grade_id", "")), f"bad grade_id in {meta}"
        assert meta["grade_id"] not in ids, f"duplicate grade_id {meta['grade_id']}"
        ids.add(meta["grade_id"])
        assert cell.cell_type == "code", f"{meta['grade_id']}: only code cells are graded here"
        if meta["solution"]:
            # nbgrader's "autograded answer": editable, not graded itself, with the markers.
            assert not meta["grade"] and not meta["locked"] and "points" not in meta, meta
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
        else:
            # nbgrader's "autograder tests": graded, read-only, with points.
            assert meta["grade"] and meta["locked"], meta
            assert isinstance(meta.get("points"), (int, float)) and meta["points"] > 0, meta
            assert re.search(r"""check\(\s*["']ch\d\d\.\w+["']\s*\)""", cell.source), cell.source


# The legacy global generator (np.random.rand, np.random.seed, ...) and an unseeded default_rng().
UNSEEDED = re.compile(r"np\.random\.(?!default_rng\(\s*[^\s)])[a-z_]+\(")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_random_numbers_are_seeded(path):
    for cell in code_cells(path):
        found = UNSEEDED.findall(cell.source)
        assert not found, f"use np.random.default_rng(seed): {found} in\n{cell.source}"


def has_picture(cell) -> bool:
    for out in cell.outputs:
        data = out.get("data", {})
        if "image/svg+xml" in data or "<svg" in str(data.get("text/html", "")):
            return True
    return False


def compared_graph_text(cell) -> bool:
    """A DOT text or a text summary in the cell's printed output, and nbval compares it."""
    if SKIP_MARKERS.intersection(comment_lines(cell.source)):
        return False
    text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
    return "digraph " in text or re.search(r"^graph of .+: \d+ Functions?", text, re.M) is not None


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_graph_picture_comes_with_compared_text(path):
    # nbval's sanitize file masks SVG documents, so each picture's content is checked through its
    # DOT text or its summary, printed by the same cell or the next code cell.
    cells = code_cells(path)
    for i, cell in enumerate(cells):
        if has_picture(cell):
            following = cells[i + 1 : i + 2]
            assert compared_graph_text(cell) or any(map(compared_graph_text, following)), (
                f"a graph picture without DOT text or a summary after it:\n{cell.source}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_optional_packages_are_imported_with_a_skip(path):
    # torch and cupy are optional: a cell that imports one must run without it and, since its
    # output depends on the machine, must not be compared.
    for cell in code_cells(path):
        if re.search(r"^\s*(import|from) (torch|cupy)\b", cell.source, re.M):
            assert "except ImportError" in cell.source, cell.source
            assert "NBVAL_IGNORE_OUTPUT" in comment_lines(cell.source), cell.source


def test_the_readme_pictures_are_chapter_10s():
    # The README shows figures/graph_*.svg and engine_replay.gif; chapter 10 draws the same graph with
    # the same options and prints the same replay, so the pictures and the chapter cannot drift apart.
    pytest.importorskip("varfunc")
    from IPython.display import HTML  # the chapter's own import

    from varfunc import viz
    from varfunc.viz import figures

    path = NOTEBOOKS / "10_then_and_now.ipynb"
    cells = code_cells(path)
    index = next(i for i, cell in enumerate(cells) if "figures.example()" in cell.source)
    namespace = {"viz": viz, "figures": figures, "HTML": HTML}
    exec(cells[index].source, namespace)
    directory = NOTEBOOKS.parent / "figures"
    for picture, stem in zip(namespace["readme_pictures"], ("graph_v01", "graph_modern")):
        stored = (directory / f"{stem}.dot").read_text(encoding="utf-8")
        assert picture.source.strip() == stored.strip(), f"figures/{stem}.dot differs: run `make figures`"
    replay = (directory / "engine_replay.txt").read_text(encoding="utf-8").strip()
    printed = "".join(out.get("text", "") for out in cells[index + 1].outputs)
    assert replay in printed, "chapter 10 does not print figures/engine_replay.txt: re-run one or the other"
