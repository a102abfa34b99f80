"""Declared inputs of a snippet: the data files and environment variables it reads.

A snippet declares them in its tag block (``depends = ["data/table.csv"]``,
``env = ["MY_VAR"]``), a project for every Python snippet in ``conf.py``
(``snipcheck_depends``, ``snipcheck_env``); compare mystmd's
``depends_on_env`` and Quarto's ``freeze``.  Declared files are paths or glob
patterns relative to the project root (the directory of ``conf.py``); a
directory stands for every file below it.  They must resolve inside the
project, symbolic links included.  Each run gets a copy of them at the same
relative path in its run directory (its working directory), so
``open("data/table.csv")`` reads the same bytes as in the project, and nothing
the snippet writes reaches the original.  Their contents (SHA-256) and the
declared variables' values are part of the snippet's cache key.

Pure core: standard library only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path


class InputError(ValueError):
    """A declared data file pattern that cannot be used (the message says why)."""


def resolve(patterns: Iterable[str], root: Path) -> tuple[tuple[str, str], ...]:
    """The files ``patterns`` name under ``root``.

    :param patterns: relative POSIX paths or glob patterns (``*``, ``?``,
        ``[...]``, ``**`` for any depth), already checked by
        :func:`snipcheck.sources.tags.pattern_problem`.
    :param root: the project root.
    :return: ``(relative path, absolute resolved path)`` of every file, sorted
        by relative path, each once.
    :raises InputError: if a pattern matches no file, or a match resolves
        outside ``root`` (through a symbolic link).
    """
    root = Path(root)
    real_root = root.resolve()
    found: dict[str, str] = {}
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            matches = sorted(root.glob(pattern))
        else:
            matches = [root / pattern] if os.path.lexists(root / pattern) else []
        files: list[Path] = []
        for match in matches:
            if match.is_dir():
                files.extend(sorted(p for p in match.rglob("*") if not p.is_dir()))
            else:
                files.append(match)
        if not files:
            raise InputError(f"{pattern!r} matches no file under {root}; fix the path (relative to the project root)")
        for path in files:
            rel = path.relative_to(root).as_posix()
            real = path.resolve()
            if not real.is_relative_to(real_root):
                raise InputError(
                    f"{rel} resolves to {real}, outside the project {real_root}; "
                    "declared data files must live in the project"
                )
            if not real.is_file():
                raise InputError(f"{rel} is not a regular file (a broken link?); declare files only")
            found[rel] = str(real)
    return tuple(sorted(found.items()))


class Digests:
    """SHA-256 of files, each read once per instance (one instance per build).

    The memo is keyed by path and ``(mtime_ns, size, inode)``; it lives no
    longer than one build, so a file rewritten between builds within the
    file system's timestamp granularity is still read again.
    """

    def __init__(self) -> None:
        self._memo: dict[str, tuple[tuple[int, int, int], str]] = {}

    def __call__(self, path: str) -> str | None:
        """The hex digest of ``path``, or ``None`` if it cannot be read."""
        try:
            st = os.stat(path)
            signature = (st.st_mtime_ns, st.st_size, st.st_ino)
            hit = self._memo.get(path)
            if hit is not None and hit[0] == signature:
                return hit[1]
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except OSError:
            return None
        self._memo[path] = (signature, h.hexdigest())
        return h.hexdigest()


def values(names: Iterable[str]) -> dict[str, str | None]:
    """The current values of the variables ``names`` (``None``: not set)."""
    return {name: os.environ.get(name) for name in names}
