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


class Inbox:
    """Where a snippet tells the test something: a Unix datagram socket (in a
    folder of its own under ``/var/tmp``), which a run can send to although the whole file system is
    read-only to it (issue 33: a file the test reads can no longer be
    written by a snippet).  Snippet code sends one line with :meth:`send_code`;
    :meth:`lines` returns every line received so far, in order.

    A thread reads the socket as datagrams come (a sender waits once ten are
    unread), and :meth:`lines` reads what is left under the same lock: a
    datagram a run sent before it ended is in the queue by then.
    """

    def __init__(self) -> None:
        import socket
        import tempfile
        import threading

        # Not under /tmp or /dev/shm, which are each run's own; short (a socket path holds 107 bytes)
        self.folder = tempfile.mkdtemp(prefix="snipcheck-inbox-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None)
        self.path = os.path.join(self.folder, "inbox")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.received: list[str] = []
        self.lock = threading.Lock()
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def send_code(self, text: str) -> str:
        """A line of snippet code that sends the value of the expression ``text`` (a str)."""
        return (
            "__import__('socket').socket(__import__('socket').AF_UNIX, __import__('socket').SOCK_DGRAM)"
            f".sendto(({text}).encode(), {self.path!r})"
        )

    def _drain(self, wait: bool) -> None:

        self.sock.settimeout(0.05 if wait else 0)
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except (TimeoutError, BlockingIOError, OSError):
                return
            self.received.extend(data.decode().splitlines())
            self.sock.settimeout(0)

    def _read(self) -> None:
        while not self.closed:
            with self.lock:
                if self.closed:
                    return
                self._drain(wait=True)
            time.sleep(0.01)

    def lines(self) -> list[str]:
        """Every line sent so far."""
        with self.lock:
            self._drain(wait=False)
            return list(self.received)

    def clear(self) -> None:
        """Forget every line sent so far."""
        with self.lock:
            self._drain(wait=False)
            self.received.clear()

    def wait(self, seconds: float = 60.0, process: subprocess.Popen[str] | None = None) -> str:
        """The first line sent, waiting for it (``process``: a build that must not end first)."""
        deadline = time.monotonic() + seconds
        while not self.lines():
            if process is not None and process.poll() is not None:
                raise AssertionError(f"the build ended early: {process.communicate()}")
            assert time.monotonic() < deadline, f"nothing came to {self.path}"
            time.sleep(0.02)
        return self.lines()[0]

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.sock.close()
        self.reader.join()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.rmdir(self.folder)

    def __enter__(self) -> Inbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Snippet code: the calling process as the test can find it, ``"<pid namespace>/<pid in it>"``
#: (a run's /proc is its own PID namespace's: it cannot see its pid on the machine).
RUN_PID = "(__import__('os').readlink('/proc/self/ns/pid') + '/' + str(__import__('os').getpid()))"
#: ...and its children, the same way, separated by spaces.
RUN_CHILDREN = (
    "' '.join(__import__('os').readlink('/proc/self/ns/pid') + '/' + p "
    "for t in __import__('os').listdir('/proc/self/task') "
    "for p in open('/proc/self/task/' + t + '/children').read().split())"
)


def host_pid(spec: str) -> int | None:
    """The pid on this machine of the process a snippet named by :data:`RUN_PID`, or ``None`` where none runs."""
    namespace, _, inner = spec.rpartition("/")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns" / "pid") != namespace:
                continue
            status = (entry / "status").read_text()
        except OSError:
            continue
        nspid = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
        if nspid and nspid[-1] == inner and alive(int(entry.name)):
            return int(entry.name)
    return None


def spec_gone(spec: str) -> bool:
    """Whether the process a snippet named by :data:`RUN_PID` no longer runs."""
    return host_pid(spec) is None
