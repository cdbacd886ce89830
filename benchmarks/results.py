"""Write one benchmark's section of benchmarks/RESULTS.md, leaving the other sections as they are."""

from __future__ import annotations

import platform
import re
import sys
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = (
    "# Benchmark results\n\n"
    "Each section is rewritten by the command named in it; ratios are measured in one run.\n"
)


def machine() -> str:
    """One line describing where the figures were measured."""
    return (
        f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}, "
        f"{platform.system()}, {_cores()} cores"
    )


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def write_section(name: str, command: str, body: str) -> None:
    """Replace (or append) the section called name with the command that made it and its body."""
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    section = (
        f"<!-- {name}:start -->\n## {name}\n\nCommand: `{command}`  \nMachine: {machine()}\n\n"
        f"{body.strip()}\n<!-- {name}:end -->\n"
    )
    # \n?: the file's last section may lack its final newline (an editor, a hand-made file)
    pattern = re.compile(rf"<!-- {re.escape(name)}:start -->.*?<!-- {re.escape(name)}:end -->\n?", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)
    print(f"wrote section {name!r} of {RESULTS}", file=sys.stderr)


def publish(name: str, command: str, body: str, write: bool = True) -> str:
    """Print a benchmark's body and (unless write is False) make it the section called name."""
    if write:
        write_section(name, command, body)
    print(body)
    return body
