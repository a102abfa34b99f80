"""Nothing a snippet starts outlives its run, and no snippet takes the build down (cases 11-16).

"The build" here is ``python -m snipcheck run`` in a subprocess (the same
executor and runners as a Sphinx build), with a TMPDIR of its own so that what
it leaves behind can be seen.  Every test runs with PID namespaces (where the
kernel allows them: root here and in CI) and without them
(``SNIPCHECK_NAMESPACES=0``, the path an unprivileged user gets).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from load import RUN_PID, Inbox, alive, host_pid, spec_gone, wait_gone
from run_command_support import cli_env, cli_project
from snipcheck.model import RunResult, Stamp
from snipcheck.run import Runner, make_runner, sandbox
from snipcheck.run.stopping import RunError
from snipcheck.sources.snippets import load

MODES = ["pidns", "no-pidns"]


def namespaces_allowed() -> bool:
    with sandbox.new_pid_namespace() as allowed:  # a namespace nobody enters: harmless
        return allowed


def mode_env(mode: str) -> dict[str, str]:
    if mode == "pidns" and not namespaces_allowed():
        pytest.skip(f"PID namespaces are not allowed here: {sandbox.refused()}")
    return {"SNIPCHECK_NAMESPACES": "1" if mode == "pidns" else "0"}


def wait_for(path: Path, seconds: float = 60.0, process: subprocess.Popen[str] | None = None) -> str:
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_text()):
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the build ended early: {process.communicate()}")
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text()


def leftovers(tmpdir: Path, seconds: float = 10.0) -> list[str]:
    """``snipcheck-*`` entries still in the build's TMPDIR after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        left = sorted(p.name for p in tmpdir.iterdir() if p.name.startswith("snipcheck-"))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


SPIN = """\
{send}
while True:
    pass
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("runner", ["fork", "subprocess"])
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "SIGINT"])
def test_cases_11_and_16_killing_the_build_kills_its_snippets_and_removes_their_folders(
    tmp_path: Path, runner: str, how: str, mode: str
) -> None:
    # Was (11): after SIGTERM or SIGKILL of the build, `while True: pass` kept running
    # with parent PID 1, past its timeout.  Was (16): snipcheck-* run folders and
    # snipcheck-forkserver-* homes left in $TMPDIR after Ctrl-C, SIGTERM or SIGKILL.
    env = cli_env(tmp_path, **mode_env(mode))
    inbox = Inbox()  # where the snippet says which process it is (the file system is read-only to it)
    root = cli_project(tmp_path / "p", runner, {"spin": SPIN.format(send=inbox.send_code(RUN_PID))})
    build = subprocess.Popen(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", "run", "spin"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - as a terminal's build
    )  # fmt: skip
    try:
        found = host_pid(inbox.wait(process=build))
        assert found is not None
        pid = found
        assert alive(pid)
        build.send_signal(getattr(signal, how))
        build.communicate(timeout=60)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
        inbox.close()
    assert wait_gone(pid), f"the snippet (pid {pid}) outlived the build killed by {how}"
    assert leftovers(Path(env["TMPDIR"])) == []


DAEMON = """\
import os, sys, time
told, tell = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        sys.stdout = open(os.devnull, "w")
        {send}
        os.write(tell, b"x")
        time.sleep(120)
    os._exit(0)
os.wait()
os.read(told, 1)
print("the daemon runs")
"""


def made(kind: str, stamp: Stamp) -> Runner:
    return make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["fork", "subprocess"])
def test_case_14_a_double_forked_setsid_daemon_does_not_outlive_its_run(
    tmp_path: Path, stamp: Stamp, kind: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was: it escaped the process-group kill and outlived the build.
    for key, value in mode_env(mode).items():
        monkeypatch.setenv(key, value)
    inbox = Inbox()
    root = cli_project(tmp_path / "p", kind, {"daemon": DAEMON.format(send=inbox.send_code(RUN_PID))})
    runner = made(kind, stamp)
    try:
        result = runner.run(load("daemon", root / "snippets", root), timeout=60, output_limit=1 << 20)
        (spec,) = inbox.lines()
    finally:
        getattr(runner, "close", lambda: None)()
        inbox.close()
    assert (result.exit_status, result.events[0].text) == (0, "the daemon runs\n")
    deadline = time.monotonic() + 5.0
    while not spec_gone(spec) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spec_gone(spec), f"the daemon ({spec}: pid {host_pid(spec)}) outlived its run"


INNOCENT = "import time\ntime.sleep(1.5)\nprint('innocent {n} done')\n"
KILLER = """\
import os, signal, time
time.sleep(0.3)
os.kill(os.getppid(), signal.{sig})
time.sleep(0.3)
print("the killer goes on")
"""


def run_all(runner: Runner, snippets: list) -> list[RunResult | BaseException]:  # type: ignore[type-arg]
    results: list[RunResult | BaseException] = [RuntimeError("not run")] * len(snippets)

    def one(i: int) -> None:
        try:
            results[i] = runner.run(snippets[i], timeout=60, output_limit=1 << 20)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(snippets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_case_12_a_snippet_signalling_its_parent_under_the_fork_runner_harms_no_innocent(
    tmp_path: Path, stamp: Stamp, sig: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was: innocent snippets in flight reported "killed by SIGKILL" (4 of 6 builds),
    # and the server's home folder was left behind.
    for key, value in mode_env(mode).items():
        monkeypatch.setenv(key, value)
    sources = {f"innocent{n}": INNOCENT.format(n=n) for n in range(4)}
    sources["killer"] = KILLER.format(sig=sig)
    root = cli_project(tmp_path / "p", "fork", sources)
    runner = made("fork", stamp)
    assert runner.unavailable is None  # type: ignore[attr-defined]
    server = runner._server  # type: ignore[attr-defined] # white-box: the server process
    home = Path(server._home)
    try:
        snippets = [load(i, root / "snippets", root) for i in sources]
        results = run_all(runner, snippets)
        for n in range(4):
            result = results[n]
            assert isinstance(result, RunResult), result
            assert (result.exit_status, result.events[0].text) == (0, f"innocent {n} done\n")
        killer = results[4]
        if mode == "no-pidns" and sig == "SIGKILL":
            # Its parent, the run's supervisor, can be killed: the run is reported
            # as such, and nothing else is touched.
            assert isinstance(killer, RunError) and "supervisor" in str(killer)
        else:
            # The supervisor is the snippet's parent; it ignores the signal.
            assert isinstance(killer, RunResult) and killer.exit_status == 0, killer
            assert killer.events[0].text == "the killer goes on\n"
        assert server._proc.poll() is None  # the server lives on
        again = runner.run(snippets[0], timeout=60, output_limit=1 << 20)
        assert again.events[0].text == "innocent 0 done\n"
    finally:
        runner.close()  # type: ignore[attr-defined]
    assert not home.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_case_13_a_snippet_signalling_its_parent_under_the_subprocess_runner_does_not_kill_the_build(
    tmp_path: Path, sig: str, mode: str
) -> None:
    # Was: sphinx-build itself died (exit 137, or Terminated, or Interrupted!), with
    # no message naming the snippet.
    env = cli_env(tmp_path, **mode_env(mode))
    sources = {"innocent": INNOCENT.format(n=0), "killer": KILLER.format(sig=sig)}
    root = cli_project(tmp_path / "p", "subprocess", sources)
    done = subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", "run", "killer", "innocent"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert "── snippets/innocent.py\ninnocent 0 done\n── exit status 0" in done.stdout, done.stdout + done.stderr
    if mode == "no-pidns" and sig == "SIGKILL":
        assert done.returncode == 1
        assert "── snippets/killer.py\n   the run's supervisor process was killed before it could report" in done.stdout
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "── snippets/killer.py\nthe killer goes on\n── exit status 0" in done.stdout
    assert leftovers(Path(env["TMPDIR"])) == []


def test_the_snippets_parent_is_the_runs_supervisor_not_the_build(stamp: Stamp, tmp_path: Path) -> None:
    root = cli_project(
        tmp_path / "p", "subprocess", {"ids": "import os\nprint(os.getpid(), os.getppid(), os.getsid(0) == os.getpid())\n"}
    )
    snippet = load("ids", root / "snippets", root)
    for kind in ("fork", "subprocess"):
        runner = made(kind, stamp)
        try:
            result = runner.run(snippet, timeout=60, output_limit=1 << 20)
        finally:
            getattr(runner, "close", lambda: None)()
        pid, ppid, leader = result.events[0].text.split()
        assert int(ppid) != os.getpid() and leader == "True"
        if namespaces_allowed():
            assert (pid, ppid) == ("2", "1")  # the supervisor is init of the run's namespace


@pytest.mark.parametrize("mode", ["pidns", "no-pidns"])
def test_the_build_summary_says_when_runs_get_no_pid_namespace(tmp_path: Path, mode: str) -> None:
    env = cli_env(tmp_path, NO_COLOR="1", **mode_env(mode))
    root = cli_project(tmp_path / "p", "subprocess", {"hello": "print('hello')\n"}, extensions=["snipcheck"])
    (root / "index.rst").write_text("Page\n====\n\n.. snippet:: hello\n\n   hello\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", str(root), str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = next(line for line in done.stdout.splitlines() if line.startswith("snipcheck: 1 snippets"))
    if mode == "pidns":
        assert "namespace" not in summary and "read-only" not in summary
    else:
        assert summary.endswith(
            "; no PID or mount namespace for the runs here (SNIPCHECK_NAMESPACES=0): each run's supervisor still "
            "ends what the snippet started, but a snippet could signal other processes of this user, change or "
            "remove the project's files and any other its user may change, and leave files in /tmp and /dev/shm"
        )
        assert summary.count("SNIPCHECK_NAMESPACES=0") == 1
