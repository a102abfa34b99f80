"""How the runs of a process end, and what of them outlives none: the stop
(a Ctrl-C, a ``SIGTERM``, the interpreter's exit), the runs in progress,
the run directories made and the helper processes started for a run.

:func:`stop_live_runs` closes the control socket of every run in progress
(:func:`register_run`), which tells its supervisor to kill the run and
remove its run directory, and from then on no run starts
(:func:`stopping`).  What a runner starts or writes that is not a run yet (a
fork server still preloading, a run directory no supervisor holds, a
Rust snippet's cargo build) is stopped or removed by the hooks registered
with :func:`on_stop`.  The runs are the executor's daemon threads: the
interpreter's end can freeze one anywhere, so everything is noted before it
exists in a form the stop could miss.

Pure core: standard library only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snipcheck.run.watch import Supervisor


class RunError(OSError):
    """The run could not be started, or its supervisor ended without reporting."""


# Control sockets of the runs in progress: closed when this interpreter exits,
# which tells each supervisor to kill its run and remove its run directory.
_live: dict[int, tuple[socket.socket, Supervisor]] = {}
_live_lock = threading.Lock()


_stopping = threading.Event()
#: What :func:`stop_live_runs` also stops or removes: ``(hook, after)`` (see :func:`on_stop`).
_stop_hooks: list[tuple[Callable[[], None], bool]] = []


def on_stop(hook: Callable[[], None], *, after: bool = False) -> None:
    """Have :func:`stop_live_runs` call ``hook()`` once it has flagged the
    stop (``after``: once the runs in progress had their grace period to
    end), for what a runner starts or writes that is not a run yet: a fork
    server still preloading, a run directory no supervisor holds.  The hook
    must not raise, and must handle what was registered before it ran; what
    registers later must check :func:`stopping` itself."""
    _stop_hooks.append((hook, after))


def stopping() -> bool:
    """Whether :func:`stop_live_runs` was called (a Ctrl-C, the exit) since
    :func:`resume_runs`: no run starts then, and a runner does not run again
    what a server's end cut short (the executor's daemon threads go on while
    the command stops or the interpreter ends)."""
    return _stopping.is_set()


def refuse_if_stopping() -> None:
    """Start nothing once the runs are being stopped (:func:`stopping`).

    :raises RunError: if they are.
    """
    if _stopping.is_set():
        raise RunError("interrupted: the runs are being stopped")


def resume_runs() -> None:
    """Let runs start again (a new executor in the same process, after a
    command in it was interrupted)."""
    _stopping.clear()


# The run directories made and not yet removed, and the helper processes
# (a Rust snippet's cargo build) still running.  The runs are the executor's
# daemon threads: one that the interpreter's end (after a Ctrl-C, a SIGTERM)
# freezes between making a run directory and handing it to a supervisor (which
# removes it), or while it waits for cargo, would leave them behind for good.
_run_dirs: set[str] = set()
_helpers: set[subprocess.Popen[str]] = set()
_tracked_lock = threading.Lock()


def track_run_dir(run_dir: str) -> None:
    """Note ``run_dir`` as made: it is removed once the runs are stopped, if nothing removed it before."""
    with _tracked_lock:
        _run_dirs.add(run_dir)


def forget_run_dir(run_dir: str) -> None:
    """``run_dir`` was removed (or handed over for good)."""
    with _tracked_lock:
        _run_dirs.discard(run_dir)


def run_helper(args: Sequence[str], *, timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """:func:`subprocess.run` (text, output captured) for a process a run
    needs before it starts (cargo), in a session of its own, killed with its
    whole group once the runs are stopped.

    :raises RunError: once the runs are being stopped (none is started; one
        running is killed).
    :raises subprocess.TimeoutExpired: as :func:`subprocess.run` (the group is killed first).
    """
    with _tracked_lock:
        refuse_if_stopping()
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
        )
        _helpers.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        kill_group(proc)
        raise
    finally:
        with _tracked_lock:
            _helpers.discard(proc)
    refuse_if_stopping()  # killed as the runs stopped: no result to make of it
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the process group ``proc`` leads (started in a session of its own) and reap ``proc``."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _stop_helpers() -> None:
    with _tracked_lock:
        helpers = list(_helpers)
    for proc in helpers:
        kill_group(proc)


def _remove_run_dirs() -> None:
    """Remove every run directory still noted, once the runs were stopped (after the grace period)."""
    with _tracked_lock:
        left = list(_run_dirs)
    for run_dir in left:
        shutil.rmtree(run_dir, ignore_errors=True)
        forget_run_dir(run_dir)


def end_runs_on_sigterm() -> None:
    """Make a ``SIGTERM`` stop the runs first (:func:`stop_live_runs`, with its
    hooks: nothing a run or a starting server left stays behind), then end
    the process by ``SIGTERM``, as the signal's default action would have
    ended it at once (a CI job cancelled, ``timeout``, ``kill``).

    Only from the main thread, and only where ``SIGTERM`` has its default
    action: a host's own handler is left as it is.  Idempotent.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


_terminating = threading.Event()
#: Seconds the process waits, once the runs are stopped, for its main thread
#: to take the SIGTERM again before it ends without it.
_TERM_WAIT = 2.0


def _on_sigterm(signum: int, frame: object) -> None:
    """The ``SIGTERM`` handler (main thread, between two bytecodes: it takes
    no lock, which the interrupted code may hold).  The first time, a thread
    stops the runs and sends the signal again; then the default action."""
    if _terminating.is_set():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        return
    _terminating.set()
    threading.Thread(target=_stop_then_terminate, name="snipcheck-sigterm", daemon=True).start()


#: For :func:`snipcheck.files.signals_held`: this handler ends the process, as the default action does.
_on_sigterm.ends_process = True  # type: ignore[attr-defined]


def _stop_then_terminate() -> None:
    stop_live_runs()
    os.kill(os.getpid(), signal.SIGTERM)  # the main thread's handler now takes the default action
    time.sleep(_TERM_WAIT)
    os._exit(128 + signal.SIGTERM)  # it did not get back to Python in time: end as a shell reports SIGTERM


@atexit.register
def stop_live_runs(grace: float = 1.0) -> None:
    """Stop every run still in progress (their supervisors clean up), waiting
    up to ``grace`` s, and start none from now on (:func:`stopping`).

    Runs at exit (an ``atexit`` handler) and when the command line is
    interrupted; safe while the runs' threads end their runs and close their
    sockets.
    """
    _stopping.set()  # before the list: a run registered after it sees the flag (run_captured_cells)
    for hook, after in _stop_hooks:
        if not after:
            hook()
    with _live_lock:
        runs = list(_live.values())
    for control, _ in runs:
        try:
            control.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    for control, _ in runs:
        # The run's own thread may close its socket meanwhile (its run ended):
        # that is an OSError (EBADF) here too, and nothing is left to wait for.
        try:
            control.settimeout(max(0.0, deadline - time.monotonic()))
            while control.recv(4096):
                pass
        except OSError:
            pass
    for hook, after in _stop_hooks:
        if after:
            hook()


def register_run(control: socket.socket, supervisor: Supervisor) -> bool:
    """Note a run in progress by its control socket (:func:`stop_live_runs` closes it).

    :return: whether the runs are being stopped already: the caller stops
        this run as :func:`stop_live_runs` would have (it may have listed
        the runs before this one was noted).
    """
    with _live_lock:
        _live[id(control)] = (control, supervisor)
        return _stopping.is_set()


def unregister_run(control: socket.socket) -> None:
    """The run of ``control`` ended (its socket is closed next)."""
    with _live_lock:
        _live.pop(id(control), None)


on_stop(_stop_helpers)
on_stop(_remove_run_dirs, after=True)
