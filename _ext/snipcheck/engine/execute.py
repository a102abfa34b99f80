"""Execute snippets through the cache and a pool of worker threads.

:class:`Executor` is the one entry point the Sphinx layer and the command line
use: ``submit`` a snippet and get a :class:`concurrent.futures.Future` of its
:class:`~snipcheck.model.Outcome`.  Work is spread over ``jobs`` daemon
threads, each waiting on one child process, so snippets run in parallel even
in a serial Sphinx build; daemon threads let Ctrl-C end the build at once
(the children are killed at exit, see :mod:`snipcheck.run.capture`).

A run is cached only if it finished in time and ended as its tags expect;
failed and timed-out runs are run again next time.  The cache key names the
runner kind that runs the snippet (see :func:`snipcheck.engine.cache.cache_key`).

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from snipcheck.engine.cache import CacheError, ResultCache, cache_key
from snipcheck.judge.compare import outcome_problem
from snipcheck.model import Outcome, RunResult, Snippet, Stamp
from snipcheck.run import Runner, make_runner, requirements
from snipcheck.run.capture import RunError
from snipcheck.run.python import HASH_SEED
from snipcheck.sources.chains import with_later
from snipcheck.sources.inputs import Digests
from snipcheck.sources.tags import resolved_seed

log = logging.getLogger("snipcheck")


@dataclass
class ExecutorConfig:
    """Settings of an :class:`Executor`.

    :param python: interpreter for Python snippets.
    :param stamp: probe stamp of that interpreter.
    :param cache: the result cache, or ``None`` to always run.
    :param jobs: worker threads (parallel runs); at least 1.
    :param timeout: default per-snippet timeout in seconds.
    :param output_limit: bytes of output kept per run.
    :param provides: features declared present (see :mod:`snipcheck.run.requirements`).
    :param runner: Python runner kind, ``"fork"`` or ``"subprocess"``.
    :param preload: modules the fork server imports once.
    :param build_dir: where Rust snippets are built.
    :param fork_min_runs: fewer Python runs than this in a build run as plain
        subprocesses (see :meth:`Executor.plan`); 0 always forks.
    :param memory_limit: memory limit of each process of a run in bytes
        (``RLIMIT_DATA``), unless the snippet's ``memory`` tag says otherwise;
        0 for none.
    :param env: variables passed through to every Python snippet
        (``snipcheck_env``), besides those its tags declare.
    :param files: ``(relative path, absolute path)`` of data files copied into
        every Python snippet's run directory (``snipcheck_depends``).
    :param seed: the seed of every Python run whose ``seed`` tag says
        nothing (``snipcheck_seed``); ``None``: fresh randomness.
    :param protect: folders no run may change (the project's sources,
        outputs and cache; see :func:`snipcheck.run.sandbox.protected_paths`).
    :param hash_seed: the hash secret of Python runs (``PYTHONHASHSEED``):
        the build's, or another for the runs that look for hash-order
        dependence (:mod:`snipcheck.pending.variation`).
    :param may_run: ``False``: run nothing; a snippet whose result is not in
        the cache gets an ``error`` outcome saying
        :data:`snipcheck.engine.chain_job.NO_RESULT` (a build
        whose results come from a merge of shards, ``snipcheck_execute = "merged"``).
    :param elsewhere: snippet id → the stamp of the environment a shard ran
        it in, where that is not ``stamp`` (a ``--provides`` shard on another
        machine, e.g. one with a GPU; read from the merge's record): its
        Python result is looked up under the key of that environment.
    """

    python: str
    stamp: Stamp
    cache: ResultCache | None
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    timeout: float = 60.0
    output_limit: int = 1 << 20
    provides: tuple[str, ...] = ()
    runner: str = "fork"
    preload: tuple[str, ...] = ("torch",)
    build_dir: Path | None = None
    fork_min_runs: int = 3
    memory_limit: int = 4 << 30
    env: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    seed: int | None = None
    protect: tuple[str, ...] = ()
    hash_seed: int = HASH_SEED
    may_run: bool = True
    elsewhere: Mapping[str, Stamp] = field(default_factory=dict)


class Executor:
    """Runs snippets in parallel, reusing cached results.

    :param config: see :class:`ExecutorConfig`.
    :param runner_factory: ``(language) -> Runner``; defaults to
        :func:`snipcheck.run.make_runner`.
    """

    def __init__(
        self, config: ExecutorConfig, runner_factory: Callable[[str], Runner] | None = None
    ) -> None:
        self.config = config
        self._kind = config.runner
        self._factory = runner_factory or (
            lambda language: make_runner(
                language,
                python=config.python,
                stamp=config.stamp,
                kind=self._kind,
                preload=config.preload,
                build_dir=config.build_dir,
                memory_limit=config.memory_limit or None,
                protect=config.protect,
                hash_seed=config.hash_seed,
            )
        )
        self._runners: dict[str, Runner] = {}
        self._futures: dict[tuple[str, str], Future[Outcome]] = {}
        self._lock = threading.Lock()
        # A job: one snippet and its future (and "resumed" for a held run), or
        # a chain's cells and theirs (see start_chains).
        # Longest first: (-declared timeout, order submitted, job); see _put.
        self._queue: queue.PriorityQueue[tuple[float, int, Any]] = queue.PriorityQueue()
        self._order = itertools.count()
        # chain -> each cell submitted (the whole snippet: two versions of a page differ) -> its future
        self._chains: dict[str, dict[Snippet, tuple[Snippet, Future[Outcome]]]] = {}
        self._started: dict[str, int] = {}  # chain -> cells it was started with
        # Runs held back until the runner kind is known (see hold_runs).
        self._holding = False
        self._held: list[tuple[Snippet, Future[Outcome]]] = []
        self._threads: list[threading.Thread] = []
        self.ran = 0
        self.cached = 0
        # time.monotonic() of the first job's start and the last one's end: the wall time of the work
        self._busy: tuple[float, float] | None = None
        self._count_lock = threading.Lock()
        self._digests = Digests()  # each declared data file is read once per build

    def key(self, snippet: Snippet, kind: str | None = None, stamp: Stamp | None = None) -> str:
        """The cache key of ``snippet`` run by runner ``kind`` (default: the
        kind this executor uses for its language) in the environment
        ``stamp`` (default: here, or where a shard ran it, see
        :attr:`ExecutorConfig.elsewhere`; a Python snippet's only)."""
        snippet = self.declared(snippet)
        if kind is None:
            kind = self._kind if snippet.language == "python" else snippet.language
        if stamp is None or snippet.language != "python":
            runner = self._runners.get(snippet.language)
            stamp = getattr(runner, "stamp", self.config.stamp) if runner is not None else self.config.stamp
            if snippet.language == "python":
                stamp = self.config.elsewhere.get(snippet.id, stamp)
        return cache_key(snippet, stamp, self.output_limit(snippet), runner=kind, digests=self._digests)

    def prepare(self, language: str) -> None:
        """Make the runner of ``language`` now, without running anything: a
        Rust snippet's key holds its runner's stamp (with ``rustc --version``),
        known once the runner exists (see :meth:`key`)."""
        self._runner(language)

    def output_limit(self, snippet: Snippet) -> int:
        """Bytes of output kept of a run of ``snippet``: its ``output-limit``
        tag, else ``snipcheck_output_limit``."""
        return snippet.tags.output_limit or self.config.output_limit

    def declared(self, snippet: Snippet) -> Snippet:
        """``snippet`` with the project-wide declared inputs (``snipcheck_env``,
        ``snipcheck_depends``) added to its own, and its seed resolved
        (its ``seed`` tag, else ``snipcheck_seed``: an ``int``, or ``None``
        for fresh randomness); Python snippets only."""
        cfg = self.config
        if snippet.language != "python":
            return snippet
        seed = resolved_seed(snippet.tags, cfg.seed)
        if seed != snippet.tags.seed:
            snippet = dataclasses.replace(snippet, tags=dataclasses.replace(snippet.tags, seed=seed))
        if not (cfg.env or cfg.files):
            return snippet
        env = tuple(dict.fromkeys(cfg.env + snippet.env))
        files = tuple(sorted(dict(cfg.files + snippet.files).items()))
        return dataclasses.replace(snippet, env=env, files=files)

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
            if snippet.language != "python" or requirements.missing(snippet.tags.requires, cfg.stamp, cfg.provides):
                continue
            for kind, absent in missing.items():
                if cfg.cache is None or not cfg.cache.path(self.key(snippet, kind)).exists():
                    absent.add(n)
        with self._lock:
            if self._kind == "fork" and 0 < len(missing["fork"]) < cfg.fork_min_runs and "python" not in self._runners:
                self._kind = "subprocess"
            if self._holding:
                self._release()
            if self._kind == cfg.runner:
                return len(missing[self._kind])
            return len(missing["fork"] & missing["subprocess"])

    def hold_runs(self) -> None:
        """Start taking submissions before :meth:`plan` knows the whole list
        (a cold build, while its pages are read): results in the cache are
        served at once, and Python snippets that must run wait until
        ``fork_min_runs`` of them are waiting (then they run, on the
        configured runner) or until :meth:`plan` decides the runner kind with
        the whole list."""
        with self._lock:
            if "python" not in self._runners:
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
            self._put((snippet, fut, "resumed"))
        self._held.clear()

    def lookup_kinds(self, snippet: Snippet) -> tuple[str, ...]:
        """Runner kinds whose cached results ``snippet`` may take in this
        build: the configured one, and the one it runs with (see :meth:`plan`)."""
        if snippet.language != "python":
            return (snippet.language,)
        return tuple(dict.fromkeys((self.config.runner, self._kind)))

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
                self._put((snippet, fut))
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
                self._put(("chain", [(snippet, fut)]))
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
                self._put(("chain", ordered))

    def _put(self, job: tuple[Any, ...]) -> None:
        """Queue ``job`` and start a worker thread if fewer than ``jobs`` run (lock held).

        Jobs whose snippets declare a longer ``timeout`` go first (the only
        sign of a long run before it has run once): a snippet that takes
        minutes then overlaps with the many short ones instead of coming
        last and leaving one core idle while it runs alone; among equals,
        the order of submission (page order) holds."""
        self._queue.put((-declared_length(job), next(self._order), job))
        if len(self._threads) < max(1, self.config.jobs):
            t = threading.Thread(target=self._work, name=f"snipcheck-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()

    def outcome(self, snippet: Snippet) -> Outcome:
        """Block until ``snippet`` has an outcome (submitting it if needed)."""
        fut = self.submit(snippet)
        if snippet.chain:
            self.start_chains()
        return fut.result()

    def map(self, snippets: Iterable[Snippet]) -> list[Outcome]:
        """Outcomes of ``snippets`` in order, all run in parallel."""
        futures = [self.submit(s) for s in snippets]
        self.start_chains()
        return [f.result() for f in futures]

    def cancel_pending(self) -> int:
        """Cancel the submitted snippets that have not started; return how many."""
        with self._lock:
            futures = [*self._futures.values(), *(fut for cells in self._chains.values() for _, fut in cells.values())]
        return sum(1 for fut in futures if fut.cancel())

    def close(self) -> None:
        """Stop the worker threads once the queue is empty, and the runners."""
        for _ in self._threads:
            self._queue.put((math.inf, next(self._order), None))  # after every job
        for runner in self._runners.values():
            close = getattr(runner, "close", None)
            if close is not None:
                close()

    @property
    def wall(self) -> float:
        """Seconds from the start of the first job (a run, a cache look-up or a
        chain) to the end of the last one so far: the wall time of the work,
        less than the sum of the runs' durations when several run at once.
        A job counts once its worker is done with it, just after its outcome
        is handed over."""
        busy = self._busy
        return busy[1] - busy[0] if busy else 0.0

    def _work(self) -> None:
        while True:
            item = self._queue.get()[2]
            if item is None:
                return
            start = time.monotonic()
            try:
                self._job(item)
            finally:
                end = time.monotonic()
                with self._count_lock:
                    busy = self._busy or (start, end)
                    self._busy = (min(busy[0], start), max(busy[1], end))

    def _job(self, item: tuple[Any, ...]) -> None:
        """Do one queued job (see :meth:`_put`): its futures get their outcomes."""
        if item[0] == "chain":
            run_chain_job(self, item[1])
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

    def _runner(self, language: str) -> Runner:
        with self._lock:
            if language not in self._runners:
                self._runners[language] = self._factory(language)
            return self._runners[language]

    def _execute(self, snippet: Snippet, fut: Future[Outcome] | None = None) -> Outcome | None:
        """The outcome of ``snippet``: from the cache, or a run; ``None`` when
        its run is held (see :meth:`hold_runs`), ``fut`` then waits."""
        cfg = self.config
        implied = ("cargo",) if snippet.language == "rust" else ()
        missing = requirements.missing(snippet.tags.requires + implied, cfg.stamp, cfg.provides)
        if missing:
            return Outcome(None, "not-run", missing)
        snippet = self.declared(snippet)
        timeout = snippet.tags.timeout or cfg.timeout
        notes: list[str] = []
        keys: dict[str, str] = {}  # runner kind -> key: each is worked out once
        for kind in self.lookup_kinds(snippet) if cfg.cache is not None else ():
            keys[kind] = self.key(snippet, kind)
            cached = self._cached(keys[kind], notes)
            if cached is not None:
                return Outcome(cached, "cache", notes=tuple(notes))
        if not cfg.may_run:
            if snippet.language != "python" and cfg.cache is not None:
                self._runner(snippet.language)  # another language's key holds its runner's stamp (see below)
                cached = self._cached(self.key(snippet), notes)
                if cached is not None:
                    return Outcome(cached, "cache", notes=tuple(notes))
            return Outcome(None, "error", notes=(*notes, NO_RESULT))
        if fut is not None and self._hold(snippet, fut):
            return None
        runner = self._runner(snippet.language)  # the kind is known now
        if cfg.cache is None:
            self._count("ran")
            return Outcome(runner.run(snippet, timeout=timeout, output_limit=self.output_limit(snippet)), "run")
        # A Python runner's stamp is the configured one, so the key looked up
        # is the key to store under; another language's runner has a stamp
        # of its own, known once it exists.
        key = keys.get(self._kind) if snippet.language == "python" else None
        key = key or self.key(snippet)
        lock = self._lock_entry(key, notes)
        try:
            cached = self._cached(key, notes)  # another build may have run it meanwhile
            if cached is not None:
                return Outcome(cached, "cache", notes=tuple(notes))
            result = runner.run(snippet, timeout=timeout, output_limit=self.output_limit(snippet))
            self._count("ran")
            if _cacheable(snippet, result):
                try:
                    cfg.cache.put(key, snippet.id, result)
                except OSError as exc:
                    # strerror, not str(exc): that names the temporary file too
                    notes.append(
                        f"could not write the cache entry {cfg.cache.path(key)} "
                        f"({exc.strerror or exc}); the snippet will run again next build"
                    )
        finally:
            if lock is not None:
                lock.release()
        log.debug("ran %s in %.2f s", snippet.id, result.duration)
        return Outcome(result, "run", notes=tuple(notes))

    def _lock_entry(self, key: str, notes: list[str]) -> FileLock | None:
        """The held lock of ``key``, or ``None`` if the cache cannot be locked.

        A cache directory that cannot be written (read-only, or a file in the
        way) must cost the cache, not the run: an ``OSError`` here used to
        reach :meth:`_work` and be reported as a run that could not start.
        """
        assert self.config.cache is not None
        try:
            lock = self.config.cache.lock(key)
            lock.acquire()
        except OSError as exc:
            notes.append(f"cannot lock the cache entry ({exc}); the snippet ran without the lock")
            return None
        return lock

    def _cached(self, key: str, notes: list[str]) -> RunResult | None:
        assert self.config.cache is not None
        try:
            result = self.config.cache.get(key)
        except CacheError as exc:
            if str(exc) not in notes:  # the check under the lock finds it again
                notes.append(str(exc))
            try:
                self.config.cache.discard(key)
            except OSError:
                # e.g. a directory in its place: the snippet still runs, and
                # writing its result fails with a note of its own
                pass
            return None
        if result is not None:
            self._count("cached")
        return result

    @staticmethod
    def cacheable(snippet: Snippet, result: RunResult) -> bool:
        """Whether ``result`` may be stored: it finished in time and ended as ``snippet``'s tags expect."""
        return _cacheable(snippet, result)

    def _count(self, name: str) -> None:
        with self._count_lock:
            setattr(self, name, getattr(self, name) + 1)


def declared_length(job: tuple[Any, ...]) -> float:
    """The longest ``timeout`` a job's snippets declare (0 for none): a single
    snippet's ``(snippet, future)``, or a chain's ``("chain", [(cell, future), ...])``."""
    cells = [entry[0] for entry in job[1]] if job[0] == "chain" else [job[0]]
    return max((cell.tags.timeout or 0.0) for cell in cells)


def _cacheable(snippet: Snippet, result: RunResult) -> bool:
    # A run stopped at a timeout or for its output did not end: it is not kept.
    return not result.timed_out and not result.stopped_by_output and outcome_problem(snippet.tags, result) is None


from snipcheck.engine.chain_job import NO_RESULT, run_chain_job
