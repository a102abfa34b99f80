"""Accept new outputs: rewrite drifted stated outputs and move the reference pin.

Given a verify report and the placement index, :func:`plan` decides a
pending change (:mod:`snipcheck.pending.change`) for every ``drifted``
snippet (never for ``failing`` ones, which need a person), after checking
that the page still states what the report compared against.  The one
commit of ``record``, ``accept`` and ``review``
(:func:`snipcheck.pending.commit.commit`) writes the accepted ones with the
pin (:func:`pin_change`): the pages read back through the build's parser by
:meth:`snipcheck.app.project.Project.rewrite`, every file all or nothing.

The reference pin lives where the project keeps it: ``reference-torch`` under
``[tool.snipcheck]`` in ``pyproject.toml`` (this chapter), or
``snipcheck_reference = "torch X"`` in ``conf.py`` (any project).

Pure core: no Sphinx import (the project reads the index through it lazily).
"""

from __future__ import annotations

import difflib
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from snipcheck.app.project import Project
from snipcheck.judge import figures as figure_files
from snipcheck.judge.normalize import Normalizer
from snipcheck.model import Figure
from snipcheck.pending import change, commit
from snipcheck.pending.change import Change, Decision
from snipcheck.pending.recording import Unrecordable, to_record
from snipcheck.report.verify import Report, SnippetReport
from snipcheck.sources.placement import Placement
from snipcheck.sources.rewrite import Edit

_PYPROJECT_PIN = re.compile(r'^(\s*reference-torch\s*=\s*)"([^"]*)"', re.MULTILINE)
_CONF_PIN = re.compile(r'^(snipcheck_reference\s*=\s*)(["\'])torch ([^"\']*)\2', re.MULTILINE)


@dataclass
class Plan:
    """What accepting a report would do.

    :param changes: one pending change per drifted snippet asked for, in
        the report's order (:mod:`snipcheck.pending.change`): accepted, or
        refused with the reason.
    :param pin: the new reference torch version, or ``None`` to keep it.
    """

    changes: list[Change] = field(default_factory=list)
    pin: str | None = None

    @property
    def edits(self) -> list[Edit]:
        """The page edits of the accepted changes."""
        return change.edits(self.changes)

    @property
    def accepted(self) -> list[str]:
        """Ids of the snippets whose output (or figures) will be written."""
        return [c.snippet_id for c in self.changes if c.accepted]

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """``(id, reason)`` of the drifted snippets left alone."""
        return [(c.snippet_id, c.reason) for c in self.changes if c.decision is Decision.REFUSED]

    @property
    def figures(self) -> list[tuple[str, tuple[Figure, ...]]]:
        """``(id, figures)`` of the accepted snippets whose figures become
        their stated files (:func:`snipcheck.judge.figures.write_recorded`)."""
        return [(c.snippet_id, c.figures) for c in self.changes if c.accepted and c.figures is not None]


def plan(
    report: Report,
    placements: Sequence[Placement],
    root: Path,
    only: Sequence[str] = (),
    normalizers: Sequence[Normalizer] = (),
) -> Plan:
    """Work out the changes that accept ``report``'s drifted outputs.

    Each new stated output is the actual one with the author's wildcards kept
    where they still match (:func:`snipcheck.pending.recording.to_record`); an actual
    output that would turn into a wildcard is refused, saying why.

    :param placements: the placement index now.
    :param root: the project root the report's ``doc`` paths are relative to.
    :param only: accept just these snippet ids (all drifted ones when empty).
    :param normalizers: the project's normalizers (to tell which wildcards still match).
    """
    result = Plan()
    by_place = {(p.snippet_id, _rel(Path(p.source), root)): p for p in placements}
    for snippet in report.snippets:
        output = snippet.output  # as it ran; from a report file, as the file holds it
        if snippet.status != "drifted" or output is None or (only and snippet.id not in only):
            continue
        placed = by_place.get((snippet.id, snippet.doc))
        result.changes.append(_change(snippet, output, placed, report, normalizers))
    if report.stamp.torch:
        try:
            result.pin = Version(report.stamp.torch).public
        except InvalidVersion:
            result.pin = report.stamp.torch
    return result


def _change(
    snippet: SnippetReport, output: str, placement: Placement | None, report: Report, normalizers: Sequence[Normalizer]
) -> Change:
    """The pending change that accepts ``snippet``'s drifted ``output`` where ``placement`` states it."""
    if placement is None:
        return change.refuse(snippet.id, None, f"{snippet.doc} no longer places it; verify again")
    if placement.stated != snippet.stated:
        return change.refuse(snippet.id, placement, f"{snippet.doc}:{placement.line} was edited since the report; verify again")
    if figure_files.placeholders(output) and not snippet.figures:
        return change.refuse(
            snippet.id, placement,
            f"{snippet.doc}:{placement.line}: not accepted: its figures are not in the report (a JSON report "
            "holds no images); accept without --report, or record it",
        )  # fmt: skip
    if not snippet.diff:  # only its figures drifted: the page stays as it is
        return change.accept(placement, None, figures=snippet.figures)
    try:
        body = to_record(placement.stated, output, normalizers)
    except Unrecordable as exc:
        why = str(exc)
        if snippet.run_actual is None:  # read from a report file, which masks what varies
            why = (
                f"{why} (a verify report file writes each part of an output that varies from run to run "
                "as [..]; accept without --report, which runs the snippet, or record it)"
            )
        return change.refuse(snippet.id, placement, f"{snippet.doc}:{placement.line}: not accepted: {why}")
    options = {}
    if placement.option("stated-env") is not None:
        options["stated-env"] = f"{report.stamp.label()} · {report.stamp.platform}"
    return change.accept(placement, body, options=options, figures=snippet.figures, diff=snippet.diff)


def pin_file(root: Path) -> Path | None:
    """The file that holds the reference pin, or ``None`` when the project has none."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and _PYPROJECT_PIN.search(pyproject.read_text(encoding="utf-8")):
        return pyproject
    conf = root / "conf.py"
    if conf.is_file() and _CONF_PIN.search(conf.read_text(encoding="utf-8")):
        return conf
    return None


def move_pin(text: str, version: str, kind: str = "pyproject") -> str:
    """``text`` (of ``pyproject.toml`` or ``conf.py``) with the pin set to ``version``.

    :raises ValueError: if the text has no pin line.
    """
    if kind == "pyproject":
        if not _PYPROJECT_PIN.search(text):
            raise ValueError('pyproject.toml has no line reference-torch = "..." under [tool.snipcheck]')
        return _PYPROJECT_PIN.sub(lambda m: f'{m.group(1)}"{version}"', text, count=1)
    if not _CONF_PIN.search(text):
        raise ValueError('conf.py has no line snipcheck_reference = "torch ..."')
    return _CONF_PIN.sub(lambda m: f"{m.group(1)}{m.group(2)}torch {version}{m.group(2)}", text, count=1)


def pin_change(p: Plan, confdir: Path) -> dict[Path, tuple[bytes, bytes]]:
    """The pin file's ``(old bytes, new bytes)``, when the plan moves the pin."""
    pinned = pin_file(confdir)
    if not p.pin or pinned is None:
        return {}
    old = pinned.read_bytes()
    kind = "pyproject" if pinned.name == "pyproject.toml" else "conf"
    new = move_pin(old.decode("utf-8"), p.pin, kind).encode("utf-8")
    return {pinned: (old, new)} if new != old else {}


def new_files(p: Plan, project: Project) -> dict[Path, tuple[bytes, bytes]]:
    """Every file the plan changes: ``path → (old bytes, new bytes)``; nothing is written.

    :raises snipcheck.sources.rewrite.Unwritable: see :meth:`Project.rewrite`.
    """
    return commit.stage(p.changes, project.rewrite, pin_change(p, project.confdir))


def apply(p: Plan, project: Project, **options: Any) -> list[Path]:
    """Write the plan's pages, pin and figures, all or nothing, through
    :func:`snipcheck.pending.commit.commit` (``options`` go to it).

    :return: the files changed: the pages and pin, then the stated figures.
    :raises snipcheck.sources.rewrite.Unwritable: before anything is written.
    :raises snipcheck.files.ChangedOnDisk: if a file changed since it was read.
    :raises snipcheck.files.WriteError: if a write fails (every file keeps its old bytes).
    """
    done = commit.commit(
        p.changes, rewrite=project.rewrite, srcdir=project.srcdir, also=pin_change(p, project.confdir), **options
    )
    return done.replaced + done.figures


def preview(files: dict[Path, tuple[bytes, bytes]], root: Path) -> str:
    """A unified diff of every file (for ``--dry-run``), each named relative to
    the project ``root``, as every other path snipcheck prints."""
    chunks: list[str] = []
    for path, (old, new) in sorted(files.items()):
        a = old.decode("utf-8", "replace").splitlines()
        b = new.decode("utf-8", "replace").splitlines()
        shown = _rel(path, root)
        chunks.extend(difflib.unified_diff(a, b, shown, shown, lineterm=""))
    return "\n".join(chunks)


def uncommitted(paths: Sequence[Path], root: Path) -> list[str] | None:
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


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
