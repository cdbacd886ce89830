"""How submissions are graded (time limits, the expected chapter, where hidden checks come from),
checked before anything is graded, and the fingerprint a report keeps of them (for resuming)."""

from __future__ import annotations

import hashlib
import math
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

from .. import __version__

REPORT_VERSION = 1
GRADER_SOURCES = Path(__file__).resolve().parent  # the checks' code: a change to it grades everything again
KIT_SOURCES = GRADER_SOURCES.parent  # the package a submission's code could write into (varfunc/)


@dataclass(frozen=True)
class GradeOptions:
    """How submissions are graded: time limits, the expected chapter, where hidden checks come from."""

    cell_timeout: float = 60.0
    notebook_timeout: float = 600.0
    chapter: str | None = None
    source: Path | None = None
    hidden_files: tuple[Path, ...] = ()
    kernel_name: str = "python3"
    memory_gib: float = 4.0  # each submission's kernel (Linux); 0: no limit
    max_output_mib: float = 20.0  # the outputs a submission keeps, in all; 0: no limit

    def __post_init__(self) -> None:
        """Refuse settings that would grade every submission wrongly, before anything is graded."""
        _check_seconds("--timeout", self.cell_timeout)
        _check_seconds("--notebook-timeout", self.notebook_timeout)
        _check_memory(self.memory_gib)
        _check_max_output(self.max_output_mib)
        _check_chapter(self.chapter)
        _check_source(self.source)
        for path in self.hidden_files:
            _check_hidden(Path(path))
        # Absolute from here on: the kernels run in folders of their own, where a relative path
        # (--hidden my_checks.py) named nothing and every exercise scored 0.
        object.__setattr__(self, "hidden_files", tuple(Path(p).resolve() for p in self.hidden_files))
        if self.source is not None:
            object.__setattr__(self, "source", Path(self.source).resolve())

    def fingerprint(self) -> str:
        """A hash of everything besides the submission that decides its grade (for resuming)."""
        parts = [
            __version__,
            str(REPORT_VERSION),
            repr((self.cell_timeout, self.notebook_timeout, self.memory_gib, self.max_output_mib)),
        ]
        parts += [self.chapter or "", self.kernel_name]
        parts += [p.read_text(encoding="utf-8") for p in sorted(GRADER_SOURCES.glob("*.py"))]
        for path in self.hidden_files:
            parts += [str(path), path.read_text(encoding="utf-8")]
        if self.source is not None:
            parts.append(str(self.source))
            parts += [p.read_text(encoding="utf-8") for p in sorted(self.source.glob("*.ipynb"))]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def kit_digests(root: Path | None = None) -> dict[str, str]:
    """{path below root: its SHA-256} for the kit's Python files (root: the installed varfunc/)."""
    root = KIT_SOURCES if root is None else root
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.py")
    }


def changed_files(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The files added, removed or changed between two kit_digests."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def _check_seconds(flag: str, seconds: float) -> None:
    """ValueError unless seconds (a time limit) is a positive, finite number."""
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"{flag} must be a positive number of seconds, not {seconds!r}")


MIN_MEMORY_GIB = 0.5  # a kernel with NumPy and varfunc loaded already holds about 0.2 GiB


def _check_memory(gib: float) -> None:
    """ValueError unless gib (--memory) is 0 (no limit) or at least MIN_MEMORY_GIB."""
    if isinstance(gib, bool) or not isinstance(gib, (int, float)) or not math.isfinite(gib):
        raise ValueError(f"--memory must be a number of GiB (0: no limit), not {gib!r}")
    if gib != 0 and gib < MIN_MEMORY_GIB:
        raise ValueError(
            f"--memory {gib:g} GiB is too little for a kernel with NumPy and varfunc loaded (about "
            f"0.2 GiB): give at least {MIN_MEMORY_GIB:g}, or 0 for no limit"
        )


def _check_max_output(mib: float) -> None:
    """ValueError unless mib (--max-output) is a number of MiB, 0 (no limit) or more."""
    if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not math.isfinite(mib) or mib < 0:
        raise ValueError(f"--max-output must be a number of MiB, 0 or more (0: no limit), not {mib!r}")


def _check_chapter(chapter: str | None) -> None:
    """ValueError unless chapter (--chapter) is None or the id of a chapter with exercises."""
    if chapter is not None and chapter not in known_chapters():
        raise ValueError(
            f"--chapter {chapter!r} is not a chapter with exercises: "
            f"use one of {', '.join(known_chapters())} (e.g. --chapter ch03)"
        )


def _check_source(source: Path | None) -> None:
    """FileNotFoundError unless source (--source) is None or a folder holding notebooks."""
    if source is None:
        return
    if not Path(source).is_dir():
        raise FileNotFoundError(
            f"--source {source}: no such folder; pass the folder of your instructor notebooks (notebooks/)"
        )
    if not any(Path(source).glob("*.ipynb")):
        raise FileNotFoundError(f"--source {source} holds no notebooks (.ipynb): pass the folder that does")


def _check_hidden(path: Path) -> None:
    """FileNotFoundError unless path (--hidden) is a file."""
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "no such file"
        raise FileNotFoundError(
            f"--hidden {path}: {what}; --hidden takes a Python file (.py) of @hidden_check functions "
            "that you write and keep away from students (README.md, 'Visible and hidden checks', shows "
            "one); check the path, or leave --hidden out"
        )


def check_kernel(name: str) -> None:
    """ValueError unless a Jupyter kernel of that name is installed (--kernel), before anything is graded."""
    from jupyter_client.kernelspec import KernelSpecManager

    known = sorted(KernelSpecManager().find_kernel_specs())
    if name not in known:
        raise ValueError(
            f"--kernel {name!r}: no Jupyter kernel of that name is installed; use one of "
            f"{', '.join(known) or 'none found'} (jupyter kernelspec list shows them), or leave --kernel out"
        )


def known_chapters() -> list[str]:
    """The ids of the chapters that have exercises (``ch02`` ... ): one check module each."""
    names = (module.name for module in pkgutil.iter_modules([str(Path(__file__).parent)]))
    return sorted(name for name in names if re.fullmatch(r"ch\d\d", name))
