"""Execute snippets in parallel: the one entry point of the build, the
command line and the pytest plugin.

``submit`` a snippet to an :class:`Executor` and get a
:class:`concurrent.futures.Future` of its :class:`~snipcheck.model.Outcome`.
The executor schedules; the modules beside it do the rest:

* :mod:`snipcheck.engine.config`: what it is told (:class:`ExecutorConfig`,
  made from a project's settings by :func:`executor_for`);
* :mod:`snipcheck.engine.pool`: the worker threads, longest declared job first;
* :mod:`snipcheck.engine.runs`: one snippet's outcome, through the cache and
  the runners (requirements, look-up, lock, run, store, counts);
* :mod:`snipcheck.engine.chain_job`: the cells of a chain, run in one process.

What the executor itself decides: each snippet (id and source) is run once
however often it is submitted; the cells of a chain wait for the rest of
their chain (:meth:`Executor.start_chains`); runs may be held back until the
runner kind is known (:meth:`Executor.hold_runs`, :meth:`Executor.plan`).

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent import futures
from concurrent.futures import Future
from typing import Any

from snipcheck.engine.chain_job import run_chain_job
from snipcheck.engine.config import ExecutorConfig, RunSettings, config_for
from snipcheck.engine.pool import Pool, declared_length
from snipcheck.engine.runs import Runs, cacheable
from snipcheck.model import Outcome, RunResult, Snippet, Stamp
from snipcheck.run import Runner
from snipcheck.run.stopping import RunError, end_runs_on_sigterm, resume_runs
from snipcheck.sources.chains import with_later

__all__ = ["Executor", "ExecutorConfig", "declared_length", "executor_for"]


class Executor:
    """Runs snippets in parallel, reusing cached results.

    :param config: see :class:`~snipcheck.engine.config.ExecutorConfig`.
    :param runner_factory: ``(language) -> Runner``; defaults to
        :func:`snipcheck.run.make_runner`.
    """

    def __init__(
        self, config: ExecutorConfig, runner_factory: Callable[[str], Runner] | None = None
    ) -> None:
        self.config = config
        resume_runs()  # a command or build after one this process interrupted runs again
        end_runs_on_sigterm()  # a SIGTERM stops the runs and what they left before it ends the process
        #: The outcome of one snippet: the cache layer around the runners.
        self.runs = Runs(config, runner_factory)
        self._pool = Pool(config.jobs, self._job)
        self._futures: dict[tuple[str, str], Future[Outcome]] = {}
        self._lock = threading.Lock()
        # chain -> each cell submitted (the whole snippet: two versions of a page differ) -> its future
        self._chains: dict[str, dict[Snippet, tuple[Snippet, Future[Outcome]]]] = {}
        self._started: dict[str, int] = {}  # chain -> cells it was started with
        # Runs held back until the runner kind is known (see hold_runs).
        self._holding = False
        self._held: list[tuple[Snippet, Future[Outcome]]] = []

    @property
    def ran(self) -> int:
        """Runs made so far (a chain's cells count one each)."""
        return self.runs.ran

    @property
    def cached(self) -> int:
        """Results taken from the cache so far."""
        return self.runs.cached

    def key(self, snippet: Snippet, kind: str | None = None, stamp: Stamp | None = None) -> str:
        """See :meth:`snipcheck.engine.runs.Runs.key`."""
        return self.runs.key(snippet, kind, stamp)

    def prepare(self, language: str) -> None:
        """Make the runner of ``language`` now, without running anything: a
        Rust snippet's key holds its runner's stamp (with ``rustc --version``),
        known once the runner exists (see :meth:`key`)."""
        self.runs.runner(language)

    def output_limit(self, snippet: Snippet) -> int:
        """See :meth:`snipcheck.engine.runs.Runs.output_limit`."""
        return self.runs.output_limit(snippet)

    def declared(self, snippet: Snippet) -> Snippet:
        """See :meth:`snipcheck.engine.runs.Runs.declared`."""
        return self.runs.declared(snippet)

    def lookup_kinds(self, snippet: Snippet) -> tuple[str, ...]:
        """See :meth:`snipcheck.engine.runs.Runs.lookup_kinds`."""
        return self.runs.lookup_kinds(snippet)

    @staticmethod
    def cacheable(snippet: Snippet, result: RunResult) -> bool:
        """See :func:`snipcheck.engine.runs.cacheable`."""
        return cacheable(snippet, result)

    def plan(self, snippets: Iterable[Snippet]) -> int:
        """Count the Python runs ``snippets`` will need (those not in the cache);
        when there are fewer than ``fork_min_runs``, run them as plain
        subprocesses: each costs one ``import torch``, less than starting the
        fork server, which imports everything it preloads (one edited snippet
        in a live preview, say).  Call it before submitting; it changes nothing
        once a runner exists.

        The runner kind is part of every cache key: fork and subprocess runs
        can differ.  A switched build takes from the cache what the fork
        runner made and what earlier switched builds made (stored under the
        subprocess runner's key), and stores its own runs under that key; a
        build that forks takes only the fork runner's results.

        :return: the number of Python runs expected.
        """
        cfg = self.config
        missing: dict[str, set[int]] = {"fork": set(), "subprocess": set()}
        for n, snippet in enumerate(with_later(list(snippets))):  # a chain cell's key: as its chain runs it
            if snippet.language != "python" or self.runs.missing(snippet):
                continue
            for kind, absent in missing.items():
                if cfg.cache is None or not cfg.cache.path(self.runs.key(snippet, kind)).exists():
                    absent.add(n)
        with self._lock:
            runs = self.runs
            if runs.kind == "fork" and 0 < len(missing["fork"]) < cfg.fork_min_runs and not runs.has_runner("python"):
                runs.kind = "subprocess"
            if self._holding:
                self._release()
            if runs.kind == cfg.runner:
                return len(missing[runs.kind])
            return len(missing["fork"] & missing["subprocess"])

    def hold_runs(self) -> None:
        """Start taking submissions before :meth:`plan` knows the whole list
        (a cold build, while its pages are read): results in the cache are
        served at once, and Python snippets that must run wait until
        ``fork_min_runs`` of them are waiting (then they run, on the
        configured runner) or until :meth:`plan` decides the runner kind with
        the whole list."""
        with self._lock:
            if not self.runs.has_runner("python"):
                self._holding = True

    @property
    def holding(self) -> bool:
        """Whether runs are held until :meth:`plan` (see :meth:`hold_runs`)."""
        return self._holding

    def _hold(self, snippet: Snippet, fut: Future[Outcome]) -> bool:
        """Whether ``snippet`` (a cache miss) waits for the runner kind; holds it if so."""
        with self._lock:
            if not self._holding or snippet.language != "python":
                return False
            self._held.append((snippet, fut))
            if len(self._held) >= max(1, self.config.fork_min_runs):
                self._release()  # enough runs for the fork server, whatever comes next
            return True

    def _release(self) -> None:
        """Stop holding runs and queue the held ones (lock held)."""
        self._holding = False
        for snippet, fut in self._held:
            self._pool.put((snippet, fut, "resumed"))
        self._held.clear()

    def submit(self, snippet: Snippet) -> Future[Outcome]:
        """Schedule ``snippet`` (once per id and source) and return its future.

        A cell of a chain (``snippet.chain``) waits for the rest of its chain:
        its chain starts at :meth:`start_chains`, which :meth:`outcome` and
        :meth:`map` call, so every cell submitted by then runs in one process.
        """
        if snippet.chain and snippet.language == "python":
            return self._submit_cell(snippet)
        key = (snippet.id, snippet.source)
        with self._lock:
            fut = self._futures.get(key)
            if fut is None:
                fut = Future()
                self._futures[key] = fut
                self._pool.put((snippet, fut))
            return fut

    def _submit_cell(self, snippet: Snippet) -> Future[Outcome]:
        with self._lock:
            cells = self._chains.setdefault(snippet.chain, {})
            entry = cells.get(snippet)
            if entry is not None:
                return entry[1]
            fut: Future[Outcome] = Future()
            cells[snippet] = (snippet, fut)
            if snippet.chain in self._started:
                # A cell that came after its chain started: its own job runs
                # its earlier cells again (see snipcheck.sources.chains).
                self._pool.put(("chain", [(snippet, fut)]))
            return fut

    def start_chains(self) -> None:
        """Start every chain submitted so far that has not started: one job
        per chain, its cells in order (see :mod:`snipcheck.sources.chains`)."""
        with self._lock:
            for name, cells in self._chains.items():
                if name in self._started:
                    continue
                self._started[name] = len(cells)
                ordered = sorted(cells.values(), key=lambda entry: len(entry[0].earlier))
                self._pool.put(("chain", ordered))

    def outcome(self, snippet: Snippet) -> Outcome:
        """Block until ``snippet`` has an outcome (submitting it if needed)."""
        fut = self.submit(snippet)
        if snippet.chain:
            self.start_chains()
        return _result(fut)

    def map(self, snippets: Iterable[Snippet]) -> list[Outcome]:
        """Outcomes of ``snippets`` in order, all run in parallel."""
        submitted = [self.submit(s) for s in snippets]
        self.start_chains()
        return [_result(f) for f in submitted]

    def cancel_pending(self) -> int:
        """Cancel the submitted snippets that have not started; return how many."""
        with self._lock:
            futures = [*self._futures.values(), *(fut for cells in self._chains.values() for _, fut in cells.values())]
        return sum(1 for fut in futures if fut.cancel())

    def close(self) -> None:
        """Stop the worker threads once the queue is empty, and the runners."""
        self._pool.close()
        self.runs.close()

    @property
    def wall(self) -> float:
        """See :attr:`snipcheck.engine.pool.Pool.wall` (a job: a run, a cache
        look-up or a chain)."""
        return self._pool.wall

    def _job(self, item: tuple[Any, ...]) -> None:
        """Do one queued job (see :class:`~snipcheck.engine.pool.Pool`): its futures get their outcomes."""
        if item[0] == "chain":
            run_chain_job(self.runs, item[1])
            return
        snippet, fut = item[0], item[1]
        if len(item) == 2 and not fut.set_running_or_notify_cancel():
            return  # cancelled (a held run, resumed, is running already)
        try:
            outcome = self._execute(snippet, fut)
            if outcome is not None:
                fut.set_result(outcome)
        except RunError as exc:  # its message says what went wrong with the run
            fut.set_result(Outcome(None, "error", notes=(str(exc),)))
        except OSError as exc:
            fut.set_result(Outcome(None, "error", notes=(f"could not start the run: {exc}",)))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting reader
            fut.set_exception(exc)

    def _execute(self, snippet: Snippet, fut: Future[Outcome] | None = None) -> Outcome | None:
        """The outcome of ``snippet``: from the cache, or a run; ``None`` when
        its run is held (see :meth:`hold_runs`), ``fut`` then waits."""
        notes: list[str] = []
        snippet = self.runs.declared(snippet)
        outcome, keys = self.runs.look_up(snippet, notes)
        if outcome is not None:
            return outcome
        if fut is not None and self._hold(snippet, fut):
            return None
        return self.runs.run(snippet, keys, notes)


def executor_for(settings: RunSettings, stamp: Stamp, **options: Any) -> Executor:
    """An executor for snippets under ``settings`` (a
    :class:`snipcheck.settings.Settings`); ``options`` are
    :func:`snipcheck.engine.config.config_for`'s keywords."""
    return Executor(config_for(settings, stamp, **options))


#: Seconds the waiting thread sleeps at most between two looks for a Ctrl-C (:func:`_result`).
WAKE = 0.1


def _result(fut: Future[Outcome]) -> Outcome:
    """``fut.result()``, waited for in slices of :data:`WAKE` seconds.

    The kernel hands a Ctrl-C sent to the process to any one of its threads,
    and it is not always the main thread; Python's handler then only flags
    the signal for the main thread, which wakes for it only when the wait it
    sleeps in ends.  Waiting on a run that will not end by itself (a snippet
    that waits for ever, until its timeout) the command then said nothing and
    did not stop.  Between slices the main thread raises the flagged
    ``KeyboardInterrupt``, at most :data:`WAKE` seconds late.

    :raises concurrent.futures.CancelledError: if ``fut`` was cancelled
        (:meth:`Executor.cancel_pending`).
    """
    while not fut.done():
        futures.wait((fut,), timeout=WAKE)
    return fut.result()
