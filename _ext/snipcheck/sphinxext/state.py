"""Per-process build state: resolved settings, the probe stamp and the executor.

The state hangs off the Sphinx application object, not the environment: it
holds threads and futures, which neither pickle nor survive the ``fork`` of a
parallel (``-j``) build.  The executor is therefore created lazily in each
process that needs one (keyed by process id).
"""

from __future__ import annotations

import dataclasses
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snipcheck.engine.cache import ResultCache
from snipcheck.engine.execute import Executor, executor_for
from snipcheck.model import Snippet, Stamp
from snipcheck.run.environment import ProbeError, probe_environment
from snipcheck.run.fingerprint import Fingerprint
from snipcheck.settings import VALUES, Settings
from snipcheck.shard.files import MERGED, elsewhere_stamps, read_merged
from snipcheck.sources.placement import CodeBlock
from snipcheck.sources.snippets import find
from snipcheck.sphinxext.log import bridge_core_logging, warn
from snipcheck.sphinxext.progress import Progress
from snipcheck.sphinxext.record_hint import record_command

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


@dataclass
class BuildState:
    """What one build process knows about snippets.

    :param settings: the resolved ``snipcheck_*`` settings.
    :param stamp: probe stamp of the snippet interpreter; ``None`` if the
        probe failed or execution is off.
    :param fingerprint: the environment fingerprint of the snippet
        interpreter (computed once per build); ``None`` when ``stamp`` is.
    :param use_cache: ``False`` when the cache directory cannot be written:
        snippets then run uncached.
    """

    settings: Settings
    stamp: Stamp | None
    fingerprint: Fingerprint | None = None
    use_cache: bool = True
    read_now: frozenset[str] = frozenset()  # documents read in this build
    main_pid: int = field(default_factory=os.getpid)  # the build's own process (not a -j reader)
    planned: bool = False  # the executor has planned this build's runs (directives may start runs)
    deferred: bool = False  # pages' snippets are judged as the pages are written (see results)
    switch_interval: float = 0.005  # the thread switch interval to restore when they all are
    progress: Progress | None = field(default=None, repr=False)  # one line across the judging calls (see results)
    app: weakref.ref[Sphinx] | None = field(default=None, repr=False)  # for post-transforms (``SphinxTransform.app`` is deprecated)
    protect: tuple[Path, ...] = ()  # the build's source, output and doctree folders: read-only to runs
    merge: dict[str, Any] | None = None  # snipcheck_execute = "merged": the merge's record (snipcheck.shard.files.MERGED)
    # snippet id -> the environment a --provides shard of the merge ran it in, where not this one
    elsewhere: dict[str, Stamp] = field(default_factory=dict)
    _executor: Executor | None = field(default=None, repr=False)
    _pid: int = field(default=0, repr=False)

    @property
    def root(self) -> Path:
        return self.settings.root

    @property
    def execute(self) -> bool:
        """Whether snippets run in this build."""
        return self.settings.execute and self.stamp is not None

    def load(self, snippet_id: str, code: CodeBlock | None = None) -> Snippet:
        """Load a snippet: from ``code`` written in the page, else its file; see
        :func:`snipcheck.sources.snippets.find` (raises ``SnippetError``)."""
        return find(snippet_id, code, self.settings.snippets_dir, self.settings.root)

    @property
    def in_main_process(self) -> bool:
        """Whether this is the build's own process, not a forked parallel reader."""
        return os.getpid() == self.main_pid

    @property
    def wall(self) -> float:
        """Seconds of wall time the executor of this process has worked
        (:attr:`snipcheck.engine.execute.Executor.wall`); 0 when it has none."""
        if self._executor is None or self._pid != os.getpid():
            return 0.0
        return self._executor.wall

    @property
    def executor(self) -> Executor:
        """This process's executor (created on first use after a fork)."""
        if self._executor is None or self._pid != os.getpid():
            assert self.stamp is not None
            # A merged build runs nothing, and provides what the merge's shards provided (their results are cached).
            provided = tuple(self.merge.get("provides", ())) if self.merge else ()
            self._executor = executor_for(
                self.settings, self.stamp, use_cache=self.use_cache, protect=self.protect, may_run=not self.settings.merged,
                provides=provided, elsewhere=self.elsewhere,
            )  # fmt: skip
            self._pid = os.getpid()
        return self._executor


def register(app: Sphinx) -> None:
    """Create the state at ``builder-inited``; close its executor at ``build-finished``."""
    app.connect("builder-inited", _init, priority=400)
    app.connect("build-finished", _close, priority=900)


def get(app: Sphinx) -> BuildState:
    """The build state of ``app`` (set up at ``builder-inited``)."""
    return app._snipcheck_state  # type: ignore[attr-defined,no-any-return]


# Directives and transforms reach the state through their environment
# (``BuildEnvironment.app`` is deprecated).  Keyed weakly by the environment
# object, which a forked parallel reader shares with its parent.
_by_env: weakref.WeakKeyDictionary[BuildEnvironment, BuildState] = weakref.WeakKeyDictionary()


def for_env(env: BuildEnvironment) -> BuildState:
    """The build state of the build that ``env`` belongs to."""
    return _by_env[env]


def _init(app: Sphinx) -> None:
    values = {name: getattr(app.config, name) for name in VALUES}
    settings, _ = Settings.from_mapping(Path(app.confdir), values, Path(app.doctreedir))  # validated at config-inited
    settings = dataclasses.replace(settings, record_command=record_command(settings.record_command, Path(app.confdir), Path.cwd()))
    stamp = fingerprint = None
    use_cache = True
    if settings.execute:
        # Only a build that runs snippets takes over the core's log: the
        # placement index's application (the command line, the pytest plugin)
        # runs none, and must leave the core's records to whoever runs them,
        # or each would be logged twice (once more through Sphinx's log).
        bridge_core_logging()
        # A read-only, full or blocked cache folder costs the cache, not the build.
        unwritable = ResultCache(settings.cache_dir).unwritable()
        if unwritable:
            warn("cache", f"{unwritable}; snippets run without the cache in this build", None)
            use_cache = False
        try:
            found = probe_environment(settings.python, settings.cache_dir if use_cache else None)
        except ProbeError as exc:
            warn("config", f"snippets will not run: {exc}", None)
        else:
            stamp, fingerprint = found.stamp, found.fingerprint
            for note in found.notes:
                warn("cache", note, None)
            why = settings.preload_problem(stamp) if settings.runner == "fork" else None
            if why:
                warn("config", f"{Path(app.confdir) / 'conf.py'}: {why}", None)
    merge = None
    elsewhere: dict[str, Stamp] = {}
    if settings.merged:
        try:
            merge = read_merged(settings.cache_dir)
            elsewhere = elsewhere_stamps(merge) if merge else {}
        except ValueError as exc:
            warn("cache", f"{exc}; snipcheck_execute = 'merged' runs nothing, so no snippet has a result", None)
        else:
            if merge is None:
                warn(
                    "cache",
                    f"snipcheck_execute = 'merged', but {settings.cache_dir / MERGED} does not exist: this build runs "
                    "nothing, so a snippet has a result only if the cache holds one; run snipcheck execute --merge first",
                    None,
                )
    protect = (Path(app.srcdir), Path(app.outdir), Path(app.doctreedir))
    app._snipcheck_state = BuildState(  # type: ignore[attr-defined]
        settings, stamp, fingerprint, use_cache, app=weakref.ref(app), protect=protect, merge=merge,
        elsewhere=elsewhere,
    )
    _by_env[app.env] = app._snipcheck_state  # type: ignore[attr-defined]


def _close(app: Sphinx, exception: BaseException | None) -> None:
    state = getattr(app, "_snipcheck_state", None)
    if state is not None and state._executor is not None:
        state._executor.close()
