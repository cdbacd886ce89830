"""Seconds each chapter takes to run top to bottom, as a student's "Run All" does, without system Graphviz.

Run as ``python -m benchmarks.chapters`` (rewrites the "chapters" section of RESULTS.md; ``--no-write``
only prints). Each chapter runs in a fresh kernel with nbclient; the time includes starting the
kernel. Graphviz's ``dot`` program is hidden from PATH, so graphs render through the pip-installed
pygraphviz as on a pip-only machine. The targets come from the chapters issue: each chapter under
20 s on a 2-core CPU machine with no GPU, the whole set under 2 minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from varfunc.backend import gpu_status

from .common import toward_verdict, verdict
from .results import publish

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CHAPTER_LIMIT_S = 20.0
TOTAL_LIMIT_S = 120.0


def hide_dot() -> None:
    """Drop every PATH entry that holds Graphviz's dot, for this process and the kernels it starts."""
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep) if not shutil.which("dot", path=d)]
    os.environ["PATH"] = os.pathsep.join(kept)


def run_chapter(path: Path) -> float:
    """Wall seconds to start a kernel and run every cell of the chapter at path."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main(argv: list | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args(argv)
    hide_dot()
    assert shutil.which("dot") is None, "dot is still on PATH"
    rows = ["| chapter | seconds | under 20 s |", "|---|---:|---|"]
    total = 0.0
    slowest = 0.0
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        seconds = run_chapter(path)
        total += seconds
        slowest = max(slowest, seconds)
        ok = seconds < CHAPTER_LIMIT_S
        rows.append(f"| {path.stem} | {toward_verdict(seconds, ok, 1)} | {'yes' if ok else '**no**'} |")
        print(rows[-1], flush=True)
    has_gpu, why = gpu_status()
    slowest_ok, total_ok = slowest < CHAPTER_LIMIT_S, total < TOTAL_LIMIT_S
    slowest_s, total_s = toward_verdict(slowest, slowest_ok, 1), toward_verdict(total, total_ok, 1)
    body = "\n".join(
        [
            "Each chapter run top to bottom in a fresh kernel (nbclient; kernel start included), "
            f"with Graphviz's `dot` hidden from PATH (graphs through pygraphviz). GPU: "
            f"{'yes' if has_gpu else 'none'} ({why}).",
            "",
            *rows,
            f"| **all {len(rows) - 2}** | **{total_s}** | |",
            "",
            f"Targets: every chapter under {CHAPTER_LIMIT_S:.0f} s (slowest {slowest_s} s, "
            f"**{verdict(slowest_ok)}**); the whole set under {TOTAL_LIMIT_S:.0f} s "
            f"({total_s} s, **{verdict(total_ok)}**).",
        ]
    )
    return publish("chapters", "python -m benchmarks.chapters", body, write=not args.no_write)


if __name__ == "__main__":
    main()
