"""What an executor is told: :class:`ExecutorConfig`, plain values.

:func:`config_for` makes one from a project's settings (anything shaped like
:class:`RunSettings`, which :class:`snipcheck.settings.Settings` is: this
layer does not import the settings, which lie above it) with the engine's
own rules: results are cached only for runs under the build's hash seed,
and Rust snippets are built under the cache folder.

Pure core: standard library, :mod:`snipcheck.model`, :mod:`snipcheck.run`,
:mod:`snipcheck.engine.cache`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from snipcheck.engine.cache import ResultCache
from snipcheck.model import Stamp
from snipcheck.run.python import HASH_SEED

#: The note of a snippet (or cell) without a result in a build that runs
#: nothing (``ExecutorConfig.may_run`` off: ``snipcheck_execute = "merged"``).
NO_RESULT = (
    "no result in the cache, and this build runs nothing (snipcheck_execute = 'merged'): no shard ran it "
    "as it is now; run the shards and snipcheck execute --merge again"
)


#: ``snipcheck_memory_limit``'s default (bytes): results stored under it are keyed without it.
DEFAULT_MEMORY_LIMIT = 4 << 30


@dataclass
class ExecutorConfig:
    """Settings of an :class:`~snipcheck.engine.execute.Executor`.

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
        subprocesses (see :meth:`snipcheck.engine.execute.Executor.plan`); 0 always forks.
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
        :data:`NO_RESULT` (a build
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
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    env: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    seed: int | None = None
    protect: tuple[str, ...] = ()
    hash_seed: int = HASH_SEED
    may_run: bool = True
    elsewhere: Mapping[str, Stamp] = field(default_factory=dict)


class RunSettings(Protocol):
    """The settings :func:`config_for` reads (:class:`snipcheck.settings.Settings` has them)."""

    @property
    def python(self) -> str: ...
    @property
    def cache_dir(self) -> Path: ...
    @property
    def jobs(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def output_limit(self) -> int: ...
    @property
    def provides(self) -> tuple[str, ...]: ...
    @property
    def runner(self) -> str: ...
    @property
    def fork_min_runs(self) -> int: ...
    @property
    def memory_limit(self) -> int: ...
    @property
    def env(self) -> tuple[str, ...]: ...
    @property
    def seed(self) -> int | None: ...

    def preload_modules(self, stamp: Stamp) -> tuple[str, ...]:
        """Modules the fork server imports once, for an interpreter of ``stamp``."""
        ...

    def declared_files(self) -> tuple[tuple[str, str], ...]:
        """``(relative path, absolute path)`` of the project-wide data files."""
        ...

    def protected(self, *extra: Path) -> tuple[str, ...]:
        """The folders no run may change, ``extra`` among them."""
        ...


def config_for(
    settings: RunSettings,
    stamp: Stamp,
    *,
    use_cache: bool = True,
    protect: tuple[Path, ...] = (),
    hash_seed: int = HASH_SEED,
    may_run: bool = True,
    provides: tuple[str, ...] = (),
    elsewhere: Mapping[str, Stamp] | None = None,
) -> ExecutorConfig:
    """The configuration of an executor for snippets under ``settings``.

    :param stamp: the probe stamp of ``settings.python``.
    :param use_cache: ``False``: run everything, keep nothing.
    :param protect: folders runs must not change besides those of
        ``settings.protected()`` (a Sphinx build's source, output and doctree folders).
    :param hash_seed: the hash secret of its Python runs (another than the
        build's only for :mod:`snipcheck.pending.variation`, never cached).
    :param may_run: ``False`` for a build that takes every result from a
        merge of shards: it runs nothing (see :class:`ExecutorConfig`).
    :param provides: requirements provided besides ``settings.provides``
        (a shard's ``--provides``; those a merge's shards provided).
    :param elsewhere: snippet id → the environment a shard ran it in,
        where not this one (see :class:`ExecutorConfig`).
    """
    return ExecutorConfig(
        python=settings.python,
        stamp=stamp,
        # the cache key holds no hash seed: only the build's runs are kept
        cache=ResultCache(settings.cache_dir) if use_cache and hash_seed == HASH_SEED else None,
        jobs=settings.jobs,
        timeout=settings.timeout,
        output_limit=settings.output_limit,
        provides=tuple(dict.fromkeys(settings.provides + provides)),
        runner=settings.runner,
        preload=settings.preload_modules(stamp),
        build_dir=settings.cache_dir / "rust",
        fork_min_runs=settings.fork_min_runs,
        memory_limit=settings.memory_limit,
        env=settings.env,
        files=settings.declared_files(),
        seed=settings.seed,
        protect=settings.protected(*protect),
        hash_seed=hash_seed,
        may_run=may_run,
        elsewhere=dict(elsewhere or {}),
    )
