"""What every command prints the same way: paths, places, errors, colour, progress.

Imports only the standard library and the layers below ``app``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TextIO

from snipcheck.files import ChangedOnDisk
from snipcheck.pending import notebook_write
from snipcheck.sources import notebook_cells
from snipcheck.sources.placement import Placement

#: Exit status of bad usage or input.
USAGE_ERROR = 2


def use_color(stream: TextIO) -> bool:
    """Colour on a terminal; ``NO_COLOR`` turns it off, ``FORCE_COLOR`` on (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty()


def fail(message: str, status: int = 1) -> int:
    """Print ``error: message`` on stderr; return ``status``."""
    print(f"error: {message}", file=sys.stderr)
    return status


def rel(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def rel_entry(path: Path) -> str:
    """:func:`rel` of the folder, then the name: a page that is a broken
    symbolic link or a loop of links is shown by its own name (resolving
    would follow it, or fail on a loop)."""
    folder = rel(path.parent)
    return path.name if folder == "." else f"{folder}/{path.name}"


def where(p: Placement) -> str:
    """``path:line`` of a placement, the path as :func:`rel` shows it
    (``path, cell N (id ID)`` for a notebook cell, ``path:line, cell N (id ID)``
    for a text notebook's: :func:`snipcheck.sources.notebook_cells.label`)."""
    return notebook_cells.label(p, rel(Path(p.source)))


def plain(rest: str) -> str:
    """A one-line reST docstring as terminal text: a ``literal`` is quoted, a :role:`text` is its text."""
    return re.sub(r"``(.+?)``", r'"\1"', re.sub(r":[\w:.-]+:`([^`]*)`", r"\1", rest))


def changed(exc: ChangedOnDisk, command: str) -> str:
    """What to say when another process wrote a file while ``command`` ran."""
    if isinstance(exc, notebook_write.NotebookChanged):
        return (
            f"{rel(exc.path)}: {exc.cells}: the notebook changed on disk since snipcheck {command} read it (saved "
            f"in Jupyter or an editor meanwhile); nothing was written: save and close it there (Jupyter would "
            f"write its own outputs over the new ones), then run snipcheck {command} again"
        )
    return (
        f"{rel(exc.path)} changed on disk while snipcheck {command} ran (another record or accept, or an editor, "
        f"wrote it after {command} had read it); nothing was written: run snipcheck {command} again"
    )


def progress(done: int, total: int, snippet_id: str) -> None:
    """One progress line on stderr, rewritten in place on a terminal."""
    line = f"[{done}/{total}] {snippet_id}"
    if sys.stderr.isatty():
        print("\r\x1b[K" + line, end="", file=sys.stderr, flush=True)
    elif done == total or done % 25 == 0:
        print(line, file=sys.stderr, flush=True)


def origin(place: str, how: str, duration: float) -> None:
    """Say (on stderr) whether a snippet ran or came from the cache, and its run time (``-v``).

    :param place: ``path:line: id`` of its placement.
    :param how: ``"run"`` or ``"cache"`` (others say nothing: they are reported anyway).
    :param duration: seconds its run took (for a cache hit, the run that made the entry).
    """
    if how == "run":
        print(f"{place}: ran in {duration:.2f} s", file=sys.stderr)
    elif how == "cache":
        print(f"{place}: from the cache (its run took {duration:.2f} s)", file=sys.stderr)
