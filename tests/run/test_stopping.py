"""Once the runs are being stopped (a Ctrl-C, the exit), nothing starts again.

Seen by a new user: a Ctrl-C while the fork server started printed
"snipcheck: fork server failed (the fork server exited before starting a
slot); running more/oops again" after "interrupted; nothing was written", and
fork servers were still running a second after the command had exited.  The
executor's daemon threads go on while the command stops its runs and the
interpreter ends; the exit closed the server under a worker, which took that
for a failure, started a new server and ran the snippet again.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_support import LIMIT, TIMEOUT, wrapped_python, write
from snipcheck.model import Snippet, Stamp, Tags
from snipcheck.run import stopping
from snipcheck.run.fork import ForkRunner, ForkServer, ForkServerError
from snipcheck.run.python import SubprocessRunner
from snipcheck.run.stopping import RunError


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "snippets").mkdir(parents=True)
    return root


@pytest.fixture
def fork_runner(stamp: Stamp) -> Iterator[ForkRunner]:
    runner = ForkRunner(sys.executable, stamp, preload=())
    yield runner
    runner.close()


def test_a_fork_server_that_ends_while_the_runs_stop_is_neither_restarted_nor_run_again(
    project: Path, fork_runner: ForkRunner, caplog: pytest.LogCaptureFixture
) -> None:
    snippet = write(project, "s/quick", "print('ran')\n")
    assert fork_runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events  # the server is up
    server = fork_runner._server
    assert server is not None
    stopping.stop_live_runs(grace=0)
    server._proc.kill()  # as the exit closes it under a worker thread
    server._proc.wait()
    caplog.clear()  # what the first run logged ("fork runner ready"), where the level let it through
    with caplog.at_level(logging.INFO, logger="snipcheck"), pytest.raises(RunError, match="interrupted"):
        fork_runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert fork_runner._server in (None, server)  # no new server
    assert "again" not in caplog.text and "ready" not in caplog.text


def test_a_closed_fork_runner_starts_no_server_and_runs_nothing_again(
    project: Path, stamp: Stamp, caplog: pytest.LogCaptureFixture
) -> None:
    """Seen by a new user: a Ctrl-C unwinds through the command's executor,
    which closes the runner while its workers still ask for runs; they took
    the closed server for a failed one ("fork server failed (...); running X
    again", printed after "interrupted; nothing was written") or started a
    new server."""
    snippet = write(project, "s/after", "print('ran')\n")
    runner = ForkRunner(sys.executable, stamp, preload=())
    assert runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events  # the server is up
    server = runner._server
    assert server is not None
    runner.close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="snipcheck"):
        for run in (runner.run, lambda s, **kw: runner.run_chain([s], timeouts=[TIMEOUT], output_limit=LIMIT)):
            with pytest.raises(RunError, match="interrupted"):
                run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert runner._server is None and runner._idle == []
    assert caplog.text == ""


def test_no_run_starts_once_the_runs_are_being_stopped(project: Path, stamp: Stamp) -> None:
    snippet = write(project, "s/hello", "print('ran')\n")
    stopping.stop_live_runs(grace=0)
    with pytest.raises(RunError, match="interrupted"):
        SubprocessRunner(sys.executable, stamp).run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    stopping.resume_runs()  # a new command in this process (a new executor does this)
    result = SubprocessRunner(sys.executable, stamp).run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert [event.text for event in result.events] == ["ran\n"]


@pytest.fixture
def slow_python(tmp_path: Path) -> Path:
    """An interpreter that takes 60 s to start: a fork server preloading for that long."""
    return wrapped_python(tmp_path / "slow-python", before="sleep 60\n")


def _starting_server(interpreter: Path, parent: int | None = None) -> tuple[int, str]:
    """The fork server ``parent`` (default: this process) started with
    ``interpreter`` (still in its preload), and its home directory (its
    working directory)."""
    parent = os.getpid() if parent is None else parent
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                if ppid == parent and str(interpreter).encode() in cmdline:
                    return int(entry), os.readlink(f"/proc/{entry}/cwd")
            except (OSError, IndexError, ValueError):
                continue
        time.sleep(0.01)
    raise AssertionError("no fork server started")


def _group_gone(pgid: int, within: float = 5.0) -> bool:
    """Whether no process of group ``pgid`` runs (zombies aside: init reaps
    them when it gets to it) within ``within`` s (a server that registers as
    the runs stop stops itself, a moment later)."""
    deadline = time.monotonic() + within
    while True:
        members = []
        for entry in os.listdir("/proc"):
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(entry)
        if not members:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


def test_a_fork_server_still_starting_when_the_runs_stop_is_killed_with_its_home(slow_python: Path) -> None:
    """Seen by a new user: a server still preloading when the command exited
    lived on until its preload ended (its waiting thread is a daemon), and
    nothing else stopped it."""
    ended: list[BaseException] = []

    def start() -> None:
        try:
            ForkServer(str(slow_python), ()).close()
        except BaseException as exc:  # noqa: BLE001 - what the thread ended with is the finding
            ended.append(exc)

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    pid, home = _starting_server(slow_python)
    assert os.path.isdir(home)
    stopping.stop_live_runs(grace=0)
    assert _group_gone(pid)  # the server, and the preload it was waiting for
    thread.join(10)
    assert not os.path.exists(home)
    assert not thread.is_alive()
    assert len(ended) == 1 and isinstance(ended[0], ForkServerError) and "interrupted" in str(ended[0])


def test_a_run_waiting_for_its_server_to_start_stops_with_the_runs_and_says_nothing_else(
    project: Path, stamp: Stamp, slow_python: Path, caplog: pytest.LogCaptureFixture
) -> None:
    snippet = write(project, "s/waits", "print('ran')\n")
    runner = ForkRunner(str(slow_python), stamp, preload=())
    ended: list[BaseException] = []

    def run() -> None:
        try:
            runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        except BaseException as exc:  # noqa: BLE001
            ended.append(exc)

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="snipcheck"):
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        pid, _ = _starting_server(slow_python)
        stopping.stop_live_runs(grace=0)
        thread.join(10)
    try:
        assert not thread.is_alive()
        assert _group_gone(pid)
        assert len(ended) == 1 and isinstance(ended[0], RunError) and "interrupted" in str(ended[0])
        assert "subprocess runner" not in caplog.text and "again" not in caplog.text
        assert runner.unavailable is None  # not marked failed: a later command may start it
    finally:
        runner.close()


FROZEN = """\
import sys, threading, time
from snipcheck.model import Snippet, Tags
from snipcheck.run.python import prepare_run_dir

snippet = Snippet("s/x", "snippets/s/x.py", "/nowhere/x.py", "python", "print(1)\\n", "print(1)", 1, Tags())
ready = threading.Event()

def run():  # an executor's worker: prepared the run directory, not yet handed to a supervisor
    run_dir, _ = prepare_run_dir(snippet)
    print(run_dir, flush=True)
    ready.set()
    time.sleep(3600)

threading.Thread(target=run, daemon=True).start()
ready.wait()
sys.exit(int(sys.argv[1]))
"""


@pytest.mark.parametrize("how", ["exit", "ctrl-c"])
def test_a_run_directory_no_supervisor_holds_yet_is_removed_when_the_interpreter_ends(
    tmp_path: Path, how: str
) -> None:
    """The runs are daemon threads: the interpreter's end (after a Ctrl-C, or
    a command's exit) freezes one wherever it is; between preparing its run
    directory and handing it to a supervisor, the directory stayed in
    /dev/shm for good (seen after interrupted builds)."""
    script = tmp_path / "frozen.py"
    script.write_text(FROZEN if how == "exit" else FROZEN.replace("sys.exit(int(sys.argv[1]))", "raise KeyboardInterrupt"))
    done = subprocess.run(
        [sys.executable, str(script), "0"], capture_output=True, text=True, env=_env(), timeout=60, check=False
    )
    run_dir = done.stdout.strip()
    assert run_dir and os.path.isabs(run_dir), done.stderr
    assert not os.path.lexists(run_dir)


SLOW_START = """\
import sys, threading, time
from snipcheck.run.fork import ForkServer

threading.Thread(target=lambda: ForkServer(sys.argv[1], ()), daemon=True).start()  # an executor's worker
time.sleep(float(sys.argv[2]))
"""


@pytest.mark.parametrize("after", [0.0, 0.05, 0.5])
def test_a_command_that_ends_while_its_fork_server_starts_leaves_no_server_and_no_home(
    tmp_path: Path, slow_python: Path, after: float
) -> None:
    """Seen when a build failed during its reading: the fork server, still
    preloading, lived on after sphinx-build had exited; and the interpreter's
    end can freeze the thread that starts it between starting it and
    registering it."""
    temp = tmp_path / "temp"  # the server's home goes here, away from other processes' ones
    temp.mkdir()
    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_START)
    subprocess.run([sys.executable, str(script), str(slow_python), str(after)], env=_env(TMPDIR=str(temp)), timeout=60, check=True)
    deadline = time.monotonic() + 5
    while (left := _running(slow_python)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert left == []
    assert list(temp.iterdir()) == []


def _running(interpreter: Path) -> list[int]:
    """Processes (not zombies) whose command line holds ``interpreter``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and str(interpreter).encode() in Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0"):
                found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _env(**extra: str) -> dict[str, str]:
    """This environment, with this checkout's snipcheck importable (and ``extra``)."""
    path = os.pathsep.join([str(Path(stopping.__file__).parents[2]), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


TERMINATED = """\
import sys, threading, time
from snipcheck.model import Snippet, Tags
from snipcheck.engine.config import ExecutorConfig
from snipcheck.engine.execute import Executor
from snipcheck.model import Stamp
from snipcheck.run.fork import ForkServer
from snipcheck.run.python import prepare_run_dir

Executor(ExecutorConfig(python=sys.executable, stamp=Stamp("3.11", None, "CPU", "Linux"), cache=None))  # a command's
snippet = Snippet("s/x", "snippets/s/x.py", "/nowhere/x.py", "python", "print(1)\\n", "print(1)", 1, Tags())

def prepared():  # a worker that prepared a run directory, not yet handed to a supervisor
    run_dir, _ = prepare_run_dir(snippet)
    print(run_dir, flush=True)
    time.sleep(3600)

threading.Thread(target=prepared, daemon=True).start()
threading.Thread(target=lambda: ForkServer(sys.argv[1], ()), daemon=True).start()  # a server still preloading
while True:
    time.sleep(0.05)  # the build's main thread, at work
"""


def test_a_sigterm_stops_the_runs_and_what_they_left_then_ends_the_process_by_sigterm(
    tmp_path: Path, slow_python: Path
) -> None:
    """Seen by a new user: SIGTERM (a cancelled CI job, ``timeout``) to a
    command or a build left its fork server running for seconds after it had
    ended (61 of 70 tries) and run directories in /dev/shm for good (11 of 70):
    the default action ends the process before any clean-up."""
    temp = tmp_path / "temp"
    temp.mkdir()
    script = tmp_path / "terminated.py"
    script.write_text(TERMINATED)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(slow_python)], env=_env(TMPDIR=str(temp)), stdout=subprocess.PIPE, text=True
    )
    try:
        run_dir = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert os.path.isdir(run_dir)
        server, home = _starting_server(slow_python, parent=proc.pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM  # ended as the default action ends it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _group_gone(server, within=0.5)
    assert not os.path.lexists(run_dir) and not os.path.lexists(home)
    assert list(temp.iterdir()) == []


FAKE_CARGO = """\
#!/bin/sh
touch "{marker}"
sleep {seconds} &
wait
"""


def test_a_rust_snippets_cargo_build_and_run_directory_go_with_the_runs(
    tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM to the chapter's build left /tmp/snipcheck-rs-* behind, and
    a Ctrl-C or a SIGTERM left cargo (and what it starts) compiling after the
    command had ended: it ran in the runs' daemon thread, unknown to the stop."""
    from snipcheck.run.rust import RustRunner

    tools, runs, marker = tmp_path / "bin", tmp_path / "runs", tmp_path / "building"
    tools.mkdir()
    runs.mkdir()
    seconds = f"600.{os.getpid()}"  # its own, beside tests in other workers
    sleeping = f"sleep {seconds}"
    (tools / "cargo").write_text(FAKE_CARGO.format(marker=marker, seconds=seconds))
    (tools / "cargo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(tempfile, "tempdir", str(runs))  # the run directory goes here, away from others
    snippet = Snippet("rs/slow", "snippets/rs/slow.rs", "/nowhere/slow.rs", "rust", "fn main() {}\n", "fn main() {}", 1, Tags())
    ended: list[BaseException | object] = []

    def run() -> None:
        try:
            ended.append(RustRunner(tmp_path / "build", stamp).run(snippet, timeout=TIMEOUT, output_limit=LIMIT))
        except BaseException as exc:  # noqa: BLE001 - what the thread ended with is the finding
            ended.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not (marker.exists() and _running_named(sleeping)) and time.monotonic() < deadline:
        time.sleep(0.01)
    (sleeper,) = _running_named(sleeping)
    assert [p.name[:13] for p in runs.iterdir()] == ["snipcheck-rs-"]
    stopping.stop_live_runs(grace=0)
    deadline = time.monotonic() + 5
    while sleeper in _running_named(sleeping) and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert sleeper not in _running_named(sleeping)  # killed with cargo's whole group
        assert list(runs.iterdir()) == []
        thread.join(10)
        assert len(ended) == 1 and isinstance(ended[0], RunError), ended
    finally:
        for pid in _running_named(sleeping):
            os.kill(pid, signal.SIGKILL)


def _running_named(command: str) -> list[int]:
    """Processes (not zombies) whose command line is ``command``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").strip() == command.encode():
                found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found
