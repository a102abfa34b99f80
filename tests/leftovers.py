"""A pytest plugin: the whole test session must leave nothing of snipcheck behind.

Nothing a run or a command starts or writes may outlive it, however it ends
(a Ctrl-C, a failed build, a timeout): the tests do all of that, many times
over, so the session is the widest check there is.  At its end (in the
controller, once every worker is done) this plugin lists what appeared since
its start and is still there after a grace period:

* ``snipcheck-*`` entries in the run directories' root (``/dev/shm``) and in
  the temporary folder (run directories, fork server homes, socket folders);
* fork server processes (``bootstrap/forkserver.py``).

Any such leftover fails the session (exit status 1), naming each one.  The
check cannot tell whose a leftover is: another snipcheck process working on
the machine meanwhile (a second test session, a build) can show up in it;
``SNIPCHECK_LEFTOVERS=off`` turns it off for such a session.  Run
directories a figures test's helper left in /dev/shm, and a fork server that
lived on after a failed build, are what it would have caught.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

#: Seconds a leftover may take to go (a server removes its home as it exits).
GRACE = 10.0
_SERVER = "bootstrap/forkserver.py"
_seen: dict[str, set[str]] = {}


def _folders() -> list[str]:
    from snipcheck.run.python import run_root

    return sorted({run_root() or tempfile.gettempdir(), tempfile.gettempdir(), "/dev/shm"})


def _entries() -> set[str]:
    found = set()
    for folder in _folders():
        try:
            found.update(os.path.join(folder, name) for name in os.listdir(folder) if name.startswith("snipcheck-"))
        except OSError:
            continue
    return found


def _servers() -> set[str]:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state != "Z" and _SERVER in cmdline:
            found.add(f"process {entry}: {cmdline.strip()}")
    return found


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")  # pytest-xdist's workers have it


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session.config) and os.environ.get("SNIPCHECK_LEFTOVERS") != "off":
        _seen["entries"], _seen["servers"] = _entries(), _servers()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _controller(session.config) or "entries" not in _seen:
        return
    deadline = time.monotonic() + GRACE
    while True:
        left = sorted((_entries() - _seen["entries"]) | (_servers() - _seen["servers"]))
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if left:
        lines = [f"snipcheck left {len(left)} thing(s) behind after the test session ({GRACE:.0f} s grace):"]
        lines += [f"  {item}" for item in left]
        lines.append("(another snipcheck process working meanwhile shows here too: SNIPCHECK_LEFTOVERS=off skips this)")
        print("\n" + "\n".join(lines), flush=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
