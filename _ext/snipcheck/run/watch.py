"""The parent's wait on one run: its deadlines, its supervisor's messages, stopping it.

:class:`Watch` sleeps in one ``select`` on the run's receiving socket and its
control socket (see :mod:`snipcheck.run.capture` for the protocol): it reads
the output as it comes (:class:`~snipcheck.run.channel.Reader`), takes the
supervisor's messages (the end of a cell, a forgery, the wait status, an
error), and stops the run (closes its end of the control socket) at the
current cell's deadline, or once the output passed its limit by the margin
or forged the end of a cell; a supervisor that does not stop within
:data:`STOP_GRACE` seconds is killed.

Pure core: standard library, :mod:`snipcheck.run.channel` and :mod:`snipcheck.run.cputime`.
"""

from __future__ import annotations

import os
import selectors
import socket
import time
from collections.abc import Sequence
from typing import Protocol

from snipcheck.run.channel import Channel, Reader
from snipcheck.run.cputime import WALL_FACTOR, TreeClock

#: Seconds a supervisor gets to stop a run before it is killed itself.
STOP_GRACE = 2.0
#: Seconds between two looks at a run's CPU time (sooner when its limit is near).
LOOK_EVERY = 0.25


class Supervisor(Protocol):
    """A started supervisor, as :func:`snipcheck.run.capture.run_captured` needs it."""

    pid: int

    def kill(self) -> None:
        """SIGKILL the supervisor (the last resort when it does not stop)."""
        ...

    def reap(self) -> None:
        """Collect its exit status if it is this process's child (may block briefly)."""
        ...


class Watch:
    """Waits for the end of one run, reading its output meanwhile.

    :param timeouts: each cell's limit in seconds, counted from the end of
        the cell before it (the first from ``start``).
    :param start: ``time.monotonic()`` when the run was started.

    After :meth:`wait`: :attr:`status` (the supervisor's wait status of the
    snippet, ``None`` if it reported none), :attr:`errors` (why it could
    not start the run), :attr:`timed_out`, :attr:`end` (when the run ended
    or was stopped), :attr:`limit_hit` (``"cpu"``: the cell's CPU seconds,
    ``"wall"``: its wall-clock cap, :data:`~snipcheck.run.cputime.WALL_FACTOR`
    times its limit; without a CPU clock the limit is wall-clock seconds and
    reads ``"cpu"``).
    """

    def __init__(
        self,
        channel: Channel,
        control: socket.socket,
        supervisor: Supervisor,
        reader: Reader,
        timeouts: Sequence[float],
        start: float,
    ) -> None:
        self._channel = channel
        self._control = control
        self._supervisor = supervisor
        self._reader = reader
        self._timeouts = timeouts
        self._start = start
        self._last = len(timeouts) - 1
        self._selector = selectors.DefaultSelector()
        self._selector.register(channel.receiver, selectors.EVENT_READ)
        self._selector.register(control, selectors.EVENT_READ)
        self._stop_until: float | None = None
        self._ended = False
        self.timed_out = False
        self.status: int | None = None
        self.errors: list[str] = []
        self.end: float | None = None
        self.limit_hit = ""
        pid = getattr(supervisor, "pid", None)
        clock = TreeClock(pid) if isinstance(pid, int) else None
        self._clock = clock if clock is not None and clock.available else None
        self._cores = os.cpu_count() or 1
        self._cpu_base = 0.0  # the clock's reading when the current cell began
        # Before this, the cell cannot have used its CPU seconds, however many cores it kept busy.
        self._next_look = start + self._limit() / self._cores

    def close(self) -> None:
        """Release the selector (the sockets are the caller's)."""
        self._selector.close()

    def began(self) -> float:
        """When the current cell began (``time.monotonic()``)."""
        reader = self._reader
        return reader.cells[-1].received if reader.cells else self._start

    def _limit(self) -> float:
        return self._timeouts[min(len(self._reader.cells), self._last)]

    def deadline(self) -> float:
        """The current cell's wall-clock deadline: its cap (its limit, without a CPU clock)."""
        return self.began() + self._limit() * (WALL_FACTOR if self._clock is not None else 1.0)

    def _cpu_now(self) -> float:
        clock = self._clock
        found = clock.seconds() if clock is not None and clock.started else None
        return found if found is not None else 0.0

    def cpu_used(self) -> float | None:
        """CPU seconds the current (last) cell's processes used, ``None`` without a clock."""
        if self._clock is None or not self._clock.started:
            return None
        return self._cpu_now() - self._cpu_base

    def _cell_began(self) -> None:
        """A new cell: its CPU counts from here (read only if the clock runs already)."""
        self._cpu_base = self._cpu_now()
        self._next_look = self.began() + self._limit() / self._cores

    def _over(self, now: float) -> str:
        """``"cpu"`` or ``"wall"`` when the current cell passed a limit, else ``""``."""
        clock = self._clock
        over = ""
        if clock is not None and now >= self._next_look:
            if not clock.started:
                clock.seconds()
                # what this cell used so far, at most: all its cores' time since it began
                self._cpu_base = max(0.0, self._cpu_now() - self._cores * (now - self.began()))
            used = self._cpu_now() - self._cpu_base
            if used >= self._limit():
                over = "cpu"
            # look again when the limit could be reached, however many cores the run keeps busy
            self._next_look = now + max(LOOK_EVERY, (self._limit() - used) / self._cores)
        if not over and now >= self.deadline():
            over = "wall" if clock is not None else "cpu"
        return over

    def wait(self) -> bool:
        """Read the run until it ends, or is stopped and its supervisor is
        gone or killed.

        :return: whether it was stopped for its output (flooded), timeouts
            and forgeries apart.
        """
        reader = self._reader
        while not self._ended:
            now = time.monotonic()
            over = self._over(now) if self._stop_until is None else ""
            if over:
                self.timed_out, self.limit_hit = True, over
                self.end = now
                self._stop_until = now + STOP_GRACE
                self._shut()
            if self._stop_until is not None and now >= self._stop_until:
                self._supervisor.kill()
                break
            if self._stop_until is not None:
                wait = self._stop_until - now
            elif self._clock is not None:
                wait = min(self.deadline(), self._next_look) - now
            else:
                wait = self.deadline() - now
            for key, _ in self._selector.select(max(0.0, wait)):
                if key.fileobj is self._control:
                    self._take(_receive(self._control))
                elif reader.drain() and self._channel.batch and not self._ended:
                    time.sleep(self._channel.batch)
            if (reader.flooded or reader.forged) and self._stop_until is None and not self._ended:
                # Its output passed the limit by the margin, or it forged
                # the end of a cell: stop it, as at a timeout.
                self._stop()
            if self._ended and self.end is None:
                self.end = time.monotonic()
        if not reader.forged:
            reader.drain()  # everything the run wrote is queued by now
        # Whether it ended by itself first or not: the same bytes give the same result.
        return reader.flooded and not self.timed_out and not reader.forged

    def _take(self, message: bytes) -> None:
        """One message of the supervisor (see the module docstring of :mod:`snipcheck.run.capture`)."""
        if message.startswith(b"exit "):
            self.status = int(message[5:])
            self._ended = True
            self._cpu_now()  # while the supervisor, which reaped the run, is still there to read
        elif message.startswith(b"error "):
            self.errors.append(message[6:].decode("utf-8", "replace"))
        elif message.startswith(b"cell "):
            _cell_ended(self._reader, message, len(self._timeouts), self._control)
            self._cell_began()
        elif message.startswith(b"forged "):
            _refused(self._reader, message)
        else:  # b"stopped", or end-of-file: the supervisor is gone
            self._ended = True

    def _shut(self) -> None:
        """Tell the supervisor to stop the run."""
        try:
            self._control.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _stop(self) -> None:
        """Stop the run (as at a timeout) and read nothing more of what it writes."""
        self.end = time.monotonic()
        self._stop_until = self.end + STOP_GRACE
        if self._channel.receiver in self._selector.get_map():
            self._selector.unregister(self._channel.receiver)
        self._shut()


def _refused(reader: Reader, message: bytes) -> None:
    """The supervisor's ``forged INDEX TEXT``: cell INDEX's code forged an
    end of cell, so an end already taken from it (and what followed) is its
    output again."""
    index, _, text = message[7:].partition(b" ")
    if reader.forged:
        return
    try:
        reader.reopen(int(index))
    except ValueError:
        pass
    reader.forged = text.decode("utf-8", "replace")


def _cell_ended(reader: Reader, message: bytes, cells: int, control: socket.socket) -> None:
    """The supervisor's ``cell INDEX STATUS SECONDS``: the cell's output is
    all queued, so read it, end the cell there and let the next be handed over."""
    parts = message.split(b" ")
    try:
        index, status, seconds = int(parts[1]), int(parts[2]), float(parts[3])
    except (IndexError, ValueError):
        index, status, seconds = -1, 0, 0.0
    if index != len(reader.cells) or index >= cells - 1:  # the supervisor counts as this does: never seen
        reader.forged = reader.forged or f"ended a cell out of order ({message[:60]!r})"
        return
    reader.drain()
    if reader.flooded or reader.forged:
        return  # the run is stopped: no cell begins
    reader.end_cell(status, seconds)
    try:
        control.send(b"next")
    except OSError:
        pass  # the supervisor is gone: its end-of-file is read next


def _receive(control: socket.socket) -> bytes:
    """The supervisor's next message; ``b""`` once it is gone.

    A supervisor that closes its end while a ``next`` of ours lies unread
    there (the run ended meanwhile) makes the kernel report ECONNRESET here
    once, *before* the messages it sent earlier (its ``forged``, its
    ``exit``): those are still queued, so they are read after it.
    """
    try:
        return control.recv(4096)
    except ConnectionResetError:
        try:
            return control.recv(4096)
        except OSError:
            return b""
    except OSError:
        return b""
