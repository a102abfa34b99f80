"""Helpers for runner tests that need a busy machine or must find processes.

``busy()`` starts two CPU-bound processes beside the test (the load that made
output order flaky, cases 2 and 17 of ``shared/cases/runner.md``) and kills
them, by pid, afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

SPIN = "while True:\n    pass\n"


@contextlib.contextmanager
def busy(processes: int = 2) -> Iterator[list[int]]:
    """Two (by default) CPU-bound processes running while the block runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(processes)]
    try:
        time.sleep(0.2)  # let them reach the CPU
        yield [p.pid for p in spinners]
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (not absent, not a zombie)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" not in state.split()[1]


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def with_marker(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
