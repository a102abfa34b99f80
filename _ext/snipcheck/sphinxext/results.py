"""Judge every snippet read in this build (``env-updated``, or as its page is written).

The directives of the pages read in this build left ``pending`` records
(:mod:`.collector`); their runs started while the pages were read (serial
build) or start at ``env-updated`` (parallel build: every run in this
process, one fork server for the whole build).  Judging an outcome compares it
with the stated output, warns at the directive's line on drift, failure,
timeout or truncation, and replaces the record with the judged one, which
:mod:`.fill` renders when the page is written.

When, depends on the build:

- a serial HTML build judges each page's snippets as that page is written
  (:func:`judge_page`, from :mod:`.fill`): Sphinx writes one page at a time
  on one core, and the runs go on beside it on the others, instead of all
  before the first page is written.  The snippets that a claim or a
  refuted-claim verdict cites are judged at ``env-updated``, before the
  claims are checked (:mod:`.claims`); the rest, from a page no builder
  wrote, at ``build-finished``, before the summary counts them.  Sphinx
  pickles the environment before it writes, so the environment is pickled
  again then, with the judged records (an unchanged rebuild re-judges
  nothing);
- any other build (``-j``, single-page HTML, LaTeX, …) waits for every
  outcome at ``env-updated``.

Either way one progress line per snippet names the snippet the build waits
for (:mod:`.progress`): in a serial HTML build, between Sphinx's "writing
output" lines of the pages that hold them.
"""

from __future__ import annotations

import dataclasses
import pickle
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.builders.singlehtml import SingleFileHTMLBuilder
from sphinx.locale import __
from sphinx.util import logging

from snipcheck.engine.cache import write_atomic
from snipcheck.judge.verdict import STREAMS, Finding, Status, check
from snipcheck.model import Outcome, Snippet
from snipcheck.pending.variation import seed_hint
from snipcheck.run import requirements
from snipcheck.sphinxext import claim_role as claims
from snipcheck.sphinxext import figure_nodes as figures
from snipcheck.sphinxext import index, notebook, notebook_tags
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import SnippetRecord, location, records, replace
from snipcheck.sphinxext.log import warn
from snipcheck.sphinxext.paths import shown as _shown
from snipcheck.sphinxext.progress import Progress

logger = logging.getLogger("snipcheck")

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

_DIFF_LINES = 24
_DIFF_WIDTH = 300
#: The thread switch interval (seconds) while runs go on beside the writing of
#: pages: each run's bookkeeping in this process waits for the writer to let
#: go of the GIL, at most this long (Python's default is 5 ms, longer than a
#: whole run of the fork runner, which would leave the cores idle).
_SWITCH_INTERVAL = 0.0001


def resolve(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Start the pending records' runs and judge them, or the ones claims
    need when the rest are judged as their pages are written (``env-updated``);
    check claims.

    :return: no extra documents to write (the judged ones were read now).
    """
    state = state_mod.get(app)
    pending = [r for d in sorted(records(env)) for r in records(env)[d] if r.status == "pending"]
    if pending and not state.execute:
        for rec in pending:
            replace(env, dataclasses.replace(rec, status="off"))
    elif pending:
        executor = state.executor
        if not state.planned or executor.holding:  # a cold build: now the whole list is known
            executor.plan(r.snippet for r in pending if r.snippet is not None)
            state.planned = True
        for rec in pending:
            assert rec.snippet is not None
            executor.submit(rec.snippet)
        # Sphinx's -q keeps its status lines in a buffer nobody reads: no progress line then (~80 us a snippet)
        state.progress = None if app.quiet else Progress(len(pending), app.config.verbosity, merged=state.settings.merged)
        if _judges_while_writing(app):
            now = _cited(env, state.read_now)
            pending = [r for r in pending if r.snippet_id in now[0] or (r.docname, r.serial) in now[1]]
            executor.start_chains()  # every cell is submitted: the chains run beside the writing too
            state.deferred = True
            state.switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(state.switch_interval, _SWITCH_INTERVAL))
            if not state.settings.merged:  # a merged build runs nothing
                logger.info(__("snipcheck: the runs go on while the pages are written"))
        for rec in pending:
            assert rec.snippet is not None
            _step(state, rec)
            replace(env, judged(app, env, rec, executor.outcome(rec.snippet)))
    claims.resolve(app, env)
    return []


def _judges_while_writing(app: Sphinx) -> bool:
    """Whether this build judges each page's snippets as it writes the page:
    a serial build of separate HTML pages, in the build's own process."""
    builder = app.builder
    return (
        app.parallel <= 1
        and isinstance(builder, StandaloneHTMLBuilder)
        and not isinstance(builder, SingleFileHTMLBuilder)
        and state_mod.get(app).in_main_process
    )


def _cited(env: BuildEnvironment, docnames: frozenset[str]) -> tuple[set[str], set[tuple[str, int]]]:
    """What the claims of ``docnames`` check: the snippet ids their claims
    cite, and the (page, serial) of their refuted-claim verdicts."""
    ids = {c.snippet_id for d in docnames for c in claims.claims(env).get(d, []) if c.status == "pending"}
    beliefs = {
        (d, serial)
        for d in docnames
        for serial, placement in enumerate(index.placements(env).get(d, []))
        if placement.directive == "refuted-claim"
    }
    return ids, beliefs


def judge_page(env: BuildEnvironment, docname: str) -> None:
    """Judge the pending records of ``docname``, waiting for their runs
    (from :mod:`.fill`, as the page is written; see the module docstring)."""
    state = state_mod.for_env(env)
    app = state.app() if state.deferred and state.app is not None else None
    if app is None:
        return
    for rec in list(records(env).get(docname, [])):
        if rec.status == "pending" and rec.snippet is not None:
            _step(state, rec)
            replace(env, judged(app, env, rec, state.executor.outcome(rec.snippet)))


def _step(state: state_mod.BuildState, rec: SnippetRecord) -> None:
    if state.progress is not None:
        state.progress.step(rec.snippet_id)


def finish(app: Sphinx, exception: BaseException | None) -> None:
    """Judge what no written page judged, and pickle the environment again
    with the judged records (``build-finished``, before the summary)."""
    state = getattr(app, "_snipcheck_state", None)
    if state is None or not state.deferred:
        return
    state.deferred = False
    sys.setswitchinterval(state.switch_interval)
    if exception is not None:
        return  # the next build judges the records still pending (see resolve)
    for rec in [r for d in sorted(records(app.env)) for r in records(app.env)[d] if r.status == "pending"]:
        if rec.snippet is not None:
            _step(state, rec)
            replace(app.env, judged(app, app.env, rec, state.executor.outcome(rec.snippet)))
    if state.progress is not None:
        state.progress.close()  # snippets that could not be loaded are never judged
    from sphinx.application import ENV_PICKLE_FILENAME

    try:
        write_atomic(Path(app.doctreedir) / ENV_PICKLE_FILENAME, pickle.dumps(app.env, pickle.HIGHEST_PROTOCOL))
    except OSError as exc:
        warn("cache", f"cannot save the judged snippets with the environment: {exc}", None)


#: The build's word for each verdict of the check step (:mod:`snipcheck.judge.verdict`):
#: the record's status in ``report.json``, and a failing one names the
#: warning's subtype (a stopped cell's is ``exec``: its chain's run failed).
WORDS: dict[Status, str] = {
    Status.OK: "ok",
    Status.DRIFT: "drift",
    Status.FIGURES: "drift",
    Status.ENDED_WRONG: "drift",
    Status.TRUNCATED: "truncated",
    Status.FAILED: "exec",
    Status.TIMEOUT: "timeout",
    Status.STOPPED: "stopped",
    Status.NOT_RUN: "not-run",
    Status.ERROR: "error",
}


def judged(app: Sphinx, env: BuildEnvironment, rec: SnippetRecord, outcome: Outcome) -> SnippetRecord:
    """``rec`` with the check step's verdict on ``outcome``; warns about every problem."""
    state = state_mod.get(app)
    snippet = rec.snippet
    assert snippet is not None
    if outcome.origin != "error":
        for note in outcome.notes:
            warn("cache", f"snippet {rec.snippet_id!r}: {note}", location(env, rec))
    result = outcome.result
    if result is not None:  # NBVAL_IGNORE_OUTPUT: only how the cell ended is compared
        rec = notebook.stated_when_ignored(env, rec, result, state.settings.normalizers)
    stored, stderr, rest = notebook.stored_mode(env, rec)
    found = check(
        rec.snippet_id,
        snippet.tags,
        outcome,
        rec.stated,
        state.settings.normalizers,
        # a notebook cell's stated images are its stored figures; its run's own where its output is not compared
        notebook_tags.figures_dir(app, rec, result.figures if result and notebook.output_ignored(env, rec) else None),
        stated_label=f"stated ({rec.where})",
        stored=stored,
        stderr=stderr,
        rest=rest,
    )
    status = WORDS[found.status]
    if result is None:
        if found.status is not Status.NOT_RUN:  # error, or stopped by its chain: both fail
            warn("exec", f"snippet {rec.snippet_id!r}: " + "; ".join(found.problems()), location(env, rec))
        origin = "none" if found.status is Status.ERROR else "not-run"
        return dataclasses.replace(
            rec, status=status, origin=origin, outcome=outcome, missing=found.missing, problems=found.problems()
        )
    drawn = figures.judge(app, rec, found.figures, result.figures)  # after the text, which stays the primary check
    problems = found.problems(drawn)
    if found.status is not Status.OK:  # where it points is only worked out for a warning (paths: ~0.15 ms a record)
        _report(app, rec, found, status, problems, location(env, rec))
    return dataclasses.replace(
        rec,
        status=status,
        origin=outcome.origin,
        output="new" if found.diff or found.figures_changed else "same",
        outcome=outcome,
        duration=result.duration,
        problems=problems,
        diff=found.diff,
        stamp=result.stamp.label(),
    )


def _report(app: Sphinx, rec: SnippetRecord, found: Finding, status: str, problems: tuple[str, ...], where: Any) -> None:
    state = state_mod.get(app)
    subtype = status if status in ("drift", "exec", "timeout", "truncated") else "drift"
    message = f"snippet {rec.snippet_id!r}: " + "; ".join(problems)
    if found.diff:
        path = state.settings.report_dir / "diffs" / (re.sub(r"[^\w.-]", "__", rec.snippet_id) + ".diff")
        try:
            write_atomic(path, (found.diff + "\n").encode("utf-8"))
            at = f"\nfull diff: {_shown(path, state.root)}"
        except OSError:
            at = ""
        lines = [_clip(line) for line in found.diff.splitlines()]
        short = "\n".join(lines[:_DIFF_LINES])
        if len(lines) > _DIFF_LINES:
            short += f"\n... ({len(lines) - _DIFF_LINES} more diff lines)"
        message += f":\n{short}{at}"
        if found.status is Status.DRIFT:  # a new output to record (not an ending or a cut output)
            hint = rec.snippet is not None and seed_hint(rec.snippet, state.settings.seed)
            if hint:
                message += f"\n{hint}"
            command = _from_shard(state, rec.snippet) or state.settings.record_command.format(id=rec.snippet_id)
            why = _unwritable(app.env, rec)
            if why:  # record would refuse it: say why and what to do instead
                message += f"\nsnipcheck record cannot write its output: {why}"
            elif STREAMS not in problems:  # that sentence says what to do instead
                message += f"\nif the new output is right, record it: {command}"
    warn(subtype, message, where)


def _unwritable(env: BuildEnvironment, rec: SnippetRecord) -> str:
    """Why ``record`` cannot write ``rec``'s stated output where its placement
    sits (an nbformat 3 notebook, say), or ``""``."""
    placed = index.placements(env).get(rec.docname, [])
    p = placed[rec.serial] if 0 <= rec.serial < len(placed) else None
    return p.writable if p is not None and p.snippet_id == rec.snippet_id else ""


def _from_shard(state: state_mod.BuildState, snippet: Snippet | None) -> str:
    """``snipcheck record --from-shard FOLDER ID`` for a snippet of a merged
    build that ran in a shard of its own environment, or needs what this
    machine lacks (so ``record`` here cannot run it); ``""`` otherwise."""
    if snippet is None or not state.settings.merged or not state.merge or state.stamp is None:
        return ""
    lacking = requirements.missing(snippet.tags.requires, state.stamp, state.settings.provides)
    if snippet.id not in state.elsewhere and not lacking:
        return ""
    k = state.merge.get("elsewhere", {}).get(snippet.id)
    if k is None:
        k = state.merge.get("keys", {}).get(state.executor.key(snippet))
    folder = (state.merge.get("shards", {}).get(str(k)) or {}).get("folder") if k is not None else None
    return f"snipcheck record --from-shard {shlex.quote(folder) if folder else 'SHARD_FOLDER'} {snippet.id}"


def _clip(line: str, width: int = _DIFF_WIDTH) -> str:
    """A diff line cut to ``width`` characters for the console (the full diff file has it whole)."""
    return line if len(line) <= width else f"{line[:width]}... ({len(line) - width:,} more characters)"


def register(app: Sphinx) -> None:
    app.connect("env-updated", resolve)
    app.connect("build-finished", finish, priority=400)  # before the summary (500) and the executor's close (900)
