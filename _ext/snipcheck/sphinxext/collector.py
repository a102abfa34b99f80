"""Per-document snippet records kept in the Sphinx environment.

:class:`SnippetCollector` keeps ``env.snipcheck_records`` (docname → list of
:class:`SnippetRecord`), purges a document's records when Sphinx re-reads it
(``env-purge-doc``) and merges them back from parallel readers
(``env-merge-info``).  The records drive the environment box, the build
summary and the report, and decide which documents must be read again:

* a document with a drifted, failed or timed-out snippet is re-read on every
  build until fixed, so its warnings (and ``-W``) never go quiet;
* when the snippet interpreter's stamp changes (a new torch), every document
  with snippets is re-read (``env-get-outdated``); so is it in every build
  that takes its results from a merge of shards (``snipcheck_execute =
  "merged"``) and the first one after such a build: a new merge changes the
  results without changing a source.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.environment.collectors import EnvironmentCollector

from snipcheck.model import Outcome, Snippet
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

#: Statuses that keep a document outdated, and fail the build.  ``pending``:
#: a record that a build stopped before judging (it failed while writing
#: pages, see :mod:`.results`): its page is read and written again.
PROBLEMS = frozenset({"drift", "exec", "timeout", "truncated", "stopped", "error", "pending"})


@dataclass(frozen=True)
class SnippetRecord:
    """What happened to one placed snippet in this build.

    :param status: ``pending`` (read, not judged yet), ``off`` (execution
        disabled), or the build's word for the check step's verdict
        (:data:`snipcheck.sphinxext.results.WORDS`): ``ok``, ``drift``,
        ``exec``, ``timeout``, ``truncated`` (output cut at the output
        limit), ``stopped`` (an earlier cell of its chain failed or ended
        it), ``not-run``, ``error`` (could not be loaded or run).
    :param origin: ``run``, ``cache``, ``not-run`` or ``none``.
    :param output: for a record with a result (``run`` or ``cache``): ``same``
        when its output is the stated one, ``new`` when it differs (drift,
        a changed figure, or no output stated yet); ``None`` without a result.
    :param duration: seconds the run took (the cached run's, for ``cache``).
    :param stamp: the run's environment label (``torch 2.13.0+cpu · Python
        3.11.7 · CPU`` or ``rustc 1.95.0 · CPU``), empty when not run.
    :param serial: the placement's position among the document's placements
        (:func:`snipcheck.sphinxext.index.placements`).
    :param where: ``path:line`` of the directive, for messages (the included
        file's, for a placement in an included file).
    :param snippet: the snippet as loaded while the page was read.
    :param outcome: what the executor returned (``None`` until judged, or
        when the snippet could not be loaded).
    :param stated: the stated output; :param stated_env: its ``stated-env``
        option.
    """

    docname: str
    line: int
    snippet_id: str
    status: str
    origin: str
    output: str | None = None
    missing: tuple[str, ...] = ()
    duration: float = 0.0
    problems: tuple[str, ...] = ()
    diff: str = ""
    stamp: str = ""
    serial: int = -1
    where: str = ""
    snippet: Snippet | None = None
    outcome: Outcome | None = None
    stated: str = ""
    stated_env: str | None = None

    def summary(self) -> dict[str, object]:
        """Plain data for the build report (no outputs, no sources).

        The fields are read one by one: ``dataclasses.asdict`` would deep-copy
        the snippet and the outcome (every output event) only to drop them,
        ~0.3 ms a record at the end of every build.
        """
        return {name: getattr(self, name) for name in _SUMMARY_FIELDS}


#: The fields of :meth:`SnippetRecord.summary`: all but the heavy ones (plain data only).
_SUMMARY_FIELDS = tuple(f.name for f in dataclasses.fields(SnippetRecord) if f.name not in ("snippet", "outcome"))


def location(env: BuildEnvironment, record: SnippetRecord) -> Any:
    """Where a warning about ``record`` points: ``(docname, line)``, or
    ``path:line`` for a placement in an included file."""
    path = record.where.rpartition(":")[0]
    if not path:
        return (record.docname, record.line)
    doc = os.path.normpath(env.doc2path(record.docname))
    placed = os.path.normpath(os.path.join(env.srcdir, path))
    # The same path is the same file; only another one (a symlink, say) is resolved.
    if placed == doc or Path(placed).resolve() == Path(doc).resolve():
        return (record.docname, record.line)
    return record.where


def records(env: BuildEnvironment) -> dict[str, list[SnippetRecord]]:
    """``env.snipcheck_records``, created on first use."""
    if not hasattr(env, "snipcheck_records"):
        env.snipcheck_records = {}  # type: ignore[attr-defined]
    return env.snipcheck_records  # type: ignore[attr-defined,no-any-return]


def add(env: BuildEnvironment, record: SnippetRecord) -> None:
    records(env).setdefault(record.docname, []).append(record)


def watch_glob(env: BuildEnvironment, pattern: str, found: list[Path]) -> None:
    """Re-read the current document when the files matching ``pattern``
    (an absolute glob) change as a set: Sphinx tracks files, not globs."""
    globs = getattr(env, "snipcheck_globs", None)
    if globs is None:
        globs = env.snipcheck_globs = {}  # type: ignore[attr-defined]
    globs.setdefault(env.docname, []).append((pattern, sorted(str(p) for p in found)))


def record_at(env: BuildEnvironment, docname: str, serial: int) -> SnippetRecord | None:
    """The record of placement ``serial`` of ``docname``, if any."""
    for rec in records(env).get(docname, []):
        if rec.serial == serial:
            return rec
    return None


def replace(env: BuildEnvironment, record: SnippetRecord) -> None:
    """Put ``record`` in place of the record of the same placement (the
    first of that ``serial``), or add it."""
    recs = records(env).setdefault(record.docname, [])
    i = _position(env, record.docname, recs, record.serial)
    if i is None:
        recs.append(record)
        env.snipcheck_positions[record.docname][1][record.serial] = len(recs) - 1  # type: ignore[attr-defined]
    else:
        recs[i] = record


def _position(env: BuildEnvironment, docname: str, recs: list[SnippetRecord], serial: int) -> int | None:
    """Where the first record of placement ``serial`` stands in ``recs`` (the
    records of ``docname``), or ``None``.

    A map of positions is kept beside the records (``env.snipcheck_positions``)
    and made anew from ``recs`` whenever it does not fit them (another list,
    a position that holds another placement now): a build judging a page of
    N snippets one by one scanned the page's list N times (quadratic; 8,000
    snippets on one page spent 6 s there).
    """
    memo: dict[str, tuple[list[SnippetRecord], dict[int, int]]] = env.__dict__.setdefault("snipcheck_positions", {})
    kept = memo.get(docname)
    if kept is not None and kept[0] is recs:
        i = kept[1].get(serial)
        if i is not None and i < len(recs) and recs[i].serial == serial:
            return i
    at: dict[int, int] = {}
    for k, rec in enumerate(recs):
        at.setdefault(rec.serial, k)
    memo[docname] = (recs, at)
    return at.get(serial)


class SnippetCollector(EnvironmentCollector):
    """Keeps :func:`records` consistent across incremental and parallel builds."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        records(env).pop(docname, None)
        getattr(env, "snipcheck_positions", {}).pop(docname, None)
        getattr(env, "snipcheck_claims", {}).pop(docname, None)
        getattr(env, "snipcheck_globs", {}).pop(docname, None)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str], other: BuildEnvironment
    ) -> None:
        theirs = records(other)
        their_claims = getattr(other, "snipcheck_claims", {})
        if not hasattr(env, "snipcheck_claims"):
            env.snipcheck_claims = {}  # type: ignore[attr-defined]
        if not hasattr(env, "snipcheck_globs"):
            env.snipcheck_globs = {}  # type: ignore[attr-defined]
        their_globs = getattr(other, "snipcheck_globs", {})
        for docname in docnames:
            if docname in their_globs:
                env.snipcheck_globs[docname] = their_globs[docname]  # type: ignore[attr-defined]
            if docname in theirs:
                records(env)[docname] = theirs[docname]
            if docname in their_claims:
                env.snipcheck_claims[docname] = their_claims[docname]  # type: ignore[attr-defined]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        pass  # records are added by the directive while the document is read

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: AbstractSet[str],
        changed: AbstractSet[str],
        removed: AbstractSet[str],
    ) -> list[str]:
        state = state_mod.get(app)
        # the whole stamp (its environment fingerprint included), not its label
        stamp = dataclasses.asdict(state.stamp) if state.stamp else None
        previous = getattr(env, "snipcheck_stamp", None)
        env.snipcheck_stamp = stamp  # type: ignore[attr-defined]
        all_records = records(env)
        was_merged = getattr(env, "snipcheck_merged", False)
        env.snipcheck_merged = state.settings.merged  # type: ignore[attr-defined]
        if previous is not None and stamp is not None and previous != stamp:
            return sorted(set(all_records) | set(getattr(env, "snipcheck_claims", {})))
        if state.settings.merged or was_merged:
            # A merged build's results come from outside the sources (the last merge, the
            # cache): each one judges every page anew, whatever an earlier build kept.
            return sorted(set(all_records) | set(getattr(env, "snipcheck_claims", {})))
        bad = {d for d, recs in all_records.items() if any(r.status in PROBLEMS for r in recs)}
        bad |= {d for d, cl in getattr(env, "snipcheck_claims", {}).items() if any(c.status == "drift" for c in cl)}
        for docname, watched in getattr(env, "snipcheck_globs", {}).items():
            if any(sorted(str(p) for p in Path(pattern).parent.glob(Path(pattern).name)) != files for pattern, files in watched):
                bad.add(docname)
        return sorted(bad)


def duplicates(env: BuildEnvironment) -> list[tuple[SnippetRecord, str]]:
    """Each placement of a snippet placed before, with what to say of it:
    ``(record, message)``, in page order (the build warns at each; the
    command line's index fails on each, see :mod:`snipcheck.app.index_reader`)."""
    seen: dict[str, SnippetRecord] = {}
    found = []
    for docname in sorted(records(env)):
        for rec in records(env)[docname]:
            first = seen.setdefault(rec.snippet_id, rec)
            if first is not rec:
                message = (
                    f"snippet {rec.snippet_id!r} is placed more than once (first at "
                    f"{env.doc2path(first.docname)}:{first.line}); place each snippet once, "
                    "so that its stated output lives in one place"
                )
                found.append((rec, message))
    return found


def check_duplicates(app: Sphinx, env: BuildEnvironment) -> None:
    """Warn about a snippet placed more than once (``env-check-consistency``)."""
    for rec, message in duplicates(env):
        warn("missing", message, (rec.docname, rec.line))


def register(app: Sphinx) -> None:
    app.add_env_collector(SnippetCollector)
    app.connect("env-check-consistency", check_duplicates)


def iter_all(env: BuildEnvironment) -> Iterable[SnippetRecord]:
    for docname in sorted(records(env)):
        yield from records(env)[docname]
