"""Accept new outputs: rewrite drifted stated outputs and move the reference pin.

Given a verify report, :func:`plan` collects an edit for every ``drifted``
snippet (never for ``failing`` ones, which need a person), after checking that
the chapter source still states what the report compared against.
:func:`apply` then rewrites each file once, bottom-up, atomically (see
:func:`snipcheck.docsource.rewrite`), and moves ``reference-torch`` in
``pyproject.toml``; every other byte stays as it was.

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from . import docsource
from .cache import write_atomic
from .verify import Report

_PIN = re.compile(r'^(\s*reference-torch\s*=\s*)"([^"]*)"', re.MULTILINE)


@dataclass
class Plan:
    """Edits to make.

    :param edits: source file → {directive line → (new body, options to set)}.
    :param accepted: ids of the snippets whose output will be rewritten.
    :param skipped: ``(id, reason)`` for drifted snippets left alone.
    :param pin: the new ``reference-torch`` value, or ``None`` to keep it.
    """

    edits: dict[Path, dict[int, tuple[str, dict[str, str]]]] = field(default_factory=lambda: defaultdict(dict))
    accepted: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    pin: str | None = None


def plan(report: Report, root: Path) -> Plan:
    """Work out the edits that accept ``report``'s drifted outputs.

    :param root: the project root the report's ``doc`` paths are relative to.
    """
    result = Plan()
    current = {}
    for snippet in report.snippets:
        if snippet.status != "drifted" or snippet.actual is None:
            continue
        path = root / snippet.doc
        if path not in current:
            current[path] = {p.line: p for p in docsource.scan(path)} if path.is_file() else {}
        placement = current[path].get(snippet.line)
        if placement is None or placement.snippet_id != snippet.id:
            result.skipped.append((snippet.id, f"{snippet.doc}:{snippet.line} no longer places it; verify again"))
            continue
        if placement.body != snippet.stated:
            result.skipped.append((snippet.id, f"{snippet.doc}:{snippet.line} was edited since the report; verify again"))
            continue
        options = {}
        if placement.option("stated-env") is not None:
            options["stated-env"] = f"{report.stamp.label()} · {report.stamp.platform}"
        result.edits[path][snippet.line] = (snippet.actual, options)
        result.accepted.append(snippet.id)
    if report.stamp.torch:
        try:
            result.pin = Version(report.stamp.torch).public
        except InvalidVersion:
            result.pin = report.stamp.torch
    return result


def preview(p: Plan) -> str:
    """A unified diff of every file the plan changes (for ``--dry-run``)."""
    import difflib

    chunks: list[str] = []
    for path in sorted(p.edits):
        old = path.read_text(encoding="utf-8")
        new = docsource.rewrite_text(old, p.edits[path], path)
        chunks.extend(
            difflib.unified_diff(old.splitlines(), new.splitlines(), str(path), str(path), lineterm="")
        )
    return "\n".join(chunks)


def uncommitted(paths: list[Path], root: Path) -> list[str] | None:
    """Paths among ``paths`` with uncommitted changes, or ``None`` outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--", *[str(p) for p in paths]],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return [line[3:] for line in out.stdout.splitlines() if line.strip()]


def move_pin(text: str, version: str) -> str:
    """``pyproject.toml`` text with ``reference-torch`` set to ``version``.

    :raises ValueError: if the file has no ``reference-torch = "..."`` line.
    """
    if not _PIN.search(text):
        raise ValueError('pyproject.toml has no line reference-torch = "..." under [tool.snipcheck]')
    return _PIN.sub(lambda m: f'{m.group(1)}"{version}"', text, count=1)


def apply(p: Plan, root: Path) -> list[Path]:
    """Write the plan: the source files and the pin, all or nothing.

    Every new text is worked out before the first write, so an edit that
    cannot be made (:class:`~snipcheck.docsource.UnwritableBody`, a moved
    directive) stops the accept with nothing written.  Each file is written
    atomically; if a write fails or is interrupted (a full disk, Ctrl-C), the
    files already rewritten are put back, so the chapter never states outputs
    of two torch versions under one pin.

    :return: the files changed.
    :raises OSError: if a file cannot be written (nothing is left changed,
        unless putting a file back failed too: the message then names it).
    """
    writes: list[tuple[Path, bytes, bytes]] = []  # (path, old bytes, new bytes)
    for path in sorted(p.edits):
        old = path.read_bytes()
        new = docsource.rewrite_bytes(old, p.edits[path], path)
        if new != old:
            writes.append((path, old, new))
    pyproject = root / "pyproject.toml"
    if p.pin and pyproject.is_file():
        old = pyproject.read_bytes()
        new = move_pin(old.decode("utf-8"), p.pin).encode("utf-8")
        if new != old:
            writes.append((pyproject, old, new))
    done: list[tuple[Path, bytes]] = []
    try:
        for path, old, new in writes:
            try:
                write_atomic(path, new)
            except OSError as exc:
                raise OSError(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from exc
            done.append((path, old))
    except BaseException as exc:
        stuck = []
        for path, old in reversed(done):
            try:
                write_atomic(path, old)
            except OSError:
                stuck.append(str(path))
        if stuck and isinstance(exc, OSError):
            raise OSError(exc.errno, f"{exc.strerror}; and could not put back {', '.join(stuck)}") from exc
        raise
    return [path for path, _, _ in writes]
