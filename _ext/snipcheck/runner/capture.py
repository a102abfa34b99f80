"""Parent-side output capture and lifecycle of one run.

Order.  The run's file descriptors 1 and 2 are two ``AF_UNIX`` datagram
sockets, both connected to one receiving socket of the parent.  Each
``write(2)`` to either one, by the snippet's Python code, by C code or by any
process it starts, is queued as one datagram on the receiving socket, so the
parent reads every write in the order the kernel accepted it, and
``recvfrom`` names the sending socket: stdout or stderr.  That is the order a
terminal shows, whatever the load of the machine; reading two pipes in turn
cannot give it.  Writes from Python are labelled further by the child
(``bootstrap/_snipcheck_child.py``): warnings, the traceback of the uncaught
exception, and the exception's type and message come as *frames* on stderr,
prefixed with a per-run random token.  Anything else that reaches the
receiving socket (from an unknown address) is ignored.

Limits of the channel: the kernel queues a datagram only whole, so a single
``write(2)`` larger than the send buffer (about 4 MiB as root; twice
``net.core.wmem_max`` otherwise) fails with ``EMSGSIZE``/``ENOBUFS``.  Python's
own ``sys.stdout``/``sys.stderr`` split their writes into 64 KiB pieces; C
code or a child process writing more than that in one call would see the
error.  Descriptors 1 and 2 are sockets (``S_ISSOCK``), where a terminal run
has a terminal and ``python file.py > out`` a file.

Lifecycle.  The parent starts a supervisor (see
``bootstrap/_snipcheck_supervise.py`` and :mod:`snipcheck.runner.sandbox`)
and talks to it over a control socket: the supervisor reports the snippet's
wait status once the snippet's process has ended and every other process of
the run has been killed; closing the parent's end stops the run (timeout, or
the build's death, however it dies).  Nothing is polled: the parent sleeps in
one ``select`` on the receiving socket and the control socket.

The output cap is enforced here, on whatever arrives: bytes beyond it are
counted, never kept.

Pure core: standard library and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import atexit
import mmap
import os
import secrets
import selectors
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ..model import Event, ExceptionInfo, RunResult, Stamp

_LABELS = {
    b"w": ("stderr", "warning"),
    b"t": ("stderr", "traceback"),
}
#: Seconds a supervisor gets to stop a run before it is killed itself.
_STOP_GRACE = 2.0
#: Send buffer asked for on descriptors 1 and 2: the largest single write
#: (the kernel cannot queue a datagram beyond about 4 MiB in any case).
_SNDBUF = (4 << 20) + (256 << 10)
_SO_SNDBUFFORCE = 32
_TOKEN_BYTES = 16


class RunError(OSError):
    """The run could not be started, or its supervisor ended without reporting."""


@dataclass(frozen=True)
class Streams:
    """What a :data:`Spawner` gives the run's supervisor (the parent keeps its own ends).

    :param stdin: read end of an empty pipe (end-of-file at once).
    :param stdout: the socket for descriptor 1.
    :param stderr: the socket for descriptor 2.
    :param control: the supervisor's end of the control socket.
    :param token: the run's frame prefix (random bytes).
    """

    stdin: int
    stdout: int
    stderr: int
    control: int
    token: bytes


class Supervisor(Protocol):
    """A started supervisor, as :func:`run_captured` needs it."""

    pid: int

    def kill(self) -> None:
        """SIGKILL the supervisor (the last resort when it does not stop)."""
        ...

    def reap(self) -> None:
        """Collect its exit status if it is this process's child (may block briefly)."""
        ...


#: ``spawn(streams)`` starts the run's supervisor and returns it.
Spawner = Callable[[Streams], Supervisor]

# Control sockets of the runs in progress: closed when this interpreter exits,
# which tells each supervisor to kill its run and remove its run directory.
_live: dict[int, tuple[socket.socket, Supervisor]] = {}
_live_lock = threading.Lock()


@atexit.register
def stop_live_runs(grace: float = 1.0) -> None:
    """Stop every run still in progress (their supervisors clean up), waiting up to ``grace`` s."""
    with _live_lock:
        runs = list(_live.values())
    for control, _ in runs:
        try:
            control.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    for control, _ in runs:
        control.settimeout(max(0.0, deadline - time.monotonic()))
        try:
            while control.recv(4096):
                pass
        except OSError:
            pass


@dataclass(frozen=True)
class Captured:
    """What :func:`run_captured` saw.

    :param events: merged events in arrival order.
    :param exit_status: exit status, or ``None`` for a signal or a timeout.
    :param signal: signal name if the child died of one (not at our timeout).
    :param exception: from the child's ``x`` frame, if any.
    :param duration: seconds from start to the child's end (or the stop).
    :param timed_out: whether the run was stopped at the timeout.
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
        self,
        *,
        stamp: Stamp,
        runner: str,
        output_limit: int,
        exception: ExceptionInfo | None = None,
        memory_limit: int | None = None,
    ) -> RunResult:
        """This capture as a :class:`~snipcheck.model.RunResult` (duration rounded to ms).

        :param exception: overrides the child's (Rust reads its panic from stderr).
        :param memory_limit: the run's memory limit in bytes: an allocation
            failure is then reported as exceeding it.
        """
        exc = exception if exception is not None else self.exception
        if exc is not None and memory_limit and out_of_memory(exc):
            first, _, rest = exc.message.partition("\n")
            exc = ExceptionInfo(
                exc.type,
                f"exceeded its memory limit of {format_size(memory_limit)}"
                + (f" ({first})" if first.strip() else "")
                + f'; raise it with memory = "{format_size(memory_limit * 2)}" in its tag block, '
                "or snipcheck_memory_limit"
                + (f"\n{rest}" if rest else ""),
            )
        return RunResult(
            events=self.events,
            exit_status=self.exit_status,
            signal=self.signal,
            exception=exc,
            duration=round(self.duration, 3),
            timed_out=self.timed_out,
            truncated_bytes=self.truncated_bytes,
            stamp=stamp,
            runner=runner,
            output_limit=output_limit,
        )


def out_of_memory(exc: ExceptionInfo) -> bool:
    """Whether ``exc`` reports a failed allocation (Python's ``MemoryError``,
    torch's and numpy's, C++ ``std::bad_alloc``)."""
    name = exc.type.rsplit(".", 1)[-1]
    if name in ("MemoryError", "OutOfMemoryError", "_ArrayMemoryError"):
        return True
    text = exc.message.lower()
    return "can't allocate memory" in text or "cannot allocate memory" in text or "bad_alloc" in text


def format_size(size: int) -> str:
    """``4294967296`` → ``"4 GiB"`` (whole units where exact, else one decimal)."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if size % scale == 0 else f"{value:.1f} {unit}"
    return f"{size} bytes"


class _Sink:
    """Collects chunks per (stream, kind), merging neighbours, under a byte cap."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = 0
        self.dropped = 0
        self.chunks: list[tuple[tuple[str, str], bytearray]] = []

    def add(self, where: tuple[str, str], data: bytes | memoryview) -> None:
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
        if not len(data):
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


class _Channel:
    """The receiving socket and the two sending sockets of one run."""

    def __init__(self) -> None:
        self.receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.senders: list[socket.socket] = []
        self._dir: str | None = None
        try:
            self.receiver.bind(self._address())
            self.receiver.setblocking(False)
            address = self.receiver.getsockname()
            for _ in range(2):
                sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self.senders.append(sender)
                if sys.platform.startswith("linux"):
                    sender.bind(b"")  # autobind: a unique abstract address names the stream
                else:
                    sender.bind(self._address())
                _grow_send_buffer(sender)
                sender.connect(address)
            self.stdout_address = self.senders[0].getsockname()
            self.stderr_address = self.senders[1].getsockname()
            # A datagram never exceeds its sender's send buffer.
            largest = max(s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) for s in self.senders)
            self.buffer = mmap.mmap(-1, largest + 4096)  # untouched pages cost nothing
        except BaseException:
            self.close()
            raise

    def _address(self) -> str | bytes:
        if sys.platform.startswith("linux"):
            return b"\0snipcheck-" + secrets.token_hex(12).encode()
        import tempfile

        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="snipcheck-sock-")
        return os.path.join(self._dir, secrets.token_hex(4))

    def close(self) -> None:
        for s in (self.receiver, *self.senders):
            s.close()
        buffer = getattr(self, "buffer", None)
        if buffer is not None:
            try:
                buffer.close()
            except BufferError:
                pass  # a view is still alive somewhere; the mapping goes with it
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)


def _grow_send_buffer(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_SNDBUFFORCE, _SNDBUF)  # root: beyond net.core.wmem_max
    except OSError:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SNDBUF)
        except OSError:
            pass


def empty_stdin() -> int:
    """The read end of a pipe whose write end is closed: reads get end-of-file at once.

    Not ``/dev/null``: where that is not the null device (seen on a test
    machine: a regular file holding what some ``2>/dev/null`` wrote last), a
    snippet reading stdin would read that.
    """
    read, write = os.pipe()
    os.close(write)
    return read


class _Reader:
    """Reads the receiving socket into a :class:`_Sink`, telling frames from output."""

    def __init__(self, channel: _Channel, sink: _Sink, token: bytes) -> None:
        self.channel = channel
        self.sink = sink
        self.token = token
        self.exception: ExceptionInfo | None = None

    def drain(self) -> None:
        """Read every datagram queued now (never blocks)."""
        ch = self.channel
        receiver, buffer, sink = ch.receiver, ch.buffer, self.sink
        out_addr, err_addr = ch.stdout_address, ch.stderr_address
        token, skip = self.token, len(self.token)
        # Anything from another address (someone else's socket) is ignored.
        while True:
            try:
                size, address = receiver.recvfrom_into(buffer)
            except (BlockingIOError, InterruptedError):
                return
            data = memoryview(buffer)[:size]
            try:
                if address == out_addr:
                    sink.add(("stdout", "text"), data)
                elif address == err_addr:
                    if size > skip and data[:skip] == token:
                        # Frames are not output, but their text counts towards the cap.
                        self._frame(bytes(data[skip : skip + 1]), data[skip + 1 :])
                    else:
                        sink.add(("stderr", "text"), data)
            finally:
                data.release()

    def _frame(self, label: bytes, payload: memoryview) -> None:
        if label == b"x":
            name, _, message = bytes(payload).partition(b"\0")
            self.exception = ExceptionInfo(
                name.decode("utf-8", "backslashreplace"), message.decode("utf-8", "backslashreplace")
            )
        elif label in _LABELS:
            self.sink.add(_LABELS[label], payload)


def run_captured(
    spawn: Spawner,
    *,
    timeout: float,
    output_limit: int,
    rewrite: Mapping[str, str] | None = None,
) -> Captured:
    """Start a run with :paramref:`spawn`, capture its output, and wait for its end.

    :param spawn: starts the run's supervisor (see :data:`Spawner`).
    :param timeout: seconds before the run is stopped (every process killed).
    :param output_limit: bytes of output kept; the rest is counted, not kept.
    :param rewrite: exact substrings replaced in the decoded text (used to
        show the snippet's path relative to its run directory).
    :raises RunError: if the snippet could not be started, or its supervisor
        ended without reporting (killed from outside the run, or by the
        snippet where PID namespaces are not available).
    :raises OSError: if the supervisor cannot be started.
    """
    channel = _Channel()
    control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stdin = empty_stdin()
    token = secrets.token_bytes(_TOKEN_BYTES)
    start = time.monotonic()
    try:
        supervisor = spawn(
            Streams(stdin, channel.senders[0].fileno(), channel.senders[1].fileno(), theirs.fileno(), token)
        )
    except BaseException:
        channel.close()
        control.close()
        raise
    finally:
        theirs.close()
        os.close(stdin)
    for sender in channel.senders:
        sender.close()  # the run holds them now; the receiver alone stays
    with _live_lock:
        _live[id(control)] = (control, supervisor)

    sink = _Sink(output_limit)
    reader = _Reader(channel, sink, token)
    selector = selectors.DefaultSelector()
    selector.register(channel.receiver, selectors.EVENT_READ)
    selector.register(control, selectors.EVENT_READ)
    deadline = start + timeout
    timed_out = False
    stop_until: float | None = None
    status: int | None = None
    errors: list[str] = []
    ended = False
    end: float | None = None
    try:
        while not ended:
            now = time.monotonic()
            if stop_until is None and now >= deadline:
                timed_out = True
                end = now
                stop_until = now + _STOP_GRACE
                try:
                    control.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            if stop_until is not None and now >= stop_until:
                supervisor.kill()
                break
            wait = (deadline if stop_until is None else stop_until) - now
            for key, _ in selector.select(max(0.0, wait)):
                if key.fileobj is control:
                    message = _receive(control)
                    if message.startswith(b"exit "):
                        status = int(message[5:])
                        ended = True
                    elif message.startswith(b"error "):
                        errors.append(message[6:].decode("utf-8", "replace"))
                    else:  # b"stopped", or end-of-file: the supervisor is gone
                        ended = True
                else:
                    reader.drain()
            if ended and end is None:
                end = time.monotonic()
        reader.drain()  # everything the run wrote is queued by now
    finally:
        selector.close()
        with _live_lock:
            _live.pop(id(control), None)
        control.close()
        channel.close()
        supervisor.reap()
    if end is None:
        end = time.monotonic()
    if errors:
        raise RunError(errors[0])
    sig = None
    exit_status: int | None = None
    if not timed_out:
        if status is None:
            raise RunError(
                "the run's supervisor process ended without reporting how the snippet ended "
                "(it was killed: by the snippet, if it signals its parent and PID namespaces are not "
                "available here, or from outside the build)"
            )
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = f"signal {-code}"
        else:
            exit_status = code
    return Captured(
        events=sink.events(rewrite or {}),
        exit_status=exit_status,
        signal=sig,
        exception=reader.exception,
        duration=end - start,
        timed_out=timed_out,
        truncated_bytes=sink.dropped,
    )


def _receive(control: socket.socket) -> bytes:
    try:
        return control.recv(4096)
    except OSError:
        return b""
