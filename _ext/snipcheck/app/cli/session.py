"""One command's run: what a Ctrl-C must know, its executors, its interpreter's stamp, its log.

A Ctrl-C must know what the command has written so far (:data:`written`),
the executors whose runs to stop (:data:`executors`) and a note to add
(where a review's decisions are kept: :data:`interrupt_note`); :func:`reset`
empties them when a command starts, :func:`interrupted` says what was
written and stops the runs.

A ``SIGTERM`` (a CI job cancelled, ``timeout``, ``kill``) is handled the same
way (:func:`terminate_as_interrupt`): it stops the command where it is, says
in one line what was written, stops the runs, and the process then ends by
``SIGTERM`` (:func:`end_by_sigterm`), where the command would otherwise have
gone on with its runs failed ("interrupted") and ended as if it had checked
them (``accept`` with status 0).

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


class Terminated(KeyboardInterrupt):
    """A ``SIGTERM`` to the command, raised in its main thread (:func:`terminate_as_interrupt`):
    a ``KeyboardInterrupt``, so that every write stops or finishes as it does for a Ctrl-C."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


#: For :func:`snipcheck.files.signals_held`: this handler stops the work, as the default action does.
_on_sigterm.ends_process = True  # type: ignore[attr-defined]


def terminate_as_interrupt() -> bool:
    """Make a ``SIGTERM`` raise :class:`Terminated` in the main thread, where
    it still has its default action (a host's own handler is left as it is).

    :return: whether it was installed (undo it with :func:`terminate_by_default`).
    """
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        return False
    signal.signal(signal.SIGTERM, _on_sigterm)
    return True


def terminate_by_default() -> None:
    """Give ``SIGTERM`` its default action back, where :func:`terminate_as_interrupt` set it."""
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def end_by_sigterm() -> None:
    """End the process by ``SIGTERM`` (a shell reports 143), its streams flushed; never returns."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
    os._exit(128 + signal.SIGTERM)  # only if the signal is blocked in this thread


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


def interrupted(what: str = "interrupted") -> int:
    """Say in one line what a Ctrl-C left written, stop the runs, return :data:`INTERRUPTED`.

    The runs in progress are stopped now, while the interpreter is whole (the
    supervisors remove their run directories), not by the ``atexit`` handler
    alone; a second Ctrl-C meanwhile ends the process at once, and so does
    a ``SIGTERM``.

    :param what: the line's first word: ``"terminated"`` after a ``SIGTERM``.
    """
    from snipcheck.run.stopping import stop_live_runs

    terminate_by_default()
    done = list(dict.fromkeys(written))
    if done:
        message = f"{what} after writing {', '.join(rel(p) for p in done)} in full; nothing else was written"
    else:
        message = f"{what}; nothing was written"
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
    its line, ending with ``consequence``, and for each problem of the pages'
    snippet markup that fails the build (a snippet placed twice); return how
    many there are."""
    found = project.unreadable()
    for path, line, message in found:
        print(f"error: {rel_entry(Path(path))}:{line}: {message}; {consequence}", file=sys.stderr)
    problems = project.problems()
    for path, line, message in problems:
        print(f"error: {rel_entry(Path(path))}:{line}: {message} (the build fails on this too)", file=sys.stderr)
    return len(found) + len(problems)


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
