"""Run a program as a user runs it in a terminal: stdout and stderr on pseudo-terminals.

The reference of the parity and runner tests: a run's stdout and stderr are
buffered as a terminal run's are (issue 23 item 3), so plain python is run
where it sees a terminal, not a pipe (which buffers stdout by blocks).
"""

from __future__ import annotations

import errno
import os
import selectors
import subprocess
import termios
import time
from pathlib import Path

from snipcheck.run.capture import empty_stdin


def _terminal() -> tuple[int, int]:
    """A pseudo-terminal ``(master, slave)`` that passes output through as
    written (no ``\\n`` to ``\\r\\n``), as a terminal emulator receives it."""
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    return master, slave


def on_terminals(
    argv: list[str], cwd: str | Path, env: dict[str, str], merged: bool, timeout: float
) -> tuple[bytes, bytes, int]:
    """Run ``argv`` with stdout and stderr on terminals (one for both when
    ``merged``, else one each) and stdin at end-of-file, as a user runs it;
    return what each terminal received and the exit status."""
    ptys = [_terminal() for _ in range(1 if merged else 2)]
    stdin = empty_stdin()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=stdin, stdout=ptys[0][1], stderr=ptys[-1][1], close_fds=True
        )
    finally:
        os.close(stdin)
        for _, slave in ptys:
            os.close(slave)
    received = {master: bytearray() for master, _ in ptys}
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as selector:
            for master in received:
                selector.register(master, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                assert left > 0, f"{argv} did not end in {timeout} s"
                for key, _ in selector.select(left):
                    try:
                        data = os.read(key.fd, 1 << 16)
                    except OSError as exc:  # EIO: every slave descriptor is closed
                        assert exc.errno == errno.EIO, exc
                        data = b""
                    if data:
                        received[key.fd] += data
                    else:
                        selector.unregister(key.fd)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for master in received:
            os.close(master)
    out, err = (bytes(received[master]) for master, _ in (ptys[0], ptys[-1]))
    return out, (b"" if merged else err), code
