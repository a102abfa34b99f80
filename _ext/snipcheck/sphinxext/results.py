"""Judge every snippet read in this build, once all pages are read (``env-updated``).

The directives of the pages read in this build left ``pending`` records
(:mod:`.collector`); their runs started while the pages were read (serial
build) or start here (parallel build: every run in this process, one fork
server for the whole build).  :func:`resolve` waits for each outcome, with a
progress line per snippet, compares it with the stated output, warns at the
directive's line on drift, failure, timeout or truncation, and replaces the
record with the judged one, which :mod:`.fill` renders when the page is
written.  Claims and refuted-claim verdicts are checked after the snippets
they cite (:mod:`.claims`).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.locale import __
from sphinx.util.display import status_iterator

from ..cache import write_atomic
from ..compare import Verdict, judge, truncation_advice
from ..model import Outcome
from . import claims, figures
from . import state as state_mod
from .collector import SnippetRecord, location, records, replace
from .log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

_DIFF_LINES = 24
_DIFF_WIDTH = 300


def resolve(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Judge the pending records (``env-updated``); check claims.

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
        for rec in status_iterator(
            pending,
            __("running snippets... "),
            "darkgreen",
            len(pending),
            app.config.verbosity,
            stringify_func=lambda r: r.snippet_id,
        ):
            assert rec.snippet is not None
            replace(env, judged(app, env, rec, executor.outcome(rec.snippet)))
    claims.resolve(app, env)
    return []


def judged(app: Sphinx, env: BuildEnvironment, rec: SnippetRecord, outcome: Outcome) -> SnippetRecord:
    """``rec`` with the verdict on ``outcome``; warns about every problem."""
    state = state_mod.get(app)
    snippet = rec.snippet
    assert snippet is not None
    where = location(env, rec)
    if outcome.origin == "error":
        message = f"snippet {rec.snippet_id!r}: " + "; ".join(outcome.notes)
        warn("exec", message, where)
        return dataclasses.replace(rec, status="error", origin="none", outcome=outcome, problems=outcome.notes)
    for note in outcome.notes:
        warn("cache", f"snippet {rec.snippet_id!r}: {note}", where)
    if outcome.result is None:
        return dataclasses.replace(rec, status="not-run", origin="not-run", outcome=outcome, missing=outcome.missing)
    result = outcome.result
    verdict = judge(
        snippet.tags,
        result,
        rec.stated,
        state.settings.normalizers,
        stated_label=f"stated ({rec.where})",
        actual_label=f"actual ({result.stamp.label()})",
    )
    status = verdict.status
    problems = verdict.problems
    drawn = figures.judge(app, rec, result)  # after the text, which stays the primary check
    if drawn and status == "ok":
        status = "drift"
    problems += drawn
    if result.truncated_bytes:
        status = "truncated" if verdict.ok or status == "drift" else status
        problems += (truncation_advice(result),)
    _report(app, rec, verdict, status, problems, where)
    return dataclasses.replace(
        rec,
        status=status,
        origin=outcome.origin,
        outcome=outcome,
        duration=result.duration,
        problems=problems,
        diff=verdict.diff,
        stamp=result.stamp.label(),
    )


def _report(app: Sphinx, rec: SnippetRecord, verdict: Verdict, status: str, problems: tuple[str, ...], where: Any) -> None:
    if status == "ok":
        return
    state = state_mod.get(app)
    subtype = status if status in ("drift", "exec", "timeout", "truncated") else "drift"
    message = f"snippet {rec.snippet_id!r}: " + "; ".join(problems)
    if verdict.diff:
        path = state.settings.report_dir / "diffs" / (re.sub(r"[^\w.-]", "__", rec.snippet_id) + ".diff")
        try:
            write_atomic(path, (verdict.diff + "\n").encode("utf-8"))
            at = f"\nfull diff: {_shown(path, state.root)}"
        except OSError:
            at = ""
        lines = [_clip(line) for line in verdict.diff.splitlines()]
        short = "\n".join(lines[:_DIFF_LINES])
        if len(lines) > _DIFF_LINES:
            short += f"\n... ({len(lines) - _DIFF_LINES} more diff lines)"
        message += f":\n{short}{at}"
        if not verdict.ended_wrong and status != "truncated":
            command = state.settings.record_command.format(id=rec.snippet_id)
            message += f"\nif the new output is right, record it: {command}"
    warn(subtype, message, where)


def _clip(line: str, width: int = _DIFF_WIDTH) -> str:
    """A diff line cut to ``width`` characters for the console (the full diff file has it whole)."""
    return line if len(line) <= width else f"{line[:width]}... ({len(line) - width:,} more characters)"


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def register(app: Sphinx) -> None:
    app.connect("env-updated", resolve)
