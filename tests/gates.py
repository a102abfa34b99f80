"""Snippets that wait at a gate, for tests that act while a command runs them
(a Ctrl-C, another writer): no sleep decides the order.

A gated snippet names its process (``/proc/self/comm``) with a marker the
test looks for in ``/proc``, then waits until the gate file (a path the test
owns; snippets may read any file) holds a time, on the monotonic clock, that
is not before the run started.  So :meth:`Gate.open` releases every run that
has started by then and none that starts later: ``record``'s second run of
the same code waits again.  Imported as a plain module, like helpers.py.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

TIMEOUT = 120.0  # seconds any wait of these tests may take before it fails


class Gate:
    """One gate and its marker.

    :param path: the gate file (created by :meth:`open`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.marker = "gate" + secrets.token_hex(5)  # a process name holds at most 15 characters
        self.seen: list[int] = []

    def snippet(self, prints: str) -> str:
        """The code of a snippet that waits at this gate, then prints ``prints``."""
        return (
            "# /// snipcheck\n# timeout = 300\n# ///\n"
            "import time\n"
            "start = time.monotonic()\n"
            f"with open('/proc/self/comm', 'w') as f:\n    f.write({self.marker!r})\n"
            "while True:\n"
            "    try:\n"
            f"        with open({str(self.path)!r}) as f:\n"
            "            if float(f.read()) >= start:\n"
            "                break\n"
            "    except (OSError, ValueError):\n"
            "        pass\n"
            "    time.sleep(0.005)\n"
            f"print({prints!r})\n"
        )

    def running(self) -> list[int]:
        """PIDs of the processes that carry the marker now."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/comm") as f:
                        if f.read().strip() == self.marker:
                            found.append(int(entry))
                except OSError:
                    continue
        return found

    def wait_for_run(self, number: int, command: subprocess.Popen[str] | None = None) -> int:
        """Wait until the ``number``-th run (1-based) of a gated snippet has
        started (its process carries the marker); return its PID.

        :param command: the command running it: fail at once if it ends first.
        """
        deadline = time.monotonic() + TIMEOUT
        while len(self.seen) < number:
            self.seen += [pid for pid in self.running() if pid not in self.seen]
            if command is not None and command.poll() is not None:
                out, err = command.communicate()
                raise AssertionError(f"the command ended before run {number} started:\n{out}\n{err}")
            assert time.monotonic() < deadline, f"run {number} of the gated snippet did not start"
            time.sleep(0.005)
        return self.seen[number - 1]

    def open(self) -> None:
        """Release every run that has started (atomically: a run never reads half a time)."""
        tmp = self.path.with_name(self.path.name + ".new")
        tmp.write_text(repr(time.monotonic()))
        tmp.replace(self.path)

    def open_for_good(self) -> None:
        """Release every run, those that start later too."""
        self.path.write_text("inf")

    def wait_until_none_runs(self) -> None:
        """Wait until no process carries the marker (a stopped run is gone)."""
        deadline = time.monotonic() + TIMEOUT
        while self.running():
            assert time.monotonic() < deadline, f"a gated run outlived its command: {self.running()}"
            time.sleep(0.01)


def as_a_terminal_starts_it() -> None:
    """``preexec_fn`` for a command the test will Ctrl-C: ``SIGINT`` at its
    default action, as in a terminal's foreground job.  A test run started in
    the background by a shell without job control (``nohup pytest &``, some
    CI runners) inherits ``SIGINT`` ignored, and so would the command: Python
    then installs no ``KeyboardInterrupt`` handler and the Ctrl-C is lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ctrl_c(command: subprocess.Popen[str]) -> None:
    """Send SIGINT to ``command``'s process group, as a terminal's Ctrl-C does
    (start it with ``start_new_session=True, preexec_fn=as_a_terminal_starts_it``)."""
    os.killpg(command.pid, signal.SIGINT)
