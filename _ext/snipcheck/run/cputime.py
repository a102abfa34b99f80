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
    """CPU seconds used by the processes under ``root`` (its descendants) since this clock started.

    :param root: the run's supervisor's PID.
    """

    def __init__(self, root: int) -> None:
        self.root = root
        start = self._ticks()
        self.available = start is not None
        self._start = start or 0
        self._last = self._start

    def seconds(self) -> float | None:
        """CPU seconds of the tree since the clock started (the last reading
        once the supervisor is gone); ``None`` if ``/proc`` cannot tell."""
        if not self.available:
            return None
        ticks = self._ticks()
        if ticks is not None:
            self._last = max(self._last, ticks)
        return max(0, self._last - self._start) / _TICK

    def _ticks(self) -> int | None:
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
        total = times[self.root][1]
        todo = list(parents.get(self.root, ()))
        while todo:
            pid = todo.pop()
            own, reaped = times.get(pid, (0, 0))
            total += own + reaped
            todo += parents.get(pid, ())
        return total
