"""Relative links in released Markdown: a release holds what its chapters link to.

A chapter links to files next to the notebooks folder (``../docs/differences.md``). A student copy
handed out on its own (a zip of the release folder, or a wheel of the package, which has no docs)
would lose them, and a link rewritten to lead back into the instructor's checkout would lead
nowhere on a student's machine. So each file outside the released folder that a link names is
copied into the release, below it as it was below the source folder's parent
(``out/docs/differences.md``), or into ``out/linked/`` when it is further away, and the link is
rewritten to the copy. Links within the folder (another chapter), to files that do not exist, and
web links are kept as they are.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from urllib.parse import quote, unquote

# [text](link "title"), <img src="link">, <a href="link">, and a reference definition [name]: link
_LINKS = (
    re.compile(r"(\]\(\s*<?)([^)\s>]+)"),
    re.compile(r"""((?:src|href)\s*=\s*["'])([^"']+)"""),
    re.compile(r"^([ \t]{0,3}\[[^\]]+\]:[ \t]*<?)(\S+?)(?=>|\s|$)", re.M),
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, mailto:, attachment:, data:, C:


class LinkedCopies:
    """The files outside a released folder that its Markdown links to, and where their copies go."""

    def __init__(self, root: Path, out: Path, taken: set[Path] | None = None) -> None:
        self.base = Path(os.path.abspath(root)).parent
        self.out = Path(os.path.abspath(out))
        self.taken = {Path(os.path.abspath(p)) for p in taken or ()}  # the release's own files
        self.copies: dict[str, Path] = {}  # the linked file -> its copy in the release

    def place(self, real: str) -> Path:
        """Where the copy of the file at real goes: out/docs/x.md for root/../docs/x.md."""
        if real not in self.copies:
            try:
                relative = Path(os.path.relpath(real, self.base))
            except ValueError:  # another drive
                relative = Path("..")
            copy = self.out / relative
            if relative.parts[0] == ".." or copy in self.taken or copy in self.copies.values():
                copy = self.out / "linked" / Path(real).name
            self.copies[real] = copy
        return self.copies[real]

    def write(self) -> None:
        """Copy each linked file to its place in the release."""
        for real, copy in self.copies.items():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(real, copy)

    def written(self) -> list[Path]:
        """The copies, as paths below the release folder (out), sorted."""
        return sorted(copy.relative_to(self.out) for copy in self.copies.values())


def relinked(text: str, source_dir: Path, target_dir: Path, root: Path, copies: LinkedCopies) -> str:
    """text (Markdown) written from source_dir to target_dir, with each relative link to a file outside
    root led to its copy in the release (which copies records)."""
    source_dir, target_dir, root = (Path(os.path.abspath(p)) for p in (source_dir, target_dir, root))

    def fix(match: re.Match) -> str:
        return match.group(1) + _moved(match.group(2), source_dir, target_dir, root, copies)

    for pattern in _LINKS:
        text = pattern.sub(fix, text)
    return text


def _moved(link: str, source_dir: Path, target_dir: Path, root: Path, copies: LinkedCopies) -> str:
    """The link to the release's copy, if it is relative and names a file outside root; else unchanged."""
    if not link or _SCHEME.match(link) or link.startswith(("#", "/", "\\")):
        return link
    path, hash_sign, fragment = link.partition("#")
    real = os.path.normpath(source_dir / unquote(path))
    if _inside(real, root) or not os.path.isfile(real):
        return link
    new = Path(os.path.relpath(copies.place(real), target_dir)).as_posix()
    return quote(new, safe="/:~") + hash_sign + fragment


def _inside(path: str, root: Path) -> bool:
    try:
        return os.path.commonpath([path, str(root)]) == str(root)
    except ValueError:  # another drive
        return False
