"""The CPU seconds a run's processes used: what its timeout counts.

A run's limit counts CPU seconds, not wall-clock seconds, so that a build on
a busy machine (other builds, a CI runner's neighbours) does not time out a
snippet that is merely waiting for a core: the snippet gets its seconds of
CPU whatever the load.  A run that waits without computing (a ``sleep``, I/O,
a lock never released) is stopped by a wall-clock cap, many times larger
(:data:`WALL_FACTOR`).

:class:`TreeClock` reads the CPU time of every process under the run's
supervisor from ``/proc``: each live descendant's own user and system time,
and what every process of the tree (the supervisor included) got back from
the children it reaped; the supervisor's own time is not the run's.  Counted
from the clock's start, so a fork server's slot, whose supervisor runs one
snippet after another, counts each run from zero.

Pure core: standard library and :mod:`snipcheck.sources.tags` (Linux ``/proc``; elsewhere the clock is
unavailable, and the limit counts wall-clock seconds as before).
"""

from __future__ import annotations

import os

from snipcheck.sources.tags import WALL_FACTOR

__all__ = ["WALL_FACTOR", "TreeClock"]

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class TreeClock:
    """CPU seconds used by the processes under ``root`` (its descendants) during a run.

    Reading it scans ``/proc`` (a few milliseconds, more on a busy machine),
    so a run is read only where its limit could be near: not before it has
    run ``limit / cores`` seconds of wall-clock time, which is every short
    run (see :func:`snipcheck.run.capture.run_captured_cells`).  The first
    reading counts the supervisor's reaped time from then on (a fork server's
    slot reaped earlier runs) and every live descendant's whole time.

    :param root: the run's supervisor's PID.
    """

    def __init__(self, root: int) -> None:
        self.root = root
        self.available = os.path.isdir(f"/proc/{root}")
        self._base: int | None = None
        self._last = 0

    @property
    def started(self) -> bool:
        """Whether it has been read once."""
        return self._base is not None

    def seconds(self) -> float | None:
        """CPU seconds of the tree (the last reading once the supervisor is
        gone); ``None`` if ``/proc`` cannot tell."""
        if not self.available:
            return None
        found = self._ticks()
        if found is not None:
            reaped, below = found
            if self._base is None:
                self._base = reaped
            self._last = max(self._last, reaped - self._base + below)
        elif self._base is None:
            return None
        return self._last / _TICK

    def _ticks(self) -> tuple[int, int] | None:
        """``(ticks the root reaped, ticks of its live descendants and what they reaped)``."""
        try:
            names = os.listdir("/proc")
        except OSError:
            return None
        parents: dict[int, list[int]] = {}
        times: dict[int, tuple[int, int]] = {}
        for name in names:
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue  # gone meanwhile
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) < 15:
                continue
            pid = int(name)
            parents.setdefault(int(fields[1]), []).append(pid)
            # utime + stime, cutime + cstime (fields 14-17 of stat; 12-15 after the name)
            times[pid] = (int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
        if self.root not in times:
            return None
        below = 0
        todo = list(parents.get(self.root, ()))
        while todo:
            pid = todo.pop()
            own, reaped = times.get(pid, (0, 0))
            below += own + reaped
            todo += parents.get(pid, ())
        return times[self.root][1], below
