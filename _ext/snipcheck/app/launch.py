"""The ``snipcheck`` console script and ``python -m snipcheck``: the command
line, started so that a Ctrl-C is told the same way however early it comes.

The command line's modules take about 0.2 s to import; a Ctrl-C in that time
used to end in Python's ``KeyboardInterrupt`` traceback.  Nothing is written
or started by then, so it is told as any Ctrl-C before a write is
(:func:`snipcheck.app.cli.session.interrupted`): one line on stderr, status
130.  And once the command is done, a Ctrl-C no longer changes how the
process ends (:func:`run`).  Standard library only, until :func:`main`
imports the command line.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

__all__ = ["INTERRUPTED", "main"]

#: The exit status after a Ctrl-C (``snipcheck.app.cli.session.INTERRUPTED``; a test keeps them equal).
INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Import the command line and run it (:func:`snipcheck.app.cli.main`).

    :return: the exit status; :data:`INTERRUPTED` after a Ctrl-C while the
        command line was still being imported.
    """
    try:
        from snipcheck.app.cli import main as cli_main
    except KeyboardInterrupt:
        print("interrupted; nothing was written", file=sys.stderr)
        return INTERRUPTED
    try:
        return cli_main(argv)
    except KeyboardInterrupt:  # in the command line's last moments, past its own handling
        from snipcheck.app.cli import session

        return session.interrupted()


def run() -> None:
    """The console script: :func:`main`, its status the process's.

    Once the command is done, a Ctrl-C is ignored while the interpreter
    ends (the runs' servers are waited for, a few seconds at most): the
    command's work and its report are complete, and its status says how it
    ended, where the signal would end the process as if it had been
    interrupted (status 130, no line said).
    """
    status = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)
