"""Paths as the build's warnings show them: relative to the project's root
where they lie under it, whole otherwise.

One helper for every module of the Sphinx layer that names a file in a
message (results, figure_nodes).  Imports nothing of snipcheck.
"""

from __future__ import annotations

from pathlib import Path


def shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form, or whole when it is not under ``root``."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
