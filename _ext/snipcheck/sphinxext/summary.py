"""The end-of-build summary, report and exit status (``build-finished``).

Logs one counted line, e.g. ``snipcheck: 31 snippets on 4 pages: 30 match
their stated output, 1 not run here (needs cuda); this build ran 3, took 27
from the cache; of its runs 2 gave the stated output, 1 a new one``, then,
when it ran any, the wall time of the execution and the slowest pages and
chains (:mod:`.times`), and writes ``report.json`` in the report directory
with every placed snippet's status, origin, problems and diff, and the whole
execution-time table.

With ``snipcheck_fail_on_drift`` (the default), a build with any drift,
failed run, timeout, truncated output, snippet that cannot be loaded or claim
that no longer holds logs an error naming each of them and ends with exit
status 1, with or without ``-W`` (``sphinx-build`` returns
``app.statuscode``), as myst-nb's ``nb_execution_raise_on_error`` does for
notebooks.  A green build therefore means every stated output was compared.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from typing import TYPE_CHECKING

from sphinx.util import logging

from snipcheck.engine.cache import write_atomic
from snipcheck.engine.chain_job import NO_RESULT
from snipcheck.run import sandbox
from snipcheck.run.requirements import why_unmet
from snipcheck.shard.carried import read_record
from snipcheck.sources import notebook_cells
from snipcheck.sources.chains import with_later
from snipcheck.sphinxext import index, times
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.claim_role import claims
from snipcheck.sphinxext.collector import PROBLEMS, SnippetRecord, iter_all
from snipcheck.sphinxext.pages import unreadable

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from snipcheck.model import Stamp

logger = logging.getLogger("snipcheck")
#: The format of ``report.json`` and its version (``schemas/build-report.schema.json``;
#: 3: status ``stopped``, a cell an earlier cell of its chain kept from running, and
#: origin ``ci-cache``, a result a CI cache carried in, counted apart from the cache's).
BUILD_SCHEMA = "snipcheck-build/3"


def summarize(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.env is None or app.builder.name == "snipcheck-index":
        return
    state = state_mod.get(app)
    recs = list(iter_all(app.env))
    if not recs:
        return
    # A cell an earlier cell of its chain kept from running is no environment's lack: counted apart.
    stopped = [r for r in recs if r.status == "stopped"]
    counts = Counter(r.status for r in recs)
    carried = from_ci_cache(state, recs)
    origins = Counter(
        "ci-cache" if id(r) in carried else r.origin
        for r in recs
        if r.status not in ("not-run", "stopped") and r.docname in state.read_now
    )
    missing = Counter(m for r in recs for m in r.missing)
    pages = len({r.docname for r in recs})
    parts = [f"{len(recs)} snippets on {pages} page{'s' if pages != 1 else ''}: {counts['ok']} match their stated output"]
    names = {"drift": "drift", "exec": "failed", "timeout": "timed out", "truncated": "cut at the output limit",
             "error": "could not be loaded or run",
             "off": "not executed (execution off)", "pending": "not judged"}
    for status, name in names.items():
        if counts[status]:
            parts.append(f"{counts[status]} {name}")
    if counts["not-run"]:
        parts.append(f"{counts['not-run']} not run here (needs " + ", ".join(sorted(missing)) + ")")
    if stopped:
        by = sorted({r.outcome.stopped_at for r in stopped if r.outcome is not None})
        parts.append(f"{len(stopped)} not run because an earlier cell of their chain failed or ended it ({', '.join(by)})")
    line = "snipcheck: " + ", ".join(parts)
    if state.read_now:
        kept = sum(1 for r in recs if r.docname not in state.read_now)
        line += (
            f"; this build ran {origins['run']}, took {origins['cache']} from the cache"
            + (f" and {origins['ci-cache']} from the CI cache" if origins["ci-cache"] else "")
            + (f" and kept {kept} from pages it did not re-read" if kept else "")
        )
        if origins["run"]:
            outputs = Counter(r.output for r in recs if r.origin == "run" and r.docname in state.read_now)
            line += f"; of its runs {outputs['same']} gave the stated output, {outputs['new']} a new one"
    else:
        line += "; this build re-read no page"
    if state.settings.merged:
        line += "; " + from_shards(state, recs, carried)
    lacking = sandbox.caveats() if origins["run"] else None
    if lacking:
        line += f"; {lacking}"
    logger.info(line)
    if counts["not-run"] and missing:
        logger.info(unmet(missing, state.stamp, state.settings.requirement_notes))
    table = times.rows(recs, state.read_now, carried, notebook_rows(app))
    wall = round(state.wall, 3)
    runs = times.run_seconds(recs, state.read_now)
    if origins["run"]:
        logger.info(times.summary(table, wall, runs))
    report = {
        "schema": BUILD_SCHEMA,
        "stamp": dataclasses.asdict(state.stamp) if state.stamp else None,
        "reference": state.settings.reference,
        "execution": times.report(table, wall, runs),
        "snippets": [{**r.summary(), **({"origin": "ci-cache"} if id(r) in carried else {})} for r in recs],
    }
    try:
        write_atomic(state.settings.report_dir / "report.json", json.dumps(report, ensure_ascii=False, indent=1).encode())
    except OSError as exc:
        logger.warning(f"snipcheck: cannot write the report: {exc}", type="snipcheck", subtype="config")


def notebook_rows(app: Sphinx) -> dict[tuple[str, str], str]:
    """``(page, chain)`` → the notebook's file, for each notebook page's
    cells: their row of the execution-time table names the notebook."""
    return {
        (docname, p.chain): str(app.env.doc2path(docname, False))
        for docname, placed in index.placements(app.env).items()
        for p in placed
        if notebook_cells.is_cell(p)
    }


def unmet(missing: Counter[str], stamp: Stamp | None, notes: tuple[tuple[str, str], ...]) -> str:
    """The line after the summary that says, for each requirement a snippet
    was not run for, how many and what it is and why this build lacks it
    (:func:`snipcheck.run.requirements.why_unmet`; a project's own names say it
    in ``snipcheck_requirements``)."""
    parts = []
    for name in sorted(missing):
        why = why_unmet(name, stamp, notes)
        count = f"{missing[name]} snippet{'s' if missing[name] != 1 else ''}"
        parts.append(f"needs {name} ({count})" + (f": {why}" if why else ""))
    return "snipcheck: not run here: " + "; ".join(parts)


def from_ci_cache(state: state_mod.BuildState, recs: list[SnippetRecord]) -> frozenset[int]:
    """The ``id()`` of each record of a page read now whose result this build
    took from the cache and whose key the last merge (or ``snipcheck cache
    restore``) took from a CI cache (:data:`snipcheck.shard.carried.RECORD`)."""
    keys = read_record(state.settings.cache_dir)
    taken = [r for r in recs if r.origin == "cache" and r.snippet is not None and r.docname in state.read_now]
    if not keys or not taken or state.stamp is None:
        return frozenset()
    linked = with_later([r.snippet for r in taken if r.snippet is not None])  # a chain cell's key: as its chain ran
    return frozenset(id(r) for r, snippet in zip(taken, linked, strict=True) if state.executor.key(snippet) in keys)


def from_shards(state: state_mod.BuildState, recs: list[SnippetRecord], carried: frozenset[int] = frozenset()) -> str:
    """How many of the records' results came from which shard of the merge
    (``snipcheck_execute = "merged"``): each cached result's key, looked up in
    the merge's record (:data:`snipcheck.shard.files.MERGED`), how many from
    the CI cache the merge took them from (``carried``: see
    :func:`from_ci_cache`), and how many runnable snippets have none."""
    keys = state.merge.get("keys", {}) if state.merge else {}
    count = int(state.merge.get("count", 0)) if state.merge else 0
    taken = [
        r for r in recs
        if r.origin == "cache" and r.snippet is not None and r.docname in state.read_now and id(r) not in carried
    ]  # fmt: skip
    linked = with_later([r.snippet for r in taken if r.snippet is not None])  # a chain cell's key: as its chain ran
    shards = Counter(keys.get(state.executor.key(snippet)) for snippet in linked) if taken else Counter()
    where = state.merge.get("elsewhere", {}) if state.merge else {}
    there = {int(where[sid]): stamp.label() for sid, stamp in state.elsewhere.items() if sid in where}
    recorded = state.merge.get("shards", {}) if state.merge else {}
    every = sorted({*range(1, count + 1), *(int(k) for k in recorded if str(k).isdigit())})
    parts = [
        f"{shards[k]} result{'s' if shards[k] != 1 else ''} from "
        + str((recorded.get(str(k)) or {}).get("name") or f"shard {k}/{count}")
        + (f" (run in {there[k]})" if k in there else "")
        for k in every
    ]
    if carried:
        parts.append(f"{len(carried)} result{'s' if len(carried) != 1 else ''} from the CI cache")
    if shards[None]:
        parts.append(f"{shards[None]} from the cache, not from this merge")
    absent = sum(1 for r in recs if r.outcome is not None and NO_RESULT in r.outcome.notes)
    parts.append(f"{absent} runnable snippet{'s' if absent != 1 else ''} without a result (this build runs nothing)")
    return ", ".join(parts)


def fail_on_problems(app: Sphinx, exception: BaseException | None) -> None:
    """Name every problem and set exit status 1 (``snipcheck_fail_on_drift``).

    A build that runs nothing (``snipcheck_execute = "merged"``) fails when a
    runnable snippet has no result, even without ``snipcheck_fail_on_drift``:
    its page would show a stated output nothing checked.
    """
    if exception is not None or app.env is None:
        return
    state = state_mod.get(app)
    if not state.settings.fail_on_drift:
        absent = [r for r in iter_all(app.env) if r.outcome is not None and NO_RESULT in r.outcome.notes]
        if state.settings.merged and absent:
            _fail(
                app,
                f"snipcheck: {len(absent)} runnable snippet{'s' if len(absent) != 1 else ''} without a result from the "
                "merged shards; the build fails (snipcheck_execute = 'merged'):\n"
                + "\n".join(f"  {r.where or r.docname}: {r.snippet_id}: no result" for r in absent),
            )
        return
    if app.builder.name == "snipcheck-index":
        return  # execution is off: nothing was compared
    bad = [r for r in iter_all(app.env) if r.status in PROBLEMS]
    bad_claims = [(d, c) for d, page in sorted(claims(app.env).items()) for c in page if c.status == "drift"]
    left_out = sorted(unreadable(app.env).items())
    if not bad and not bad_claims and not left_out:
        return
    if left_out:
        _fail(
            app,
            f"snipcheck: {len(left_out)} page{'s' if len(left_out) != 1 else ''} could not be read, so the "
            "snippets there were not checked; the build fails (snipcheck_fail_on_drift = True):\n"
            + "\n".join(f"  {os.path.relpath(path, app.srcdir)}:{line}: cannot be read" for _, (path, line, _) in left_out),
        )
    if not bad and not bad_claims:
        return
    lines = [f"  {r.where or r.docname}: {r.snippet_id}: {r.status}" for r in bad]
    lines += [f"  {app.env.doc2path(d, False)}:{c.line}: claim {c.value!r} from {c.snippet_id}: drift" for d, c in bad_claims]
    count = len(bad) + len(bad_claims)
    _fail(
        app,
        f"snipcheck: {count} stated output{'s' if count != 1 else ''} or claim{'s' if count != 1 else ''} "
        "do not hold (see the warnings above); the build fails (snipcheck_fail_on_drift = True):\n"
        + "\n".join(lines),
    )


def _fail(app: Sphinx, message: str) -> None:
    """Log ``message`` as an error and set exit status 1.

    The error names again what the warnings above it said, each at its line
    (a drift, a page left out, a cell without a result): Sphinx counts every
    error as one more warning, so its last line said "2 warnings" under one
    warning shown.  The error is taken back out of that count, which then
    counts the warnings shown.
    """
    logger.error(message)
    count = getattr(app, "_warncount", None)  # Sphinx's own counter: no public way to log an uncounted error
    if isinstance(count, int) and count > 0:
        app._warncount = count - 1
    app.statuscode = 1


def register(app: Sphinx) -> None:
    app.connect("build-finished", fail_on_problems, priority=550)
    app.connect("build-finished", summarize, priority=500)
