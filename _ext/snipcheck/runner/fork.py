"""The warm fork runner: one server imports torch once, each snippet runs in a fork.

``import torch`` takes 2–3 s; a plain ``python snippets/x.py`` pays it for
every snippet.  :class:`ForkServer` starts ``bootstrap/forkserver.py`` in the
snippet interpreter, which preloads the modules once and forks a child per
snippet (see that file for how the child is made to look like a plain run).
:class:`ForkRunner` uses it through the same capture as the subprocess runner,
so both produce the same :class:`~snipcheck.model.RunResult`.

Where forking is unsafe (Python threads running after the preload, CUDA
initialised, the preload printing something a plain run would show, or a
module failing to import) the server says so at start-up, and the runner falls
back to :class:`~snipcheck.runner.python.SubprocessRunner`, logging why.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from ..model import RunResult, Snippet, Stamp
from .capture import Child, run_captured
from .python import BOOTSTRAP_DIR, SubprocessRunner, child_environment, prepare_run_dir

log = logging.getLogger("snipcheck")
SERVER = str(Path(BOOTSTRAP_DIR) / "forkserver.py")


class ForkServerError(RuntimeError):
    """The fork server could not start, is unsafe, or died."""


class _RemoteChild:
    """A child forked by the server, as :func:`run_captured` sees it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._done = threading.Event()

    def _finish(self, status: int) -> None:
        self.returncode = status
        self._done.set()

    def poll(self) -> int | None:
        return self.returncode if self._done.is_set() else None

    def wait(self) -> int:
        self._done.wait()
        assert self.returncode is not None
        return self.returncode


class ForkServer:
    """A running fork server.

    :param python: the snippet interpreter.
    :param preload: modules to import once, e.g. ``("torch",)``.
    :param start_timeout: seconds allowed for start-up and preloading.
    :raises ForkServerError: if it cannot start or reports forking unsafe
        (the message says why).
    """

    def __init__(self, python: str, preload: Sequence[str], start_timeout: float = 120.0) -> None:
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._home = tempfile.mkdtemp(prefix="snipcheck-forkserver-")
        env = child_environment(self._home)
        env.pop("PYTHONPATH", None)
        os.makedirs(env["HOME"], exist_ok=True)
        os.makedirs(env["TMPDIR"], exist_ok=True)
        try:
            self._proc = subprocess.Popen(
                [python, SERVER, str(theirs.fileno()), *preload],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=self._home,
                env=env,
                start_new_session=True,
            )
        finally:
            theirs.close()
        self._sock.settimeout(start_timeout)
        try:
            hello = json.loads(self._sock.recv(1 << 16) or b"{}")
        except (OSError, ValueError) as exc:
            self.close()
            raise ForkServerError(f"fork server did not start: {exc}") from None
        self._sock.settimeout(None)
        if not hello.get("ready"):
            self.close()
            raise ForkServerError("fork server did not start (it exited during preload)")
        if hello.get("problems"):
            self.close()
            raise ForkServerError("forking is unsafe: " + "; ".join(hello["problems"]))
        self.native_threads = hello.get("native_threads")
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, _RemoteChild | threading.Event] = {}
        self._started: dict[int, _RemoteChild] = {}
        self._dead = False
        self._reader = threading.Thread(target=self._read, name="snipcheck-forkserver", daemon=True)
        self._reader.start()

    def spawn(self, script: str, run_dir: str, env: dict[str, str], out_w: int, err_w: int, frm_w: int) -> Child:
        """Ask the server to fork a child running ``script``; returns it once started.

        :raises ForkServerError: if the server has died.
        """
        started = threading.Event()
        with self._lock:
            if self._dead:
                raise ForkServerError("the fork server has exited")
            req = self._next
            self._next += 1
            self._waiting[req] = started
            msg = json.dumps({"req": req, "script": script, "run_dir": run_dir, "env": env}).encode()
            socket.send_fds(self._sock, [msg], [out_w, err_w, frm_w])
        started.wait()
        with self._lock:
            child = self._started.pop(req, None)
        if child is None:
            raise ForkServerError("the fork server exited before starting the snippet")
        return child

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            msg = json.loads(data)
            req = msg["req"]
            with self._lock:
                if "pid" in msg:
                    child = _RemoteChild(msg["pid"])
                    self._started[req] = child
                    event = self._waiting.pop(req)
                    self._waiting[req] = child
                    assert isinstance(event, threading.Event)
                    event.set()
                else:
                    waiter = self._waiting.pop(req, None)
                    if isinstance(waiter, _RemoteChild):
                        waiter._finish(msg["status"])
        with self._lock:
            self._dead = True
            for waiter in self._waiting.values():
                if isinstance(waiter, threading.Event):
                    waiter.set()
                else:
                    waiter._finish(-9)  # reported as killed: the server died under it
            self._waiting.clear()

    def close(self) -> None:
        """Stop the server (running children are not waited for)."""
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


class ForkRunner:
    """Runs Python snippets as forks of a warm server; see the module docstring.

    :param python: the snippet interpreter.
    :param stamp: its environment stamp.
    :param preload: modules the server imports once (``("torch",)``).
    """

    name = "fork"

    def __init__(self, python: str, stamp: Stamp, preload: Sequence[str] = ("torch",)) -> None:
        self.python = python
        self.stamp = stamp
        self.preload = tuple(preload)
        self.fallback = SubprocessRunner(python, stamp)
        self._server: ForkServer | None = None
        self._failed: str | None = None
        self._lock = threading.Lock()

    def _get_server(self) -> ForkServer | None:
        with self._lock:
            if self._server is None and self._failed is None:
                try:
                    self._server = ForkServer(self.python, self.preload)
                    log.info("snipcheck: fork runner ready (preloaded %s)", ", ".join(self.preload) or "nothing")
                except (ForkServerError, OSError) as exc:
                    self._failed = str(exc)
                    log.warning("snipcheck: using the subprocess runner: %s", exc)
            return self._server

    @property
    def unavailable(self) -> str | None:
        """Why this runner falls back to subprocesses, or ``None``."""
        self._get_server()
        return self._failed

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        """Run ``snippet``; see :meth:`snipcheck.runner.Runner.run`."""
        server = self._get_server()
        if server is None:
            return self.fallback.run(snippet, timeout=timeout, output_limit=output_limit)
        run_dir, script = prepare_run_dir(snippet)
        try:
            env = child_environment(run_dir, snippet.env)
            env.pop("PYTHONPATH", None)
            try:
                captured = run_captured(
                    lambda o, e, f: server.spawn(script, run_dir, env, o, e, f),
                    timeout=timeout,
                    output_limit=output_limit,
                    rewrite={run_dir + os.sep: ""},
                )
            except ForkServerError as exc:
                with self._lock:
                    self._failed = str(exc)
                    self._server = None
                log.warning("snipcheck: fork server failed (%s); using the subprocess runner", exc)
                return self.fallback.run(snippet, timeout=timeout, output_limit=output_limit)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        return captured.result(stamp=self.stamp, runner=self.name, output_limit=output_limit)

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None
