"""Parent-side output capture for one child process.

:func:`run_captured` starts a command in a new process group with stdin at
end-of-file and three pipes: file descriptors 1 and 2, and a frame pipe that
the child's bootstrap (``bootstrap/sitecustomize.py``) writes labelled frames
to.  It reads all three as data arrives, keeps the order of arrival, enforces
the timeout (killing the whole group) and the output limit (keeping a count of
what was dropped), and returns the events with the exit status.

Pure core: standard library and :mod:`snipcheck.model` only.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..model import Event, ExceptionInfo, RunResult, Stamp

_LABELS = {
    b"o": ("stdout", "text"),
    b"e": ("stderr", "text"),
    b"w": ("stderr", "warning"),
    b"t": ("stderr", "traceback"),
}
#: How long to keep reading after the child exits and its group is killed.
_DRAIN_GRACE = 1.0

# Process groups of runs in progress.  They live in sessions of their own, so
# Ctrl-C does not reach them; they are killed when this interpreter exits (the
# executor's threads are daemons and do not hold the exit up).
_live: set[int] = set()
_live_lock = threading.Lock()


@atexit.register
def kill_live_groups() -> None:
    """Kill the process group of every run still in progress."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        _kill_group(pgid)


@dataclass(frozen=True)
class Captured:
    """What :func:`run_captured` saw.

    :param events: merged events in arrival order.
    :param exit_status: exit status, or ``None`` for a signal or a timeout.
    :param signal: signal name if the child died of one (not at our timeout).
    :param exception: from the frame pipe's ``x`` frame, if any.
    :param duration: seconds from start to the child's exit (or the kill).
    :param timed_out: whether the child was killed at the timeout.
    :param truncated_bytes: output bytes dropped beyond ``output_limit``.
    """

    events: tuple[Event, ...]
    exit_status: int | None
    signal: str | None
    exception: ExceptionInfo | None
    duration: float
    timed_out: bool
    truncated_bytes: int


    def result(
        self, *, stamp: Stamp, runner: str, output_limit: int, exception: ExceptionInfo | None = None
    ) -> RunResult:
        """This capture as a :class:`~snipcheck.model.RunResult` (duration rounded to ms).

        :param exception: overrides the frame pipe's (Rust reads its panic from stderr).
        """
        return RunResult(
            events=self.events,
            exit_status=self.exit_status,
            signal=self.signal,
            exception=exception if exception is not None else self.exception,
            duration=round(self.duration, 3),
            timed_out=self.timed_out,
            truncated_bytes=self.truncated_bytes,
            stamp=stamp,
            runner=runner,
            output_limit=output_limit,
        )


class _Sink:
    """Collects chunks per (stream, kind), merging neighbours, under a byte cap."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = 0
        self.dropped = 0
        self.chunks: list[tuple[tuple[str, str], bytearray]] = []

    def add(self, where: tuple[str, str], data: bytes) -> None:
        room = self.limit - self.kept
        if room <= 0:
            self.dropped += len(data)
            return
        if len(data) > room:
            cut = room
            # Do not split a UTF-8 sequence: back off to a character boundary.
            while cut > 0 and (data[cut] & 0xC0) == 0x80:
                cut -= 1
            self.dropped += len(data) - cut
            data = data[:cut]
            self.kept = self.limit
        else:
            self.kept += len(data)
        if not data:
            return
        if self.chunks and self.chunks[-1][0] == where:
            self.chunks[-1][1].extend(data)
        else:
            self.chunks.append((where, bytearray(data)))

    def events(self, rewrite: Mapping[str, str]) -> tuple[Event, ...]:
        out = []
        for (stream, kind), data in self.chunks:
            text = data.decode("utf-8", "backslashreplace")
            for old, new in rewrite.items():
                text = text.replace(old, new)
            out.append(Event(stream, kind, text))
        return tuple(out)


class _FrameReader:
    def __init__(self, sink: _Sink) -> None:
        self.sink = sink
        self.buffer = bytearray()
        self.exception: ExceptionInfo | None = None

    def feed(self, data: bytes) -> None:
        self.buffer.extend(data)
        while len(self.buffer) >= 5:
            size = int.from_bytes(self.buffer[1:5], "big")
            if len(self.buffer) < 5 + size:
                return
            label = bytes(self.buffer[:1])
            payload = bytes(self.buffer[5 : 5 + size])
            del self.buffer[: 5 + size]
            if label == b"x":
                try:
                    info = json.loads(payload)
                    self.exception = ExceptionInfo(str(info["type"]), str(info["message"]))
                except (ValueError, KeyError, TypeError):
                    pass
            elif label in _LABELS:
                self.sink.add(_LABELS[label], payload)


class Child(Protocol):
    """A started child process: what :func:`run_captured` needs of it.

    ``pid`` must also be its process-group id (it runs in a session of its
    own); ``poll`` returns the exit status (negative: killed by that signal)
    or ``None`` while it runs; ``wait`` blocks until it has exited.
    """

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


#: ``spawn(stdout_w, stderr_w, frame_w)`` starts the child with those three
#: descriptors as its fd 1, fd 2 and frame pipe, and returns it.
Spawner = Callable[[int, int, int], Child]


def empty_stdin() -> int:
    """The read end of a pipe whose write end is closed: reads get end-of-file at once.

    Not ``/dev/null``: where that is not the null device (seen on a test
    machine: a regular file holding what some ``2>/dev/null`` wrote last), a
    snippet reading stdin would read that.
    """
    read, write = os.pipe()
    os.close(write)
    return read


def popen_spawner(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], frame_env_var: str = "SNIPCHECK_FRAME_FD") -> Spawner:
    """A spawner that starts ``argv`` with :class:`subprocess.Popen` in a new
    session, stdin at end-of-file (:func:`empty_stdin`), and the frame descriptor's number in
    ``frame_env_var``."""

    def spawn(out_w: int, err_w: int, frm_w: int) -> Child:
        child_env = dict(env)
        child_env[frame_env_var] = str(frm_w)
        stdin = empty_stdin()
        try:
            return subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=child_env,
                stdin=stdin,
                stdout=out_w,
                stderr=err_w,
                pass_fds=(frm_w,),
                start_new_session=True,
            )
        finally:
            os.close(stdin)

    return spawn


def run_captured(
    spawn: Spawner,
    *,
    timeout: float,
    output_limit: int,
    rewrite: Mapping[str, str] | None = None,
) -> Captured:
    """Start a child with :paramref:`spawn` and capture its output.

    :param spawn: starts the child (see :data:`Spawner`, :func:`popen_spawner`).
    :param timeout: seconds before the whole process group is killed.
    :param output_limit: bytes of output kept; the rest is counted, not kept.
    :param rewrite: exact substrings replaced in the decoded text (used to
        show the snippet's path relative to its run directory).
    :raises OSError: if the child cannot be started.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    frm_r, frm_w = os.pipe()
    start = time.monotonic()
    try:
        proc = spawn(out_w, err_w, frm_w)
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w, frm_r, frm_w):
            os.close(fd)
        raise
    for fd in (out_w, err_w, frm_w):
        os.close(fd)
    with _live_lock:
        _live.add(proc.pid)

    sink = _Sink(output_limit)
    frames = _FrameReader(sink)
    selector = selectors.DefaultSelector()
    selector.register(out_r, selectors.EVENT_READ, ("stdout", "text"))
    selector.register(err_r, selectors.EVENT_READ, ("stderr", "text"))
    selector.register(frm_r, selectors.EVENT_READ, None)
    deadline = start + timeout
    timed_out = False
    end: float | None = None
    drain_until: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if end is None and proc.poll() is not None:
                end = now
                _kill_group(proc.pid)  # orphans that still hold our pipes
                drain_until = now + _DRAIN_GRACE
            elif end is None and now >= deadline:
                timed_out = True
                _kill_group(proc.pid)
                proc.wait()
                end = now
                drain_until = now + _DRAIN_GRACE
            if drain_until is not None and now >= drain_until:
                break
            # While the child runs, wake up now and then to notice its exit even
            # if an orphan keeps the pipes open.
            wait = min(0.05, deadline - now) if drain_until is None else drain_until - now
            for key, _ in selector.select(max(0.0, wait)):
                try:
                    data = os.read(key.fd, 1 << 20)
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(key.fd)
                elif key.data is None:
                    frames.feed(data)
                else:
                    sink.add(key.data, data)
    finally:
        selector.close()
        for fd in (out_r, err_r, frm_r):
            os.close(fd)
        if proc.poll() is None:
            _kill_group(proc.pid)
        proc.wait()
        _kill_group(proc.pid)
        with _live_lock:
            _live.discard(proc.pid)
    if end is None:
        end = time.monotonic()
    returncode = proc.returncode
    sig = None
    status: int | None = returncode
    if timed_out:
        status = None
    elif returncode is not None and returncode < 0:
        status = None
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:
            sig = f"signal {-returncode}"
    return Captured(
        events=sink.events(rewrite or {}),
        exit_status=status,
        signal=sig,
        exception=frames.exception,
        duration=end - start,
        timed_out=timed_out,
        truncated_bytes=sink.dropped,
    )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
