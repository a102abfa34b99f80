"""The result cache as a layer around the runners: one snippet's outcome.

:class:`Runs` gives a snippet its :class:`~snipcheck.model.Outcome`: not run
when a requirement is missing, else from the cache (under the key of every
runner kind whose results this build may take, see :meth:`Runs.lookup_kinds`),
else a run by its language's runner, stored when it may be (it finished in
time and ended as its tags expect: :func:`cacheable`).  It owns the runners
(made on first use), the per-build digests of declared data files, and the
counts of runs and cache hits.  Scheduling (threads, priorities, holding
runs back, chains) is :mod:`snipcheck.engine.execute`'s; a chain's cells go
through :mod:`snipcheck.engine.chain_job`, which uses the same look-ups.

A run is cached only if it finished in time and ended as its tags expect;
failed and timed-out runs are run again next time.  The cache key names the
runner kind that runs the snippet (see :func:`snipcheck.engine.cache.cache_key`).

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable

from snipcheck.engine.cache import CacheError, cache_key
from snipcheck.engine.config import DEFAULT_MEMORY_LIMIT, NO_RESULT, ExecutorConfig
from snipcheck.engine.key_lock import Lock
from snipcheck.judge.compare import outcome_problem
from snipcheck.model import Outcome, RunResult, Snippet, Stamp
from snipcheck.run import Runner, make_runner, requirements
from snipcheck.sources.inputs import Digests
from snipcheck.sources.tags import WALL_FACTOR, resolved_seed

log = logging.getLogger("snipcheck")


class Runs:
    """Outcomes of snippets through the cache and the runners.

    :param config: see :class:`~snipcheck.engine.config.ExecutorConfig`.
    :param runner_factory: ``(language) -> Runner``; defaults to
        :func:`snipcheck.run.make_runner` with ``config``'s values and the
        Python runner kind :attr:`kind`.
    """

    def __init__(self, config: ExecutorConfig, runner_factory: Callable[[str], Runner] | None = None) -> None:
        self.config = config
        #: The Python runner kind runs use: the configured one, until
        #: :meth:`snipcheck.engine.execute.Executor.plan` switches it before
        #: the Python runner exists.
        self.kind = config.runner
        self._factory = runner_factory or self._make_runner
        self._runners: dict[str, Runner] = {}
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._digests = Digests()  # each declared data file is read once per build
        self.ran = 0
        self.cached = 0

    def _make_runner(self, language: str) -> Runner:
        cfg = self.config
        return make_runner(
            language,
            python=cfg.python,
            stamp=cfg.stamp,
            kind=self.kind,
            preload=cfg.preload,
            build_dir=cfg.build_dir,
            memory_limit=cfg.memory_limit or None,
            protect=cfg.protect,
            hash_seed=cfg.hash_seed,
        )

    def runner(self, language: str) -> Runner:
        """The runner of ``language``, made on first use (the Python one
        with the runner kind in force then)."""
        with self._lock:
            if language not in self._runners:
                self._runners[language] = self._factory(language)
            return self._runners[language]

    def has_runner(self, language: str) -> bool:
        """Whether the runner of ``language`` exists already."""
        with self._lock:
            return language in self._runners

    def close(self) -> None:
        """Stop the runners (a fork server, say)."""
        for runner in self._runners.values():
            close = getattr(runner, "close", None)
            if close is not None:
                close()

    def key(self, snippet: Snippet, kind: str | None = None, stamp: Stamp | None = None) -> str:
        """The cache key of ``snippet`` run by runner ``kind`` (default: the
        kind used for its language) in the environment ``stamp`` (default:
        here, or where a shard ran it, see :attr:`ExecutorConfig.elsewhere`;
        a Python snippet's only)."""
        snippet = self.declared(snippet)
        if kind is None:
            kind = self.kind if snippet.language == "python" else snippet.language
        if stamp is None or snippet.language != "python":
            runner = self._runners.get(snippet.language)
            stamp = getattr(runner, "stamp", self.config.stamp) if runner is not None else self.config.stamp
            if snippet.language == "python":
                stamp = self.config.elsewhere.get(snippet.id, stamp)
        return cache_key(snippet, stamp, self.output_limit(snippet), runner=kind, digests=self._digests,
                         memory_limit=self.keyed_memory_limit(snippet))  # fmt: skip

    def keyed_memory_limit(self, snippet: Snippet) -> int | None:
        """``snipcheck_memory_limit`` where it decides ``snippet``'s limit (no
        ``memory`` tag; Python) and is not the default: a result stored under
        one limit is not served under another (a run that fits in 4 GiB can
        fail in 1)."""
        if snippet.language != "python" or getattr(snippet.tags, "memory", None):
            return None
        limit = self.config.memory_limit
        return None if limit == DEFAULT_MEMORY_LIMIT else limit

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

    def lookup_kinds(self, snippet: Snippet) -> tuple[str, ...]:
        """Runner kinds whose cached results ``snippet`` may take in this
        build: the configured one, and the one it runs with (see
        :meth:`snipcheck.engine.execute.Executor.plan`)."""
        if snippet.language != "python":
            return (snippet.language,)
        return tuple(dict.fromkeys((self.config.runner, self.kind)))

    def missing(self, snippet: Snippet, implied: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The requirements of ``snippet`` (and ``implied`` ones) this
        environment lacks (see :mod:`snipcheck.run.requirements`)."""
        return requirements.missing(snippet.tags.requires + implied, self.config.stamp, self.config.provides)

    def timeout(self, snippet: Snippet) -> float:
        """Seconds ``snippet`` may run: its ``timeout`` tag, else ``snipcheck_timeout``."""
        return snippet.tags.timeout or self.config.timeout

    def from_cache(self, key: str, notes: list[str], snippet: Snippet | None = None) -> RunResult | None:
        """The result stored under ``key``, counted as a cache hit; ``None``
        when there is none or it cannot be used (then it is discarded and
        ``notes`` says why, once), or when the run it holds took longer than
        ``snippet`` may run now (the key leaves the timeout out: a result is
        good under any longer one; under a shorter one it runs again, and
        may time out)."""
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
        if result is not None and snippet is not None and not within(result, self.timeout(snippet)):
            return None
        if result is not None:
            self.count("cached")
        return result

    def count(self, name: str) -> None:
        """Add one to the count ``name`` (``"ran"`` or ``"cached"``)."""
        with self._count_lock:
            setattr(self, name, getattr(self, name) + 1)

    def look_up(self, snippet: Snippet, notes: list[str]) -> tuple[Outcome | None, dict[str, str]]:
        """``snippet``'s outcome when it needs no run (a requirement is
        missing, its result is in the cache, or this build runs nothing),
        else ``None``; and the keys worked out on the way (runner kind ->
        key).  ``snippet`` is as :meth:`declared` makes it."""
        cfg = self.config
        missing = self.missing(snippet, ("cargo",) if snippet.language == "rust" else ())
        if missing:
            return Outcome(None, "not-run", missing), {}
        keys: dict[str, str] = {}  # runner kind -> key: each is worked out once
        for kind in self.lookup_kinds(snippet) if cfg.cache is not None else ():
            keys[kind] = self.key(snippet, kind)
            cached = self.from_cache(keys[kind], notes, snippet)
            if cached is not None:
                return Outcome(cached, "cache", notes=tuple(notes)), keys
        if not cfg.may_run:
            if snippet.language != "python" and cfg.cache is not None:
                self.runner(snippet.language)  # another language's key holds its runner's stamp (see run)
                cached = self.from_cache(self.key(snippet), notes, snippet)
                if cached is not None:
                    return Outcome(cached, "cache", notes=tuple(notes)), keys
            return Outcome(None, "error", notes=(*notes, NO_RESULT)), keys
        return None, keys

    def run(self, snippet: Snippet, keys: dict[str, str], notes: list[str]) -> Outcome:
        """Run ``snippet`` (as :meth:`declared` makes it; not in the cache
        under ``keys``, see :meth:`look_up`) and store its result when it
        may be stored, under the entry's lock: another build that ran it
        meanwhile is taken instead."""
        cfg = self.config
        timeout = self.timeout(snippet)
        runner = self.runner(snippet.language)  # the kind is known now
        if cfg.cache is None:
            self.count("ran")
            return Outcome(runner.run(snippet, timeout=timeout, output_limit=self.output_limit(snippet)), "run")
        # A Python runner's stamp is the configured one, so the key looked up
        # is the key to store under; another language's runner has a stamp
        # of its own, known once it exists.
        key = keys.get(self.kind) if snippet.language == "python" else None
        key = key or self.key(snippet)
        lock = self._lock_entry(key, notes)
        try:
            cached = self.from_cache(key, notes, snippet)  # another build may have run it meanwhile
            if cached is not None:
                return Outcome(cached, "cache", notes=tuple(notes))
            result = runner.run(snippet, timeout=timeout, output_limit=self.output_limit(snippet))
            self.count("ran")
            if cacheable(snippet, result):
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

    def _lock_entry(self, key: str, notes: list[str]) -> Lock | None:
        """The held lock of ``key``, or ``None`` if the cache cannot be locked.

        A cache directory that cannot be written (read-only, or a file in the
        way) must cost the cache, not the run: an ``OSError`` here used to
        reach the worker and be reported as a run that could not start.
        """
        assert self.config.cache is not None
        try:
            lock = self.config.cache.lock(key)
            lock.acquire()
        except OSError as exc:
            notes.append(f"cannot lock the cache entry ({exc}); the snippet ran without the lock")
            return None
        return lock


def cacheable(snippet: Snippet, result: RunResult) -> bool:
    """Whether ``result`` may be stored: it finished in time and ended as ``snippet``'s tags expect.

    A run stopped at a timeout or for its output did not end: it is not kept."""
    return not result.timed_out and not result.stopped_by_output and outcome_problem(snippet.tags, result) is None


def within(result: RunResult, timeout: float) -> bool:
    """Whether the run ``result`` holds would have ended within ``timeout``
    seconds: its CPU seconds within it and its wall-clock time within
    :data:`~snipcheck.sources.tags.WALL_FACTOR` times it, where the runner
    counted CPU time; its wall-clock time within it otherwise."""
    if result.cpu is not None:
        return result.cpu <= timeout and result.duration <= WALL_FACTOR * timeout
    return result.duration <= timeout
