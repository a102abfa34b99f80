"""The executor's worker threads and the order they take jobs in.

A :class:`Pool` hands queued jobs to up to ``jobs`` daemon threads, each
waiting on one child process at a time, so snippets run in parallel even in
a serial Sphinx build; daemon threads let Ctrl-C end the build at once (the
children are killed at exit, see :mod:`snipcheck.run.stopping`).

Jobs whose snippets declare a longer ``timeout`` go first
(:func:`declared_length`: the only sign of a long run before it has run
once): a snippet that takes minutes then overlaps with the many short ones
instead of coming last and leaving one core idle while it runs alone; among
equals, the order of submission (page order) holds.

Pure core: standard library only.
"""

from __future__ import annotations

import itertools
import math
import queue
import threading
import time
from collections.abc import Callable
from typing import Any


def declared_length(job: tuple[Any, ...]) -> float:
    """The longest ``timeout`` a job's snippets declare (0 for none): a single
    snippet's ``(snippet, future)``, or a chain's ``("chain", [(cell, future), ...])``."""
    cells = [entry[0] for entry in job[1]] if job[0] == "chain" else [job[0]]
    return max((cell.tags.timeout or 0.0) for cell in cells)


class Pool:
    """Worker threads doing queued jobs, longest declared first.

    :param jobs: the most threads (at least 1); one starts per job queued
        until there are that many.
    :param do: does one job; it must not raise (its futures get what went wrong).
    """

    def __init__(self, jobs: int, do: Callable[[tuple[Any, ...]], None]) -> None:
        self._jobs = max(1, jobs)
        self._do = do
        # (-declared timeout, order submitted, job); None after every job stops a thread
        self._queue: queue.PriorityQueue[tuple[float, int, Any]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._threads: list[threading.Thread] = []
        # time.monotonic() of the first job's start and the last one's end: the wall time of the work
        self._busy: tuple[float, float] | None = None
        self._busy_lock = threading.Lock()

    def put(self, job: tuple[Any, ...]) -> None:
        """Queue ``job`` and start a worker thread if fewer than ``jobs`` run
        (the caller serialises calls)."""
        self._queue.put((-declared_length(job), next(self._order), job))
        if len(self._threads) < self._jobs:
            t = threading.Thread(target=self._work, name=f"snipcheck-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()

    def close(self) -> None:
        """Stop the worker threads once the queue is empty."""
        for _ in self._threads:
            self._queue.put((math.inf, next(self._order), None))  # after every job

    @property
    def wall(self) -> float:
        """Seconds from the start of the first job to the end of the last one
        so far: the wall time of the work, less than the sum of the runs'
        durations when several run at once.  A job counts once its worker is
        done with it, just after its outcome is handed over."""
        busy = self._busy
        return busy[1] - busy[0] if busy else 0.0

    def _work(self) -> None:
        while True:
            item = self._queue.get()[2]
            if item is None:
                return
            start = time.monotonic()
            try:
                self._do(item)
            finally:
                end = time.monotonic()
                with self._busy_lock:
                    busy = self._busy or (start, end)
                    self._busy = (min(busy[0], start), max(busy[1], end))
