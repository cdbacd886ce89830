"""Relative links in released Markdown: they must still lead to the same files from the release folder.

A chapter links to files next to the notebooks folder (``../docs/differences.md``, ``../README.md``);
in a release folder that is not exactly one level below the checkout such a link led nowhere. Links
to files outside the released folder are rewritten to the path from the release folder (an absolute
path where there is none, e.g. on another drive); links within it (another chapter) and web links
are kept as they are.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote, unquote

# [text](link "title"), <img src="link">, <a href="link">, and a reference definition [name]: link
_LINKS = (
    re.compile(r"(\]\(\s*<?)([^)\s>]+)"),
    re.compile(r"""((?:src|href)\s*=\s*["'])([^"']+)"""),
    re.compile(r"^([ \t]{0,3}\[[^\]]+\]:[ \t]*<?)(\S+?)(?=>|\s|$)", re.M),
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, mailto:, attachment:, data:, C:


def relinked(text: str, source_dir: Path, target_dir: Path, root: Path) -> str:
    """text (Markdown) with each relative link that leaves root made to work from target_dir instead
    of source_dir (where the file was)."""
    source_dir, target_dir, root = (Path(os.path.abspath(p)) for p in (source_dir, target_dir, root))

    def fix(match: re.Match) -> str:
        return match.group(1) + _moved(match.group(2), source_dir, target_dir, root)

    for pattern in _LINKS:
        text = pattern.sub(fix, text)
    return text


def _moved(link: str, source_dir: Path, target_dir: Path, root: Path) -> str:
    """The link as seen from target_dir, if it is relative and points outside root; else unchanged."""
    if not link or _SCHEME.match(link) or link.startswith(("#", "/", "\\")):
        return link
    path, hash_sign, fragment = link.partition("#")
    real = os.path.normpath(source_dir / unquote(path))
    if _inside(real, root):
        return link
    try:
        new = Path(os.path.relpath(real, target_dir)).as_posix()
    except ValueError:  # no relative path between them (another drive): the absolute one
        new = Path(real).as_posix()
    return quote(new, safe="/:~") + hash_sign + fragment


def _inside(path: str, root: Path) -> bool:
    try:
        return os.path.commonpath([path, str(root)]) == str(root)
    except ValueError:  # another drive
        return False
