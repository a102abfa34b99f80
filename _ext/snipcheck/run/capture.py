"""Parent-side capture and lifecycle of one run.

Order: the run writes to the datagram channel of :mod:`.channel` (stdout and
stderr into one receive queue, so the kernel's order is the terminal's).

Lifecycle: the parent starts a supervisor (see
``bootstrap/_snipcheck_supervise.py`` and :mod:`snipcheck.run.sandbox`)
and talks to it over a control socket: the supervisor reports the snippet's
wait status once the snippet's process has ended and every other process of
the run has been killed; closing the parent's end stops the run (timeout, or
the build's death, however it dies).  Nothing is polled: the parent sleeps in
one ``select`` on the receiving socket and the control socket.

Output beyond the limit: a run whose output passes its limit by the limit
again (at least 1 MiB) is stopped there, as at a timeout (:class:`.channel.Sink`): its result
says so (``stopped_by_output``), and how it would have ended is unknown.

Cells of a chain: the supervisor says on the control socket where each
cell ended (``cell INDEX STATUS SECONDS``, once the snippet's process asked
for the next cell on the chain's *feed*, a socket pair made here and handed
to the supervisor whole); everything the cell wrote is queued by then, so
the reader takes it all as that cell's output, then answers ``next`` and
the supervisor hands the next cell over.  A forgery (``forged INDEX TEXT`` from
the supervisor, or an end-of-cell frame on descriptor 2, which the runner
no longer writes) stops the run: the result of the cell it came in says
what was forged (``forged``) and the cells after it are not run.

What ends the runs (a Ctrl-C, a SIGTERM, the exit) and what outlives none
of them is :mod:`.stopping`.

Pure core: standard library and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from snipcheck.model import Event, ExceptionInfo, Figure, RunResult, Stamp
from snipcheck.run.channel import TOKEN_BYTES, Channel, Reader, Sink, empty_stdin
from snipcheck.run.stopping import RunError, refuse_if_stopping, register_run, unregister_run
from snipcheck.run.watch import Supervisor, Watch

__all__ = [
    "Captured",
    "RunError",
    "Spawner",
    "Streams",
    "Supervisor",
    "empty_stdin",
    "run_captured",
    "run_captured_cells",
]


@dataclass(frozen=True)
class Streams:
    """What a :data:`Spawner` gives the run's supervisor (the parent keeps its own ends).

    :param stdin: read end of an empty pipe (end-of-file at once).
    :param stdout: the socket for descriptor 1.
    :param stderr: the socket for descriptor 2.
    :param control: the supervisor's end of the control socket.
    :param token: the run's frame prefix (random bytes).
    :param feed: for a chain, the two ends of the socket pair its cells are
        handed over on (the supervisor's, the snippet's), else ``None``.
    """

    stdin: int
    stdout: int
    stderr: int
    control: int
    token: bytes
    feed: tuple[int, int] | None = None


#: ``spawn(streams)`` starts the run's supervisor and returns it.
Spawner = Callable[[Streams], Supervisor]


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
    :param figures: the figures of its ``figure`` events, in order.
    :param stopped_by_output: whether the run was stopped because its output
        passed the limit by the sink's margin (``truncated_bytes`` is then the
        margin, and ``exit_status``, ``signal`` and ``exception`` are ``None``).
    :param forged: what the run did to mark the end of a cell itself (see
        the module docstring), ``""`` if nothing; the run was stopped there.
    :param limit: for a run stopped at its timeout, which limit it reached:
        ``"cpu"`` (its CPU seconds) or ``"wall"`` (the wall-clock cap, see
        :mod:`.cputime`); ``""`` otherwise.
    :param cpu: CPU seconds its processes used, where ``/proc`` tells (else ``None``).
    """

    events: tuple[Event, ...]
    exit_status: int | None
    signal: str | None
    exception: ExceptionInfo | None
    duration: float
    timed_out: bool
    truncated_bytes: int
    figures: tuple[Figure, ...] = ()
    stopped_by_output: bool = False
    forged: str = ""
    limit: str = ""
    cpu: float | None = None

    def result(
        self,
        *,
        stamp: Stamp,
        runner: str,
        output_limit: int,
        exception: ExceptionInfo | None = None,
        memory_limit: int | None = None,
        seed: int | None = None,
    ) -> RunResult:
        """This capture as a :class:`~snipcheck.model.RunResult` (duration rounded to ms).

        :param exception: overrides the child's (Rust reads its panic from stderr).
        :param memory_limit: the run's memory limit in bytes: an allocation
            failure is then reported as exceeding it.
        :param seed: the seed the run's random generators started from.
        """
        exc = exception if exception is not None else self.exception
        if exc is not None and memory_limit and out_of_memory(exc):
            first, _, rest = exc.message.partition("\n")
            exc = ExceptionInfo(
                exc.type,
                f"exceeded its memory limit of {format_size(memory_limit)}"
                + (f" ({first})" if first.strip() else "")
                + f'; raise it with memory = "{format_size(memory_limit * 2)}" in its tag block, '
                "or snipcheck_memory_limit" + (f"\n{rest}" if rest else ""),
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
            seed=seed,
            figures=self.figures,
            stopped_by_output=self.stopped_by_output,
            forged=self.forged,
            limit=self.limit,
            cpu=None if self.cpu is None else round(self.cpu, 3),
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
    return run_captured_cells(spawn, timeouts=(timeout,), output_limit=output_limit, rewrite=rewrite)[0]


def run_captured_cells(
    spawn: Spawner,
    *,
    timeouts: Sequence[float],
    output_limit: int,
    rewrite: Mapping[str, str] | None = None,
    chain: bool = False,
) -> list[Captured]:
    """:func:`run_captured` for a chain: one process runs ``len(timeouts)``
    cells one after the other, handed over by its supervisor, which reports
    the end of each but the last (see the module docstring).

    :param chain: make the feed the cells are handed over on
        (:attr:`Streams.feed`); the spawner gives the supervisor the cells.
    :param timeouts: each cell's limit, counted from the end of the cell
        before it: CPU seconds of the run's processes, with a wall-clock cap
        of :data:`.cputime.WALL_FACTOR` times as many seconds; where ``/proc``
        cannot tell the CPU time, wall-clock seconds.
    :param output_limit: bytes kept per cell; a cell whose output passes it
        by as much again stops the run there (see the module docstring).
    :return: one :class:`Captured` per cell that ran, in order; the last one
        holds how the process ended (a cell that failed, timed out, was
        stopped for its output or ended the process), and the cells after it
        are missing from the list.
    :raises RunError, OSError: as :func:`run_captured`.
    """
    refuse_if_stopping()
    channel = Channel()
    control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stdin = empty_stdin()
    token = secrets.token_bytes(TOKEN_BYTES)
    feed = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) if chain else ()
    start = time.monotonic()
    try:
        ends = (feed[0].fileno(), feed[1].fileno()) if feed else None
        supervisor = spawn(
            Streams(
                stdin, channel.senders[0].fileno(), channel.senders[1].fileno(), theirs.fileno(), token, ends
            )
        )
    except BaseException:
        channel.close()
        control.close()
        raise
    finally:
        theirs.close()
        os.close(stdin)
        for pair_end in feed:
            pair_end.close()  # the supervisor holds both ends now; nothing here reads or writes them
    for sender in channel.senders:
        sender.close()  # the run holds them now; the receiver alone stays
    if register_run(
        control, supervisor
    ):  # started while stop_live_runs listed the runs: stop it as it would have
        with contextlib.suppress(OSError):
            control.shutdown(socket.SHUT_WR)

    reader = Reader(channel, Sink(output_limit), token)
    watch = Watch(channel, control, supervisor, reader, timeouts, start)
    try:
        flooded = watch.wait()
    finally:
        watch.close()
        unregister_run(control)
        control.close()
        channel.close()
        supervisor.reap()
    end = time.monotonic() if watch.end is None else watch.end
    if watch.errors:
        raise RunError(f"could not start the run: {watch.errors[0]}")
    return _captured(reader, watch, flooded, start, end, len(timeouts) - 1, rewrite or {})


def _ending(status: int | None) -> tuple[int | None, str | None]:
    """``(exit status, signal name)`` of the snippet's wait ``status``.

    :raises RunError: when there is none: its supervisor was killed before it reported.
    """
    if status is None:
        raise RunError(
            "the run's supervisor process was killed before it could report how the snippet ended: "
            "by the snippet, if it signals its parent (os.getppid()) where PID namespaces are not "
            "available, or from outside the build; the snippet's output is lost"
        )
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return code, None
    try:
        return None, signal.Signals(-code).name
    except ValueError:
        return None, f"signal {-code}"


def _captured(
    reader: Reader,
    watch: Watch,
    flooded: bool,
    start: float,
    end: float,
    last: int,
    rewrite: Mapping[str, str],
) -> list[Captured]:
    """One :class:`Captured` per cell that ran (see :func:`run_captured_cells`)."""
    sig = None
    exit_status: int | None = None
    if not watch.timed_out and not flooded and not reader.forged:
        exit_status, sig = _ending(watch.status)
    done = [
        Captured(
            events=cell.sink.events(rewrite),
            exit_status=cell.status,
            signal=None,
            exception=cell.exception,
            duration=cell.seconds,
            timed_out=False,
            truncated_bytes=cell.sink.dropped,
            figures=tuple(cell.sink.figures),
        )
        for cell in reader.cells[:last]
    ]
    began = reader.cells[-1].received if reader.cells else start
    return [
        *done,
        Captured(
            events=reader.sink.events(rewrite),
            exit_status=exit_status,
            signal=sig,
            exception=None if flooded or reader.forged else reader.exception,
            duration=end - began,
            timed_out=watch.timed_out and not reader.forged,
            truncated_bytes=reader.sink.dropped,
            figures=tuple(reader.sink.figures),
            stopped_by_output=flooded,
            forged=reader.forged,
            limit=watch.limit_hit if watch.timed_out and not reader.forged else "",
            cpu=watch.cpu_used(),
        ),
    ]
