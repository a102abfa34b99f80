"""The warm fork runner: one server imports torch once, each snippet runs in a fork.

``import torch`` takes 2–3 s; a plain ``python snippets/x.py`` pays it for
every snippet.  :class:`ForkServer` starts ``bootstrap/forkserver.py`` in the
snippet interpreter, which preloads the modules once (see that file for how a
child is made to look like a plain run, and what it hides).  For each run in
parallel the runner asks the server for a *slot*: a supervisor forked from the
server, init of a PID namespace of its own where the kernel allows it, which
runs snippets one after the other, each in a fork of itself, and reports each
run on the run's control socket.  One fork per run, as without supervisors;
:class:`ForkRunner` uses slots through the same capture as the subprocess
runner, so both produce the same :class:`~snipcheck.model.RunResult`.

The server is not in the path of any result, so its own end, however it
comes, costs no run in progress; a slot that is gone is replaced, a server
that is gone is started again (twice), then the subprocess runner takes over.

Once it has preloaded, the server also does once what torch does lazily at
a process's first tensor operation and first backward pass (reading the
CPU's features, filling dispatch tables: 3–4 ms a run), after a throw-away
fork showed that doing so changes nothing a snippet can see (no module, no
thread, no warning, no output); see ``forkserver._warm_up``.

Where forking is unsafe (Python threads running after the preload, CUDA
initialised, the preload printing something a plain run would show, or a
module failing to import) the server says so at start-up, and the runner falls
back to :class:`~snipcheck.run.python.SubprocessRunner`, logging why.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import ast
import functools
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.run import sandbox
from snipcheck.run.capture import Streams, run_captured_cells
from snipcheck.run.python import (
    BOOTSTRAP_DIR,
    DEFAULT_MEMORY_LIMIT,
    HASH_SEED,
    SubprocessRunner,
    chain_cells,
    chain_inputs,
    child_environment,
    end_run,
    interpreter_environment,
    output_rewrite,
    prepare_chain_dir,
    run_view,
    seed_of,
)
from snipcheck.run.stopping import RunError, kill_group, on_stop, stopping

log = logging.getLogger("snipcheck")
SERVER = str(Path(BOOTSTRAP_DIR) / "forkserver.py")
#: Fresh servers started after one died, before falling back to subprocesses.
_RESTARTS = 2


class ForkServerError(RuntimeError):
    """The fork server could not start, is unsafe, or died."""


# Fork servers still starting (preloading torch: seconds): their home
# directories, and their processes once started.  Nothing else would stop one
# when the command is interrupted or exits meanwhile: the thread that waits
# for it is a daemon, and the server reads its socket only once preloaded.
_starting: dict[str, subprocess.Popen[bytes] | None] = {}
_starting_lock = threading.Lock()


def _stop_starting() -> None:
    """Kill every fork server still starting, and remove its home directory
    (a server removes its own as it exits; a killed one cannot).  Called by
    :func:`snipcheck.run.stopping.stop_live_runs` (a Ctrl-C, the exit), after
    it flagged the stop: a server not yet started then starts no more."""
    with _starting_lock:
        starting = list(_starting.items())
    for home, proc in starting:
        if proc is not None:
            kill_group(proc)
        shutil.rmtree(home, ignore_errors=True)


on_stop(_stop_starting)

# Every fork runner of this process: once the runs are stopped, each is closed,
# and its server and slots are waited for, so that none of them is still
# working (forking a slot asked for just before) once the command has exited.
_runners: weakref.WeakSet[ForkRunner] = weakref.WeakSet()


def _close_runners() -> None:
    """Close every fork runner (after :func:`snipcheck.run.stopping.stop_live_runs`'s grace period)."""
    for runner in list(_runners):
        runner.close()


on_stop(_close_runners, after=True)


class _Slot:
    """A supervisor the server forked for this build: it runs snippets one at a
    time, each in a fork of itself (see ``forkserver.py``), and reports each
    run on the run's control socket."""

    def __init__(self, sock: socket.socket, pid: int, warm: tuple[str, ...] = ()) -> None:
        self.sock = sock
        self.pid = pid
        self.warm = warm
        self.broken = False

    def spawn(self, request: dict[str, Any], streams: Streams) -> _Slot:
        """Hand the slot a run.

        :raises ForkServerError: if the slot is gone (the run can go elsewhere).
        """
        msg = json.dumps({**request, "token": streams.token.hex()}).encode()
        fds = [streams.stdin, streams.stdout, streams.stderr, streams.control, *(streams.feed or ())]
        try:
            socket.send_fds(self.sock, [msg], fds)
        except OSError as exc:
            self.broken = True
            raise ForkServerError(f"a fork runner slot is gone: {exc}") from None
        return self

    def kill(self) -> None:
        """SIGKILL the slot (it did not stop a run in time); it is not used again."""
        self.broken = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def reap(self) -> None:
        """Nothing to do: the server (or init, if the server is gone) reaps it."""

    def close(self) -> None:
        """End the slot: it kills what is left of its runs and exits."""
        self.sock.close()


class ForkServer:
    """A running fork server.

    :param python: the snippet interpreter.
    :param preload: modules to import once, e.g. ``("torch",)``.
    :param start_timeout: seconds allowed for start-up and preloading.
    :param hash_seed: the hash secret of the server and so of every run (``PYTHONHASHSEED``).
    :raises ForkServerError: if it cannot start or reports forking unsafe
        (the message says why).
    """

    def __init__(
        self, python: str, preload: Sequence[str], start_timeout: float = 120.0, hash_seed: int = HASH_SEED
    ) -> None:
        # Made and started under the lock that stop_live_runs's hook takes:
        # the interpreter's end could otherwise freeze this (daemon) thread
        # between starting the server and registering it, after the hook ran.
        with _starting_lock:
            if stopping():
                raise ForkServerError("interrupted: the runs are being stopped")
            self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._home = tempfile.mkdtemp(prefix="snipcheck-forkserver-")
            _starting[self._home] = None
            # The hash secret is the server's, for every run it forks (see DIFFERENCES["hash seed"]).
            env = interpreter_environment(child_environment(self._home), hash_seed)
            env.pop("PYTHONPATH", None)
            try:
                os.makedirs(env["HOME"], exist_ok=True)
                os.makedirs(env["TMPDIR"], exist_ok=True)
                self._proc = subprocess.Popen(
                    [python, SERVER, str(theirs.fileno()), "1" if sandbox.enabled() else "0", *preload],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd=self._home,
                    env=env,
                    start_new_session=True,
                )
            except BaseException:
                _starting.pop(self._home, None)
                theirs.close()
                self.close()
                raise
            _starting[self._home] = self._proc
            theirs.close()
        self._sock.settimeout(start_timeout)
        try:
            hello = json.loads(self._sock.recv(1 << 16) or b"{}")
        except (OSError, ValueError) as exc:
            self.close()
            raise ForkServerError(f"fork server did not start: {exc}") from None
        finally:
            with _starting_lock:
                _starting.pop(self._home, None)
        self._sock.settimeout(None)
        if stopping():
            self.close()
            raise ForkServerError("interrupted: the runs are being stopped")
        if not hello.get("ready"):
            self.close()
            raise ForkServerError("fork server did not start (it exited during preload)")
        if hello.get("problems"):
            self.close()
            raise ForkServerError("forking is unsafe: " + "; ".join(hello["problems"]))
        self.native_threads = hello.get("native_threads")
        #: How many of torch's lazy set-up steps the server ran once for all
        #: runs (``forkserver._WARM_STEPS``; 0 when none was safe to run).
        self.warmed: int = hello.get("warmed", 0)
        self.exact_recursion = bool(hello.get("recursion"))
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._dead = False
        self._reader = threading.Thread(target=self._read, name="snipcheck-forkserver", daemon=True)
        self._reader.start()

    @property
    def dead(self) -> bool:
        """Whether the server has exited."""
        return self._dead

    def slot(self, warm: tuple[str, ...] = ()) -> _Slot:
        """Ask the server to fork a new slot (a supervisor for runs, one at a time).

        :param warm: preloaded modules the slot imports before its first run
            (see :func:`warm_imports`).
        :raises ForkServerError: if the server has died.
        """
        started = threading.Event()
        answer: list[dict[str, Any]] = []
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._lock:
                if self._dead:
                    raise ForkServerError("the fork server has exited")
                req = self._next
                self._next += 1
                self._waiting[req] = (started, answer)
                try:
                    socket.send_fds(self._sock, [json.dumps({"req": req, "warm": list(warm)}).encode()], [theirs.fileno()])
                except OSError as exc:
                    self._waiting.pop(req, None)
                    self._dead = True
                    raise ForkServerError(f"the fork server does not answer: {exc}") from None
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        started.wait()
        if not answer:
            mine.close()
            raise ForkServerError("the fork server exited before starting a slot")
        return _Slot(mine, answer[0]["pid"], warm)

    def interrupted(self, wait: float = 1.0) -> bool:
        """Whether the server ended by SIGINT (a Ctrl-C sent to the whole
        process group, which the command is handling), waiting up to ``wait``
        seconds for it to end."""
        try:
            return self._proc.wait(timeout=wait) == -signal.SIGINT
        except subprocess.TimeoutExpired:
            return False

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            msg = json.loads(data)
            with self._lock:
                waiter = self._waiting.pop(msg["req"], None)
            if waiter is not None:
                waiter[1].append(msg)
                waiter[0].set()
        with self._lock:
            self._dead = True
            for started, _ in self._waiting.values():
                started.set()
            self._waiting.clear()

    def close(self) -> None:
        """Stop the server (runs in progress are not affected: their supervisors report to the build)."""
        try:
            # shutdown wakes the reader thread blocked in recv and lets the
            # server see end-of-file; a bare close would do neither.
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass
        proc = getattr(self, "_proc", None)
        if proc is not None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self._home, ignore_errors=True)


def warm_imports(snippet: Snippet, preload: Sequence[str]) -> tuple[str, ...]:
    """The preloaded modules a run of ``snippet`` may find already imported:
    those its first statement imports (after a docstring and ``from
    __future__`` imports), ``import torch`` say.  Nothing can observe the
    difference (no line of the snippet runs before that statement, and the
    statement finds them as it would have left them), and the run is spared
    putting back what their first import loaded (see ``forkserver._slot``).

    :return: ``()`` for anything else: another first statement, a syntax
        error, a module not preloaded.
    """
    if not preload or snippet.language != "python":
        return ()
    found = _first_imports(snippet.source)
    return tuple(name for name in found if name in preload) if found and all(n in preload for n in found) else ()


@functools.lru_cache(maxsize=4096)
def _first_imports(source: str) -> tuple[str, ...]:
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return ()
    for statement in body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and statement is body[0]:
            continue  # the module docstring
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            continue
        if isinstance(statement, ast.Import):
            return tuple(dict.fromkeys(alias.name.split(".")[0] for alias in statement.names))
        return ()
    return ()


class ForkRunner:
    """Runs Python snippets as forks of a warm server; see the module docstring.

    :param python: the snippet interpreter.
    :param stamp: its environment stamp.
    :param preload: modules the server imports once (``("torch",)``).
    :param memory_limit: default ``RLIMIT_DATA`` of a run in bytes (a
        snippet's ``memory`` tag overrides it); ``None`` or 0: no limit.
    :param protect: the paths runs must not change
        (:func:`snipcheck.run.sandbox.protected_paths`).
    :param hash_seed: the runs' hash secret (``PYTHONHASHSEED``), the server's.
    """

    name = "fork"

    def __init__(
        self,
        python: str,
        stamp: Stamp,
        preload: Sequence[str] = ("torch",),
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        protect: Sequence[str] = (),
        hash_seed: int = HASH_SEED,
    ) -> None:
        self.python = python
        self.stamp = stamp
        self.preload = tuple(preload)
        self.memory_limit = memory_limit
        self.protect = tuple(protect)
        self.hash_seed = hash_seed
        self.fallback = SubprocessRunner(python, stamp, memory_limit, protect, hash_seed)
        self._server: ForkServer | None = None
        self._failed: str | None = None
        self._restarts = 0
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []
        # Set by close(): a command that ends (a Ctrl-C unwinding through its
        # executor, the exit) closes the server under its workers' runs, which
        # must not take that for a server that failed and run their snippets again.
        self._closed = False
        _runners.add(self)

    def _get_server(self) -> ForkServer | None:
        with self._lock:
            if self._server is not None and self._server.dead:
                self._server.close()
                self._server = None
                self._restarts += 1
                if self._restarts > _RESTARTS:
                    self._failed = "the fork server died repeatedly"
                    log.warning("snipcheck: the fork server died repeatedly; using the subprocess runner")
            if self._server is None and self._failed is None and not stopping() and not self._closed:
                try:
                    self._server = ForkServer(self.python, self.preload, hash_seed=self.hash_seed)
                    log.info("snipcheck: fork runner ready (preloaded %s)", ", ".join(self.preload) or "nothing")
                except (ForkServerError, OSError) as exc:
                    if stopping():  # killed while it started (a Ctrl-C, the exit): nothing to fall back to
                        return None
                    self._failed = str(exc)
                    log.warning("snipcheck: using the subprocess runner: %s", exc)
            return self._server

    @property
    def unavailable(self) -> str | None:
        """Why this runner falls back to subprocesses, or ``None``."""
        self._get_server()
        return self._failed

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        """Run ``snippet``; see :meth:`snipcheck.run.Runner.run`.

        A request the server cannot answer (it died) is run again on a fresh
        server, and finally on the subprocess runner.
        """
        while True:
            server = self._get_server()
            if server is None:
                self._refuse_if_ending()
                return self.fallback.run(snippet, timeout=timeout, output_limit=output_limit)
            try:
                return cast(RunResult, self._run_on(server, snippet, timeout, output_limit))
            except ForkServerError as exc:
                self._give_up_if_ending(server)
                log.warning("snipcheck: fork server failed (%s); running %s again", exc, snippet.id)

    def run_chain(self, cells: Sequence[Snippet], *, timeouts: Sequence[float], output_limit: int) -> list[RunResult]:
        """Run a chain's ``cells`` one after the other in one fork of the
        server; see :meth:`snipcheck.run.Runner.run_chain`."""
        while True:
            server = self._get_server()
            if server is None:
                self._refuse_if_ending()
                return self.fallback.run_chain(cells, timeouts=timeouts, output_limit=output_limit)
            try:
                return cast("list[RunResult]", self._run_on(server, cells, timeouts, output_limit))
            except ForkServerError as exc:
                self._give_up_if_ending(server)
                log.warning("snipcheck: fork server failed (%s); running %s again", exc, cells[0].id)

    def _give_up_if_ending(self, server: ForkServer) -> None:
        """After a server's failure: nothing is run again when the runs are
        ending (a Ctrl-C, the exit, this runner closed).

        :raises RunError: if they are.
        """
        self._refuse_if_ending()
        if server.interrupted():  # a Ctrl-C to the process group ended it: the command is stopping
            raise RunError("interrupted: the runs are being stopped")

    def _refuse_if_ending(self) -> None:
        """:raises RunError: once the runs are being stopped or this runner was closed."""
        if self._closed or stopping():
            raise RunError("interrupted: the runs are being stopped")

    def _run_on(
        self, server: ForkServer, snippets: Snippet | Sequence[Snippet], timeouts: float | Sequence[float], output_limit: int
    ) -> Any:
        """One run (``snippets`` a snippet: its result) or a chain's (a sequence: a list of results)."""
        chain = not isinstance(snippets, Snippet)
        cells: Sequence[Snippet] = snippets if chain else (snippets,)  # type: ignore[assignment]
        warm = warm_imports(cells[0], self.preload)
        with self._lock:
            slot = next((s for s in reversed(self._idle) if s.warm == warm), None)
            if slot is not None:
                self._idle.remove(slot)
        if slot is None:
            slot = server.slot(warm)
        env_names, limit = chain_inputs(cells, self.memory_limit)
        run_dir, scripts = prepare_chain_dir(cells)
        mounts, captured = None, None
        try:
            env = child_environment(run_dir, env_names)
            env.pop("PYTHONPATH", None)
            seed = seed_of(cells[0])
            mounts, harvest = run_view(self.protect, limit, self.python, cells, self.stamp, run_dir, env)
            request: dict[str, Any] = {
                "script": scripts[0], "run_dir": run_dir, "env": env, "memory_limit": limit, "seed": seed,
                "mounts": mounts, "harvest": harvest,
            }  # fmt: skip
            if chain:
                request["cells"] = chain_cells(scripts, cells)
            captured = run_captured_cells(
                lambda streams: slot.spawn(request, streams),
                timeouts=tuple(timeouts) if chain else (timeouts,),  # type: ignore[arg-type]
                output_limit=output_limit,
                rewrite=output_rewrite(run_dir),
                chain=chain,
            )
        except BaseException:
            slot.broken = True
            raise
        finally:
            end_run(run_dir, mounts, captured)
            with self._lock:
                if slot.broken or self._closed:
                    slot.close()
                else:
                    self._idle.append(slot)
        results = [
            c.result(stamp=self.stamp, runner=self.name, output_limit=output_limit, memory_limit=limit, seed=seed)
            for c in captured
        ]
        return results if chain else results[0]

    def close(self) -> None:
        """End the slots and the server; a run still going on ends with
        ``RunError`` rather than being run again."""
        self._closed = True
        with self._lock:
            for slot in self._idle:
                slot.close()
            self._idle.clear()
            if self._server is not None:
                self._server.close()
                self._server = None
