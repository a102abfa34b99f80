"""Run a Python snippet as ``python snippets/<id>.py`` in a fresh process.

Every run gets the fixed environment of the design: a fresh temporary working
directory holding a copy of the snippet at ``snippets/<id>.py``, stdin at
end-of-file, a UTF-8 locale (``C.UTF-8``), ``TZ=UTC``, default warning
filters, a private ``HOME`` and ``TMPDIR``, and no other variable but those
passed through (:func:`child_environment`): no ``PYTHON*`` variable, so the
interpreter configures itself as ``python file.py`` does (UTF-8 mode off,
stdout errors ``surrogateescape``, bytecode written).  Its stdout and stderr
are what a terminal run gets: line-buffered text streams over buffered
writers (``_snipcheck_child.install``).  The one fixed setting that plain
python does not have is the hash secret, that of :data:`HASH_SEED` (a fork
server's is fixed when it starts, and a build must not vary with it): it is
given to the interpreter as ``PYTHONHASHSEED`` and taken out of the
snippet's ``os.environ`` before its first line, so the processes it starts
hash at random as in plain python; ``record`` runs an output again with
another seed to find outputs that depend on it (see ``DIFFERENCES["hash
seed"]``).  The run directory is removed afterwards (by the run's
supervisor, so also when the build is killed), so nothing a snippet writes
lands in the repository.

The run directory's path is random, and that variation is ours, not the
snippet's: in the captured output, a path under it reads relative to it
(``snippets/<id>.py``, as ``python snippets/<id>.py`` run from the project
root shows it), and the directory itself reads :data:`RUN_DIR_NAME`
(``print(os.getcwd())`` prints ``[CWD]``, the redaction snapbox and trycmd
use), so such an output is the same on every run (see :func:`output_rewrite`).

The process tree of a run: the build starts a supervisor
(``python -I -S bootstrap/_snipcheck_supervise.py``), as process 1 of a new
PID namespace where the kernel allows it (:mod:`snipcheck.run.sandbox`);
the supervisor starts the snippet's interpreter.  ``os.getppid()`` of the
snippet is therefore the supervisor, never the build.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from snipcheck.files import resolved_folder
from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.run import compile_cache, sandbox
from snipcheck.run.capture import Captured, Spawner, Streams, run_captured, run_captured_cells
from snipcheck.run.stopping import forget_run_dir, refuse_if_stopping, track_run_dir

BOOTSTRAP_DIR = str(Path(__file__).parent / "bootstrap")
SUPERVISOR = str(Path(BOOTSTRAP_DIR) / "_snipcheck_supervise.py")
#: Runs a chain's cells in one interpreter (the subprocess runner), and the
#: variable that tells ``sitecustomize`` so.
CELLS = str(Path(BOOTSTRAP_DIR) / "_snipcheck_cells.py")
CELLS_VAR = "SNIPCHECK_CELLS"
#: The seed of a seeded run, for ``sitecustomize`` (see :func:`seeded`).
SEED_VAR = "SNIPCHECK_SEED"
#: Variables passed through from the parent environment, when set.
PASSTHROUGH = ("PATH", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "SYSTEMROOT")
#: The hash secret of every build run (``PYTHONHASHSEED``), and those of the
#: runs ``record`` makes again of an output to find hash-order dependence:
#: several, since a set of two strings keeps its order under one other seed
#: about one time in two (measured on 1,500 random pairs: 48 %; under all four
#: of these, 6.7 %; three strings: 17 % and 0.2 %).
HASH_SEED = 0
OTHER_HASH_SEEDS = (4005, 1, 2, 3)
#: Variable of the interpreter's start only: ``sitecustomize`` (or the fork
#: server's request) keeps it out of the snippet's environment.
HASH_SEED_VAR = "PYTHONHASHSEED"
#: How the run directory itself reads in captured output (see the module docstring).
RUN_DIR_NAME = "[CWD]"
#: The default memory limit of a run (bytes; ``snipcheck_memory_limit``).
DEFAULT_MEMORY_LIMIT = 4 << 30


def child_environment(run_dir: str, declared: tuple[str, ...] = ()) -> dict[str, str]:
    """The fixed environment of a snippet run (see the module docstring), as
    the snippet's ``os.environ`` shows it, plus ``PYTHONPATH`` (the bootstrap
    directory, for ``sitecustomize``, which removes it; the fork runner drops it).

    :param declared: further variables passed through, when set: those the
        snippet declares (``Snippet.env``); the fixed ones below always win.
    """
    env = {k: os.environ[k] for k in PASSTHROUGH + tuple(declared) if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(
        {
            "HOME": os.path.join(run_dir, "home"),
            "TMPDIR": os.path.join(run_dir, "tmp"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TZ": "UTC",
            "PYTHONPATH": BOOTSTRAP_DIR,
        }
    )
    return env


def interpreter_environment(env: Mapping[str, str], hash_seed: int = HASH_SEED) -> dict[str, str]:
    """``env`` with the hash secret for the interpreter's start (``PYTHONHASHSEED``)."""
    return {**env, HASH_SEED_VAR: str(hash_seed)}


def output_rewrite(run_dir: str) -> dict[str, str]:
    """The exact substrings of captured output rewritten for ``run_dir``, in
    order: a path under it becomes relative to it, then the directory itself
    reads :data:`RUN_DIR_NAME`."""
    return {run_dir + os.sep: "", run_dir: RUN_DIR_NAME}


def _inside(run_dir: str, rel: str) -> Path:
    """``run_dir / rel``, created folders included, refusing any path that
    would land outside ``run_dir`` (absolute, or climbing out with ``..``).

    The check is on the path's text: ``run_dir`` is a fresh directory that
    holds only what :func:`prepare_chain_dir` writes (plain files and
    folders, never a link), so no link inside it can lead out.  (Resolving
    each path on disk took ~60 us a run.)

    :raises ValueError: for such a path (a bug upstream: shown paths are relative).
    """
    norm = os.path.normpath(rel)
    if os.path.isabs(rel) or norm == os.pardir or norm.startswith(os.pardir + os.sep):
        raise ValueError(f"refusing to write {rel!r} outside the run directory {run_dir}")
    target = os.path.join(run_dir, norm)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    return Path(target)


#: Free space a RAM-backed folder needs to hold run directories (bytes).
_RAM_DIR_MIN_FREE = 2 << 30
_run_root: dict[str, str | None] = {}


def run_root() -> str | None:
    """Where run directories go: ``$TMPDIR`` when it is set (as
    :func:`tempfile.mkdtemp` does); otherwise, when the default temporary
    folder is on a disk and ``/dev/shm`` is a tmpfs with at least 2 GiB free,
    ``/dev/shm`` (making and removing a run directory there takes ~30 µs
    instead of ~0.8 ms on a disk, for every run); else the default.
    Worked out once per process; ``None`` means :mod:`tempfile`'s choice."""
    if "root" not in _run_root:
        _run_root["root"] = None
        if not os.environ.get("TMPDIR") and sys.platform.startswith("linux"):
            try:
                default = tempfile.gettempdir()
                if _fs_type("/dev/shm") == "tmpfs" and _fs_type(default) != "tmpfs":
                    st = os.statvfs("/dev/shm")
                    if st.f_bavail * st.f_frsize >= _RAM_DIR_MIN_FREE and os.access("/dev/shm", os.W_OK):
                        _run_root["root"] = "/dev/shm"
            except OSError:
                pass
    return _run_root["root"]


def _fs_type(path: str) -> str | None:
    """The file system type of the mount ``path`` is on (``/proc/self/mounts``)."""
    real = os.path.realpath(path)
    best, kind = "", None
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            inside = len(fields) >= 3 and (real == fields[1] or real.startswith(fields[1].rstrip("/") + "/"))
            if inside and len(fields[1]) >= len(best):
                best, kind = fields[1], fields[2]
    return kind


def prepare_run_dir(snippet: Snippet) -> tuple[str, str]:
    """Create a fresh run directory holding the snippet at its shown path, its
    helper modules beside it and its declared data files (``Snippet.files``)
    at their paths relative to the project root.  Nothing is written outside it.

    :return: ``(run_dir, relative_script_path)``.
    :raises OSError: if a declared data file cannot be copied.
    """
    run_dir, (script,) = prepare_chain_dir((snippet,))
    return run_dir, script


def prepare_chain_dir(cells: Sequence[Snippet]) -> tuple[str, list[str]]:
    """:func:`prepare_run_dir` for the cells of a chain, which share one run
    directory (as a notebook's cells share a working directory).  A cell
    whose ``path`` is ``""`` (the mark that runs nothing) writes no file.

    :return: ``(run_dir, each cell's relative script path)``.
    :raises OSError: if a declared data file cannot be copied.
    """
    made = tempfile.mkdtemp(prefix="snipcheck-", dir=run_root())
    run_dir = os.path.join(resolved_folder(os.path.dirname(made)), os.path.basename(made))  # a fresh folder: no link
    track_run_dir(run_dir)
    try:
        for snippet in (cell for cell in cells if cell.path):
            for rel, source_path in snippet.files:
                shutil.copyfile(source_path, _inside(run_dir, rel))
            _inside(run_dir, snippet.path).write_text(snippet.source, encoding="utf-8")
            for shown, source in snippet.helpers:
                _inside(run_dir, shown).write_text(source, encoding="utf-8")
        for sub in ("home", "tmp"):
            os.mkdir(os.path.join(run_dir, sub))
    except BaseException:
        remove_run_dir(run_dir)
        raise
    return run_dir, [snippet.path for snippet in cells]


def remove_run_dir(run_dir: str) -> None:
    """Remove ``run_dir`` if the run's supervisor has not (it removes it
    before it reports the run's end; a run that never got that far leaves it)."""
    if os.path.lexists(run_dir):
        shutil.rmtree(run_dir, ignore_errors=True)
    forget_run_dir(run_dir)


def end_run(run_dir: str, mounts: Mapping[str, Any] | None, captured: Sequence[Captured] | None) -> None:
    """After a Python run, however it ended: remove its directory
    (:func:`remove_run_dir`) and drop each kept compile cache it had bound
    that it grew past the budget (:func:`snipcheck.run.compile_cache.trim`),
    or all of them where the run did not end by itself (stopped at its
    timeout or its output limit, killed by a signal, forged, or never
    reported: ``captured`` ``None``), as what it was writing there may be
    half-written; its snippet's next run keeps a new one.

    :param mounts: the run's mounts (:func:`run_view`), ``None`` where it had none.
    :param captured: what the run's capture saw (a chain's: each cell's).
    """
    remove_run_dir(run_dir)
    if mounts and mounts.get("writable"):
        whole = captured is not None and all(
            c.signal is None and not (c.timed_out or c.stopped_by_output or c.forged) for c in captured
        )
        compile_cache.trim(mounts["writable"], compile_cache.limit() if whole else -1)


def chain_cells(scripts: Sequence[str], cells: Sequence[Snippet]) -> list[list[str]]:
    """What the supervisor hands over, cell by cell: each cell's script, the
    exception its tags expect and, for a tutorial script's cell, how it runs
    (:attr:`snipcheck.model.Tags.script_cell`; ``_snipcheck_supervise.Cells``)."""
    return [
        [script, cell.tags.expect, ",".join(cell.tags.script_cell)] for script, cell in zip(scripts, cells, strict=True)
    ]


def chain_inputs(cells: Sequence[Snippet], default: int | None) -> tuple[tuple[str, ...], int | None]:
    """The variables passed to a chain's process (every cell's) and its memory limit (the largest)."""
    env = tuple(dict.fromkeys(name for cell in cells for name in cell.env))
    limits = [memory_limit_of(cell, default) for cell in cells]
    return env, (None if None in limits else max(limit for limit in limits if limit is not None))


class _Process:
    """A supervisor started with :class:`subprocess.Popen`."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pid = proc.pid

    def kill(self) -> None:
        self.proc.kill()

    def reap(self) -> None:
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def supervised_spawner(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    memory_limit: int | None = None,
    run_dir: str | None = None,
    token_var: str | None = "SNIPCHECK_TOKEN",
    mounts: Mapping[str, Any] | None = None,
    cells: Sequence[Sequence[str]] | None = None,
    harvest: Sequence[Sequence[str]] = (),
) -> Spawner:
    """A spawner that runs ``argv`` (an absolute program path first) under a
    supervisor started from this interpreter.

    :param cwd: working directory of the run.
    :param env: the run's environment; the frame token is added as
        ``token_var`` (``None``: not added, for programs that do not frame).
    :param memory_limit: ``RLIMIT_DATA`` of the run's processes in bytes, or
        ``None``.
    :param run_dir: removed by the supervisor when the run ends.
    :param mounts: the run's mount namespace (:func:`snipcheck.run.sandbox.run_mounts`;
        made only inside a PID namespace), or ``None``.
    :param cells: a chain's cells (:func:`chain_cells`), which the supervisor
        hands over one by one on ``Streams.feed``; its end is passed to
        ``argv`` as its last argument.
    :param harvest: folders the supervisor keeps when the run ends (see :func:`run_view`).
    """

    def spawn(streams: Streams) -> _Process:
        child_env = dict(env)
        if token_var:
            child_env[token_var] = streams.token.hex()
        with sandbox.new_pid_namespace() as pidns:
            config = {
                "argv": list(argv),
                "control": streams.control,
                "pidns": pidns,
                "memory_limit": memory_limit,
                "run_dir": run_dir,
                # the supervisor sends the image files the run leaves (framed programs only)
                "token": streams.token.hex() if token_var else None,
                "mounts": dict(mounts) if mounts and pidns else None,  # only inside the run's PID namespace
                "harvest": [list(pair) for pair in harvest] if mounts and pidns else None,
            }
            if cells is not None and streams.feed is not None:
                config.update(cells=[list(cell) for cell in cells], feed=list(streams.feed))
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", SUPERVISOR, json.dumps(config)],
                cwd=cwd,
                env=child_env,
                stdin=streams.stdin,
                stdout=streams.stdout,
                stderr=streams.stderr,
                pass_fds=(streams.control, *(streams.feed or ())),
                start_new_session=True,
            )
        return _Process(proc)

    return spawn


class SubprocessRunner:
    """Runs each snippet with a plain ``python <file>`` subprocess, under a supervisor.

    :param python: path of the interpreter.
    :param stamp: the environment stamp of that interpreter.
    :param memory_limit: default ``RLIMIT_DATA`` of a run in bytes (a
        snippet's ``memory`` tag overrides it); ``None`` or 0: no limit.
    :param protect: the paths runs must not change
        (:func:`snipcheck.run.sandbox.protected_paths`).
    :param hash_seed: the runs' hash secret (``PYTHONHASHSEED``).
    """

    name = "subprocess"

    def __init__(
        self,
        python: str,
        stamp: Stamp,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        protect: Sequence[str] = (),
        hash_seed: int = HASH_SEED,
    ) -> None:
        self.python = python
        self.stamp = stamp
        self.memory_limit = memory_limit
        self.protect = tuple(protect)
        self.hash_seed = hash_seed

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        """Run ``snippet``; see :meth:`snipcheck.run.Runner.run`."""
        refuse_if_stopping()  # before the view's probe starts the interpreter
        limit = memory_limit_of(snippet, self.memory_limit)
        seed = seed_of(snippet)
        run_dir, script = prepare_run_dir(snippet)
        mounts, captured = None, None
        try:
            env = interpreter_environment(seeded(child_environment(run_dir, snippet.env), seed), self.hash_seed)
            mounts, harvest = run_view(self.protect, limit, self.python, [snippet], self.stamp, run_dir, env)
            captured = run_captured(
                supervised_spawner(
                    [self.python, script],
                    cwd=run_dir,
                    env=env,
                    memory_limit=limit,
                    run_dir=run_dir,
                    mounts=mounts,
                    harvest=harvest,
                ),
                timeout=timeout,
                output_limit=output_limit,
                rewrite=output_rewrite(run_dir),
            )
        finally:
            end_run(run_dir, mounts, None if captured is None else [captured])
        return captured.result(
            stamp=self.stamp, runner=self.name, output_limit=output_limit, memory_limit=limit, seed=seed
        )

    def run_chain(self, cells: Sequence[Snippet], *, timeouts: Sequence[float], output_limit: int) -> list[RunResult]:
        """Run a chain's ``cells`` one after the other in one fresh interpreter;
        see :meth:`snipcheck.run.Runner.run_chain`."""
        refuse_if_stopping()
        env_names, limit = chain_inputs(cells, self.memory_limit)
        seed = seed_of(cells[0])
        run_dir, scripts = prepare_chain_dir(cells)
        env = interpreter_environment(seeded(child_environment(run_dir, env_names), seed), self.hash_seed)
        env[CELLS_VAR] = "1"
        mounts, captured_cells = None, None
        try:
            mounts, harvest = run_view(self.protect, limit, self.python, cells, self.stamp, run_dir, env)
            captured_cells = run_captured_cells(
                supervised_spawner(
                    [self.python, CELLS],
                    cwd=run_dir,
                    env=env,
                    memory_limit=limit,
                    run_dir=run_dir,
                    mounts=mounts,
                    harvest=harvest,
                    cells=chain_cells(scripts, cells),
                ),
                timeouts=timeouts,
                output_limit=output_limit,
                rewrite=output_rewrite(run_dir),
                chain=True,
            )
        finally:
            end_run(run_dir, mounts, captured_cells)
        return [
            c.result(stamp=self.stamp, runner=self.name, output_limit=output_limit, memory_limit=limit, seed=seed)
            for c in captured_cells
        ]


def run_view(
    protect: Sequence[str], limit: int | None, python: str, cells: Sequence[Snippet], stamp: Stamp, run_dir: str,
    env: Mapping[str, str],
) -> tuple[dict[str, Any] | None, list[list[str]]]:
    """The mounts of a Python run of ``cells`` (a snippet, or a chain's
    cells) (:func:`snipcheck.run.sandbox.run_mounts`) with its compile cache
    bound in, and what its supervisor keeps of it
    (:func:`snipcheck.run.compile_cache.plan`); ``(None, [])`` where runs
    get no mount namespace."""
    mounts = sandbox.run_mounts(protect, limit, python)
    if mounts is None:
        return None, []
    writable, harvest = compile_cache.plan(compile_cache.code_key(cells, env), stamp.env, run_dir, env)
    mounts["writable"] = writable
    return mounts, harvest


def seed_of(snippet: Snippet) -> int | None:
    """The seed of ``snippet``'s run (of a chain's, for its first cell): its
    resolved ``seed`` tag (see :meth:`snipcheck.engine.execute.Executor.declared`);
    ``None``: fresh randomness."""
    seed = snippet.tags.seed
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def seeded(env: dict[str, str], seed: int | None) -> dict[str, str]:
    """``env`` with the run's seed for ``sitecustomize`` (``SNIPCHECK_SEED``), when it has one."""
    if seed is not None:
        env[SEED_VAR] = str(seed)
    return env


def memory_limit_of(snippet: Snippet, default: int | None) -> int | None:
    """The memory limit of ``snippet``'s run: its ``memory`` tag, else ``default``."""
    tagged = getattr(snippet.tags, "memory", None)
    return tagged if tagged else (default or None)
