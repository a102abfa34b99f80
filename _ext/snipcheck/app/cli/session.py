"""One command's run: what a Ctrl-C must know, its executors, its interpreter's stamp, its log.

A Ctrl-C must know what the command has written so far (:data:`written`),
the executors whose runs to stop (:data:`executors`) and a note to add
(where a review's decisions are kept: :data:`interrupt_note`); :func:`reset`
empties them when a command starts, :func:`interrupted` says what was
written and stops the runs.

Imports only the layers below ``app`` and :mod:`snipcheck.app.project`.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

from snipcheck.app.cli.output import rel, rel_entry
from snipcheck.app.project import Project
from snipcheck.engine.execute import Executor, executor_for
from snipcheck.model import Stamp
from snipcheck.run.environment import ProbeError, probe
from snipcheck.run.python import HASH_SEED
from snipcheck.settings import Settings

#: Exit status after a Ctrl-C: 128 + SIGINT, as a shell reports an interrupted command.
INTERRUPTED = 130

#: The project's files the command has written so far.
written: list[Path] = []
#: The executors whose runs a Ctrl-C stops.
executors: list[Executor] = []
#: Said after the interrupt message.
interrupt_note: list[str] = []


def reset() -> None:
    """Forget the last command's files, executors and notes."""
    written.clear()
    executors.clear()
    interrupt_note.clear()


def interrupted() -> int:
    """Say in one line what a Ctrl-C left written, stop the runs, return :data:`INTERRUPTED`.

    The runs in progress are stopped now, while the interpreter is whole (the
    supervisors remove their run directories), not by the ``atexit`` handler
    alone; a second Ctrl-C meanwhile ends the process at once.
    """
    from snipcheck.run.stopping import stop_live_runs

    done = list(dict.fromkeys(written))
    if done:
        message = f"interrupted after writing {', '.join(rel(p) for p in done)} in full; nothing else was written"
    else:
        message = "interrupted; nothing was written"
    print(message + "".join(f" ({note})" for note in interrupt_note), file=sys.stderr)
    previous = signal.signal(signal.SIGINT, lambda signum, frame: os._exit(INTERRUPTED))
    try:
        for executor in executors:
            executor.cancel_pending()
        stop_live_runs()
    finally:
        signal.signal(signal.SIGINT, previous)
    return INTERRUPTED


def executor(settings: Settings, stamp: Stamp, use_cache: bool, hash_seed: int = HASH_SEED) -> Executor:
    """``settings.executor``, known to a Ctrl-C (its pending runs are cancelled)."""
    made = executor_for(settings, stamp, use_cache=use_cache, hash_seed=hash_seed)
    executors.append(made)
    return made


def interpreter(settings: Settings, verbose: int = 0, use_cache: bool = True) -> Stamp | None:
    """The probe stamp of the snippet interpreter, or ``None`` after saying why there is none.

    :param verbose: with 1 or more, also say (on stderr) which interpreter
        runs the snippets, with which runner, and where the result cache is.
    :param use_cache: whether the command reads the result cache (only said).
    """
    try:
        stamp = probe(settings.python, settings.cache_dir)
    except ProbeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    why = settings.preload_problem(stamp) if settings.runner == "fork" else None
    if why:
        print(f"warning: {why}", file=sys.stderr)
    if verbose:
        cache = rel(settings.cache_dir) if use_cache else "not used (--no-cache)"
        print(
            f"snippets run on {stamp.label()} ({settings.python}, {settings.runner} runner); result cache: {cache}",
            file=sys.stderr,
        )
    return stamp


def left_out(project: Project, consequence: str) -> int:
    """Print an error for each page Sphinx could not read (not UTF-8, say), at
    its line, ending with ``consequence``; return how many there are."""
    found = project.unreadable()
    for path, line, message in found:
        print(f"error: {rel_entry(Path(path))}:{line}: {message}; {consequence}", file=sys.stderr)
    return len(found)


def core_log(verbose: int, quiet: int) -> None:
    """Show the core's log records (the runners': "fork runner ready", a fallback
    to subprocesses) on stderr: warnings, news too with ``-v``, errors only with
    ``-qq``; never through the root logger, which a conf.py or a theme may have
    configured for itself (``logging.basicConfig`` at INFO)."""
    core = logging.getLogger("snipcheck")
    core.handlers = [h for h in core.handlers if not getattr(h, "_snipcheck_cli", False)]
    handler = logging.StreamHandler(sys.stderr)
    handler._snipcheck_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(message)s"))
    core.addHandler(handler)
    core.setLevel(logging.INFO if verbose else logging.ERROR if quiet >= 2 else logging.WARNING)
    core.propagate = False
