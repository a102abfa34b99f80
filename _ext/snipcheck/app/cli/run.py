"""``snipcheck run ID...``: run snippets, print their output as a terminal shows it."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from snipcheck.app.cli import session
from snipcheck.app.cli.output import rel_entry
from snipcheck.app.project import Project
from snipcheck.judge.compare import terminal_text
from snipcheck.model import RunResult, Snippet
from snipcheck.sources.snippets import SnippetError, load


def command(project: Project, args: argparse.Namespace) -> int:
    """Run ``args.ids``; the status is the first failing run's, as a shell reports it."""
    settings = project.settings
    use_cache = not args.no_cache
    stamp = session.interpreter(settings, args.verbose, use_cache)
    if stamp is None:
        return 1
    executor = session.executor(settings, stamp, use_cache=use_cache)
    status = 0
    loaded = []
    for snippet_id in args.ids:
        try:
            loaded.append(load_by_id(project, snippet_id))
        except SnippetError as exc:
            where = f"{exc.path}:{exc.line}: " if exc.path and exc.line else ""
            print(f"error: {where}{exc.message}", file=sys.stderr)
            status = 1
    for snippet in loaded:
        executor.submit(snippet)
    for snippet in loaded:
        outcome = executor.outcome(snippet)
        print(f"── {snippet.path}")
        if outcome.origin == "error":
            print("   " + "; ".join(outcome.notes))
            status = 1
            continue
        if outcome.result is None and outcome.stopped:
            print(f"   {outcome.stopped}")
            status = 1
            continue
        if outcome.result is None:
            print(f"   not run: this environment lacks {', '.join(outcome.missing)}")
            continue
        print(terminal_text(outcome.result, settings.normalizers))
        r = outcome.result
        ended, code = _ended(r)
        print(f"── {ended} · {r.stamp.label()} · {r.duration:.2f} s · {outcome.origin}")
        if r.ended_chain:  # even with status 0: the run of the chain did not get through
            print(f"   its chain's process ended with it: the cells after it did not run ({', '.join(r.ended_chain)})")
            code = code or 1
        if status == 0:
            status = code
    executor.close()
    return status


def _ended(result: RunResult) -> tuple[str, int]:
    """How a run ended, in words, and its status as a shell reports it."""
    if result.timed_out:
        return f"timed out after {result.duration:.1f} s, killed (status 124)", 124
    if result.stopped_by_output:
        return f"stopped: its output passed the output limit of {result.output_limit:,} bytes by {result.truncated_bytes:,} (status 1)", 1
    if result.signal:
        number = getattr(signal.Signals, result.signal, None) if result.signal.startswith("SIG") else None
        code = 128 + int(number) if number is not None else 1
        return f"killed by {result.signal} (status {code})", code
    code = result.exit_status if result.exit_status is not None else 1
    return f"exit status {code}", code


def load_by_id(project: Project, snippet_id: str) -> Snippet:
    """A snippet by id: its file, or else its code written in a page (which needs the index).

    :raises snipcheck.sources.snippets.SnippetError: if neither holds it.
    """
    try:
        return load(snippet_id, project.settings.snippets_dir, project.settings.root)
    except SnippetError as exc:
        if "not found" not in exc.message:
            raise
        placed = [p for p in project.placements() if p.snippet_id == snippet_id]
        if not placed and project.unreadable():
            pages = ", ".join(f"{rel_entry(Path(path))}:{line}: {why}" for path, line, why in project.unreadable())
            raise SnippetError(f"{exc.message}; a page that cannot be read may hold its code: {pages}") from None
        if not placed:
            raise
        return project.snippet(placed[0])
