"""Verify every placed snippet on some interpreter and build a drift report.

This is the maintainer's check on a new torch release, done without a Sphinx
build: take the placements of the placement index (read as the build reads
the pages), run each snippet on the given interpreter (through the result
cache, whose key holds the whole environment, so nothing from another release
is reused), and judge actual against stated output exactly as the build does.

Each snippet gets one status, the report's word (:data:`WORDS`) for the
verdict of the check step (:func:`snipcheck.judge.verdict.check`):

``unchanged``  output and ending as stated;
``drifted``    it ended as expected, but the output (or a figure) differs
               (diff attached);
``failing``    it timed out, crashed, or ended differently from its tags
               (an expected exception that no longer happens, say), or
               its output reached the output limit (what was cut was not
               checked, so it is never ``unchanged`` nor ``drifted``), or,
               for a cell of a chain, it ended the chain's process, or an
               earlier cell failed or ended it before it ran;
``not-run``    this environment lacks a requirement (which one is listed);
``error``      the snippet could not be loaded (missing file, bad tag block).

A difference that hits many snippets alike, such as a new warning printed at
``import torch``, is reported once under ``environment_wide``
(:func:`snipcheck.judge.verdict.environment_wide`) and does not by itself
make a snippet ``drifted`` in the summary counts; the per-snippet diff still
shows it, and accepting writes it everywhere it occurs.

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snipcheck.engine.execute import Executor
from snipcheck.judge.compare import as_terminal, masking_normalizers, text_diff
from snipcheck.judge.verdict import Status, check, environment_wide, unloadable
from snipcheck.model import Figure, Snippet, Stamp
from snipcheck.report.steady import problem as steady_problem
from snipcheck.report.steady import steady
from snipcheck.settings import Settings
from snipcheck.sources import notebook_cells
from snipcheck.sources.placement import Placement, fingerprint
from snipcheck.sources.snippets import SnippetError, load

SCHEMA = "snipcheck-verify/3"
#: Older schemas :meth:`Report.from_json` still reads (for the versions page,
#: merge, accept and review): /2 added ``fingerprint``; /3 writes what varies
#: from run to run as wildcards (:mod:`snipcheck.report.steady`), where /1 and /2
#: hold each output as it ran.
OLD_SCHEMAS = ("snipcheck-verify/2", "snipcheck-verify/1")
#: Per-snippet fields that vary from run to run: shown in the terminal and the
#: HTML page, left out of the JSON file (which is committed).
VOLATILE = ("duration", "origin")
#: Per-snippet fields kept in memory only, for accept and review after a run:
#: the figures' images and the output as it ran (what varies stays out of the
#: committed report: see :mod:`snipcheck.report.steady`).
IN_MEMORY = ("figures", "run_actual", "run_diff")
STATUSES = ("unchanged", "drifted", "failing", "not-run", "error")
#: The report's word for each verdict of the check step (:mod:`snipcheck.judge.verdict`):
#: the on-disk names of ``snipcheck-verify/3``, one of :data:`STATUSES` each.
WORDS: dict[Status, str] = {
    Status.OK: "unchanged",
    Status.DRIFT: "drifted",
    Status.FIGURES: "drifted",
    Status.ENDED_WRONG: "failing",
    Status.FAILED: "failing",
    Status.TIMEOUT: "failing",
    Status.TRUNCATED: "failing",
    Status.STOPPED: "failing",
    Status.NOT_RUN: "not-run",
    Status.ERROR: "error",
}
#: The statuses of snippets that ran (or were stopped by their chain): among
#: them, a diff line is environment-wide (:data:`snipcheck.judge.verdict.ENV_WIDE_SHARE`).
_RAN = ("unchanged", "drifted", "failing")


@dataclass(frozen=True)
class SnippetReport:
    """One snippet's line in the report (see the module docstring for ``status``).

    :param doc: the chapter source file, relative to the project root.
    :param line: 1-based line of the directive's opening fence.
    :param stated: the stated output; :param actual: the actual output after
        display normalizers (``None`` when not run).
    :param diff: unified diff stated → actual after every normalizer.
    :param env_wide_only: the diff consists only of environment-wide lines.
    :param masked: for ``unchanged`` snippets, the compare-only normalizers
        that hid a difference (e.g. ``torch-line-numbers``).
    :param figures: the run's figures (for ``accept``); not in the JSON form.
    :param run_actual: the actual output as the run printed it (after the
        display normalizers), for ``accept`` and ``review`` after this run;
        not in the JSON form.  ``actual``, ``diff`` and ``masked_diff`` write
        what varies from run to run as wildcards (:mod:`snipcheck.report.steady`),
        so the committed report is the same for every run of the same code.
    :param run_diff: the diff of the run as the check step judged it, the
        one the build's warning shows (the terminal and ``review`` show it
        after this run); not in the JSON form.
    """

    id: str
    doc: str
    line: int
    status: str
    problems: tuple[str, ...] = ()
    diff: str = ""
    stated: str = ""
    actual: str | None = None
    missing: tuple[str, ...] = ()
    duration: float = 0.0
    origin: str = ""
    env_wide_only: bool = False
    masked: tuple[str, ...] = ()
    masked_diff: str = ""
    figures: tuple[Figure, ...] = field(default=(), repr=False)
    run_actual: str | None = field(default=None, repr=False, compare=False)
    run_diff: str | None = field(default=None, repr=False, compare=False)

    @property
    def shown_diff(self) -> str:
        """The diff to show a person: the run's own (as the build shows it)
        after a run, the report's steady one when read from a file."""
        return self.run_diff if self.run_diff is not None else self.diff

    @property
    def output(self) -> str | None:
        """The output to write into the page on accepting: as it ran, or
        (for a report read from a file) as the report holds it."""
        return self.run_actual if self.run_actual is not None else self.actual


@dataclass(frozen=True)
class EnvWideChange:
    """A diff line shared by many snippets.

    :param sign: ``"+"`` (only in the actual output) or ``"-"`` (only stated).
    :param text: the line.
    :param snippets: ids of the snippets whose diff holds it.
    """

    sign: str
    text: str
    snippets: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    """A verify report; :meth:`to_json` gives the documented JSON form.

    :param stamp: environment of the runs.
    :param reference: the reference environment of the stated outputs.
    :param shard: ``(k, n)``: this report covers the k-th of n slices.
    """

    stamp: Stamp
    reference: str
    shard: tuple[int, int]
    snippets: tuple[SnippetReport, ...]
    environment_wide: tuple[EnvWideChange, ...] = ()
    total: int = 0  # placements in the whole chapter (all shards)
    fingerprint: str = ""  # the chapter's placements and sources (see snipcheck.sources.placement.fingerprint)

    def counts(self) -> dict[str, int]:
        c = Counter(s.status for s in self.snippets)
        out = {k: c[k] for k in STATUSES}
        out["drifted"] -= sum(1 for s in self.snippets if s.status == "drifted" and s.env_wide_only)
        out["env-wide-only"] = sum(1 for s in self.snippets if s.env_wide_only)
        return out

    @property
    def holds(self) -> bool:
        """Whether the chapter holds: no drift, nothing failing, nothing broken."""
        return not any(s.status in ("drifted", "failing", "error") for s in self.snippets)

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form: deterministic for the same chapter and
        environment (no timings; outputs as :mod:`snipcheck.report.steady` writes
        them), so a committed report only changes when a result does."""

        def snippet(s: SnippetReport) -> dict[str, Any]:
            data = dataclasses.asdict(dataclasses.replace(s, figures=()))
            for name in VOLATILE + IN_MEMORY:
                data.pop(name)
            return data

        stamp = dataclasses.asdict(self.stamp)
        stamp.pop("env", None)  # the environment's id differs from machine to machine
        return {
            "schema": SCHEMA,
            "stamp": stamp,
            "reference": self.reference,
            "fingerprint": self.fingerprint,
            "shard": {"index": self.shard[0], "count": self.shard[1]},
            "total": self.total,
            "counts": self.counts(),
            "holds": self.holds,
            "environment_wide": [dataclasses.asdict(c) for c in self.environment_wide],
            "snippets": [snippet(s) for s in self.snippets],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """Read a report written by :meth:`to_json`.

        :raises ValueError: for another schema; ``KeyError``/``TypeError`` for a
            damaged file.
        """
        if not isinstance(data, dict) or data.get("schema") not in (SCHEMA, *OLD_SCHEMAS):
            found = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"not a {SCHEMA} report (found {found!r})")

        as_run = data.get("schema") in OLD_SCHEMAS  # outputs as they ran: nothing masked

        def snip(d: dict[str, Any]) -> SnippetReport:
            d = dict(d)
            d["problems"] = tuple(d.get("problems", ()))
            d["missing"] = tuple(d.get("missing", ()))
            d["masked"] = tuple(d.get("masked", ()))
            if as_run:
                d["run_actual"] = d.get("actual")
            return SnippetReport(**d)

        return cls(
            stamp=Stamp(**data["stamp"]),
            reference=data["reference"],
            shard=(data["shard"]["index"], data["shard"]["count"]),
            snippets=tuple(snip(s) for s in data["snippets"]),
            environment_wide=tuple(
                EnvWideChange(c["sign"], c["text"], tuple(c["snippets"])) for c in data["environment_wide"]
            ),
            total=data.get("total", 0),
            fingerprint=data.get("fingerprint", ""),
        )


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``"k/n"`` (1 ≤ k ≤ n).

    :raises ValueError: with a message saying what a shard looks like.
    """
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"bad shard {text!r}: write k/n with 1 <= k <= n, e.g. 2/8")
    return int(m.group(1)), int(m.group(2))


def select_shard(placements: Sequence[Placement], shard: tuple[int, int]) -> list[Placement]:
    """The k-th of n deterministic slices: placements sorted by snippet id, every n-th."""
    k, n = shard
    ordered = sorted(placements, key=lambda p: (p.snippet_id, p.docname, p.line))
    return ordered[k - 1 :: n]


Loader = Callable[[Placement], Snippet]


def file_loader(settings: Settings) -> Loader:
    """Loads each placement's snippet from its file (for code written in pages, see
    :meth:`snipcheck.app.project.Project.snippet`)."""
    return lambda p: load(p.snippet_id, settings.snippets_dir, settings.root)


def chapter_fingerprint(settings: Settings, placements: Sequence[Placement], loader: Loader | None = None) -> str:
    """:func:`snipcheck.sources.placement.fingerprint` of ``placements`` and the
    snippets (and helpers) they place, as they are on disk now."""
    load_one = loader or file_loader(settings)
    sources = []
    for p in placements:
        try:
            snippet = load_one(p)
        except SnippetError as exc:
            sources.append((p.snippet_id, f"error: {exc.message}"))
            continue
        sources.append((p.snippet_id, snippet.source + "".join(text for _, text in snippet.helpers)))
    return fingerprint(placements, sources)


def verify(
    settings: Settings,
    all_placements: Sequence[Placement],
    executor: Executor,
    stamp: Stamp,
    shard: tuple[int, int] = (1, 1),
    progress: Callable[[int, int, str], None] | None = None,
    loader: Loader | None = None,
    srcdir: Path | None = None,
) -> Report:
    """Run and judge every placement (or one shard of them).

    :param all_placements: the whole chapter's placements, from the placement index.
    :param executor: runs the snippets (its stamp must be ``stamp``).
    :param progress: called as ``(done, total, snippet id)`` after each outcome.
    :param loader: loads a placement's snippet (default: from its file).
    :param srcdir: the pages' source directory, where the stated figures are
        (default: ``snipcheck_source_dir``); a figure that differs from its
        stated file beyond the tolerance makes the snippet ``drifted``.
    """
    load_one = loader or file_loader(settings)
    placements = select_shard(all_placements, shard)
    loaded = []
    reports: list[SnippetReport] = []
    for p in placements:
        doc = _rel(Path(p.source), settings.root)
        try:
            snippet = load_one(p)
        except SnippetError as exc:
            where = f"{exc.path}:{exc.line}: " if exc.path and exc.line else ""
            broken = unloadable(where + exc.message)
            reports.append(SnippetReport(p.snippet_id, doc, p.line, WORDS[broken.status], broken.problems(), stated=p.stated))
            continue
        loaded.append((p, doc, snippet))
    executor.plan(s for _, _, s in loaded)
    for _, _, snippet in loaded:
        executor.submit(snippet)
    for done, (p, doc, snippet) in enumerate(loaded, start=1):
        outcome = executor.outcome(snippet)
        if progress is not None:
            progress(done, len(loaded), p.snippet_id)
        labels = (f"stated ({notebook_cells.label(p, doc)})", f"actual ({stamp.label()})")
        found = check(
            p.snippet_id, snippet.tags, outcome, p.stated, settings.normalizers,
            Path(p.figures_dir) if p.figures_dir else srcdir or settings.source_dir or settings.root,
            stated_label=labels[0], actual_label=labels[1], compared=notebook_cells.compared(p), stored=notebook_cells.stored(p),
            stderr=notebook_cells.stated_stderr(p), rest=notebook_cells.stated_rest(p),
        )  # fmt: skip
        status = WORDS[found.status]
        if found.status is Status.ERROR:
            problems = tuple(steady_problem(n) for n in found.problems())
            reports.append(SnippetReport(p.snippet_id, doc, p.line, status, problems, stated=p.stated))
            continue
        if found.text is None or outcome.result is None:  # stopped by its chain, or not run here
            reports.append(
                SnippetReport(p.snippet_id, doc, p.line, status, found.problems(), stated=p.stated, missing=found.missing)
            )
            continue
        text = found.text
        compared = as_terminal(p.stated) if notebook_cells.compared(p) else text.actual  # NBVAL_IGNORE_OUTPUT: what it printed
        masked_diff = text_diff(compared, text.actual, settings.normalizers, *labels, masking=False) if text.ok else ""
        shown = steady(compared, text.actual, settings.normalizers, labels, diff=text.diff, masked_diff=masked_diff)
        reports.append(
            SnippetReport(
                p.snippet_id,
                doc,
                p.line,
                status,
                tuple(steady_problem(sentence) for sentence in found.problems()),
                shown.diff,
                p.stated,
                shown.actual,
                duration=outcome.result.duration,
                origin=outcome.origin,
                masked=masking_normalizers(compared, text.actual, settings.normalizers) if text.ok else (),
                masked_diff=shown.masked_diff,
                figures=outcome.result.figures,
                run_actual=text.actual,
                run_diff=text.diff,
            )
        )
    reports.sort(key=lambda r: (r.doc, r.line))
    report = Report(
        stamp,
        settings.reference,
        shard,
        tuple(reports),
        total=len(all_placements),
        fingerprint=chapter_fingerprint(settings, all_placements, load_one),
    )
    return finish(report)


def finish(report: Report) -> Report:
    """Find environment-wide changes (:func:`snipcheck.judge.verdict.environment_wide`)
    and mark the snippets whose diff is only that."""
    ran = [s for s in report.snippets if s.status in _RAN]
    wide, only = environment_wide([(s.id, s.diff, s.status == WORDS[Status.DRIFT]) for s in ran])
    changes = tuple(EnvWideChange(sign, text, tuple(sorted(ids))) for (sign, text), ids in wide.items())
    marked = {id(s) for s, flag in zip(ran, only, strict=True) if flag}
    snippets = tuple(dataclasses.replace(s, env_wide_only=id(s) in marked) for s in report.snippets)
    return dataclasses.replace(report, snippets=snippets, environment_wide=changes)


def merge(reports: Sequence[Report]) -> Report:
    """Combine the shard reports of one verify run into one report.

    :raises ValueError: naming what is wrong, if the reports come from
        different chapters (fingerprints), references, environments or shard
        counts, carry no fingerprint (made by an older snipcheck), repeat or
        miss a shard, or together do not cover every placement exactly once.
    """
    if not reports:
        raise ValueError("no reports to merge")
    first = reports[0]
    n = first.shard[1]
    for r in reports:
        if not r.fingerprint:
            raise ValueError(
                f"shard {r.shard[0]}/{r.shard[1]} has no fingerprint of the pages (written by an older snipcheck); "
                "run verify again"
            )
        if r.fingerprint != first.fingerprint:
            raise ValueError(
                f"shards of different revisions of the pages: shard {first.shard[0]}/{n} has fingerprint {first.fingerprint}, "
                f"shard {r.shard[0]}/{r.shard[1]} has {r.fingerprint}; verify every shard from the same revision"
            )
        if r.reference != first.reference:
            raise ValueError(f"shards against different references: {first.reference!r} and {r.reference!r}")
        if r.stamp != first.stamp:
            raise ValueError(f"shards of different environments: {first.stamp.label()} and {r.stamp.label()}")
        if r.shard[1] != n:
            raise ValueError(f"cannot merge shards of {n} and of {r.shard[1]}")
    indices = Counter(r.shard[0] for r in reports)
    duplicated = sorted(k for k, c in indices.items() if c > 1)
    missing = sorted(set(range(1, n + 1)) - set(indices))
    if duplicated or missing:
        parts = []
        if duplicated:
            parts.append("shard " + ", ".join(f"{k}/{n}" for k in duplicated) + " given more than once")
        if missing:
            parts.append("shard " + ", ".join(f"{k}/{n}" for k in missing) + " missing")
        raise ValueError("; ".join(parts) + f"; give each of the {n} shards exactly once")
    snippets = sorted((s for r in reports for s in r.snippets), key=lambda s: (s.doc, s.line))
    ids = Counter((s.id, s.doc, s.line) for s in snippets)
    twice = sorted(f"{i} ({d}:{line})" for (i, d, line), c in ids.items() if c > 1)
    if twice:
        raise ValueError(f"placements reported by more than one shard: {', '.join(twice)}")
    if len(snippets) != first.total:
        raise ValueError(
            f"the shards report {len(snippets)} placements but the pages have {first.total}; verify again"
        )
    merged = Report(first.stamp, first.reference, (1, 1), tuple(snippets), total=first.total, fingerprint=first.fingerprint)
    return finish(dataclasses.replace(merged, snippets=tuple(dataclasses.replace(s, env_wide_only=False) for s in snippets)))


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
