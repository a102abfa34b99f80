"""Ctrl-C during a command (issue 23 item 7): one line on stderr, exit status
130, no traceback, and the pages as they were, whatever moment it comes.

Was: exit 130 with a ``KeyboardInterrupt`` traceback, or ``OSError: [Errno 9]
Bad file descriptor`` from the capture's ``atexit`` handler.

The process tests send a real SIGINT to the command's process group, as a
terminal does, once a gated snippet (tests/gates.py) is running: no sleep
decides when.  The moments inside the parent (judging, the read-back,
writing) are reached in-process, where the signal is raised from the code
that runs at that moment.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_cache
from gates import Gate, as_a_terminal_starts_it, ctrl_c
from snipcheck import files
from snipcheck.app import cli
from snipcheck.judge import verdict

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_cache_dir = {cache!r}
snipcheck_runner = {runner!r}
snipcheck_preload = []
snipcheck_fork_min_runs = 0
"""


def project(tmp: Path, probe_cache: Path, snippets: dict[str, str], runner: str = "subprocess") -> Path:
    """Pages a.md and b.md, each placing one of ``snippets`` (id → code) with an empty body."""
    root = tmp / "p"
    (root / "docs").mkdir(parents=True)
    cache = fresh_cache(tmp / "cache", probe_cache)
    (root / "conf.py").write_text(CONF.format(cache=str(cache), runner=runner))
    (root / "docs" / "index.md").write_text("# Index\n")
    for name, snippet_id in zip("ab", snippets, strict=False):
        (root / "docs" / f"{name}.md").write_text(f"# {name}\n\n```{{snippet}} {snippet_id}\n```\n")
    for snippet_id, code in snippets.items():
        path = root / "snippets" / f"{snippet_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    return root


def every_file(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def start(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", *args],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=as_a_terminal_starts_it,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("runner", "run"),
    [("subprocess", 1), ("subprocess", 2), ("fork", 1), ("fork", 2)],
    ids=["first-run", "second-run", "fork-first-run", "fork-second-run"],
)
def test_ctrl_c_during_a_run_of_record_says_nothing_was_written(
    tmp_path: Path, probe_cache: Path, runner: str, run: int
) -> None:
    # run 2: record runs every output it would write a second time, afresh
    gate = Gate(tmp_path / "gate")
    root = project(tmp_path, probe_cache, {"g/slow": gate.snippet("released")}, runner)
    before = every_file(root)
    command = start(root, "record")
    gate.wait_for_run(1, command)
    if run == 2:
        gate.open()
        gate.wait_for_run(2, command)
    ctrl_c(command)
    out, err = command.communicate(timeout=120)
    assert (command.returncode, out, err) == (130, "", "interrupted; nothing was written\n")
    assert every_file(root) == before
    gate.wait_until_none_runs()


@pytest.mark.parametrize("runner", ["subprocess", "fork"])
def test_a_ctrl_c_a_worker_thread_takes_still_stops_the_command(
    tmp_path: Path, probe_cache: Path, runner: str
) -> None:
    """The kernel hands a Ctrl-C sent to a process to any thread of it, not
    always the main one, and Python's handler only flags it for the main
    thread: asleep in ``Future.result()`` on a gated run, that thread was
    never woken, and ``record`` said nothing and did not exit (the rare hang
    of ``[fork-second-run]`` above, about one full test run in two).  Here the
    signal goes to every thread but the main one (``tgkill``), which is the
    kernel's choice made certain."""
    gate = Gate(tmp_path / "gate")
    root = project(tmp_path, probe_cache, {"g/slow": gate.snippet("released")}, runner)
    command = start(root, "record")
    gate.wait_for_run(1, command)
    gate.open()
    gate.wait_for_run(2, command)
    workers = [int(tid) for tid in os.listdir(f"/proc/{command.pid}/task") if int(tid) != command.pid]
    assert workers, "the command runs its snippets in worker threads"
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    for tid in workers:
        assert tgkill(command.pid, tid, signal.SIGINT) == 0, os.strerror(ctypes.get_errno())
    try:
        out, err = command.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        gate.open_for_good()
        command.communicate(timeout=120)
        raise AssertionError("the command went on waiting for the run after the Ctrl-C") from None
    assert (command.returncode, out, err) == (130, "", "interrupted; nothing was written\n")
    gate.wait_until_none_runs()


@pytest.mark.parametrize(
    "args",
    [["run", "g/slow"], ["verify", "--json", "report.json", "--html", "report.html"], ["accept", "--force"],
     ["review", "--force"]],
    ids=lambda args: args[0],
)  # fmt: skip
def test_ctrl_c_during_a_run_of_any_command_says_so_in_one_line(
    tmp_path: Path, probe_cache: Path, args: list[str]
) -> None:
    gate = Gate(tmp_path / "gate")
    root = project(tmp_path, probe_cache, {"g/slow": gate.snippet("released")})
    (root / "docs" / "a.md").write_text("# a\n\n```{snippet} g/slow\nstated\n```\n")
    before = every_file(root)
    command = start(root, *args)
    gate.wait_for_run(1, command)
    ctrl_c(command)
    out, err = command.communicate(timeout=120)
    assert (command.returncode, err) == (130, "interrupted; nothing was written\n"), out
    assert "Traceback" not in out
    assert every_file(root) == before  # no report, no review state, no page changed
    gate.wait_until_none_runs()


@pytest.mark.parametrize(
    ("args", "runner"),
    [(["accept", "--force"], "fork"), (["verify"], "subprocess"), (["run", "g/slow"], "fork")],
    ids=lambda value: value[0] if isinstance(value, list) else value,
)
def test_a_sigterm_during_a_run_stops_the_command_says_so_and_ends_it_by_sigterm(
    tmp_path: Path, probe_cache: Path, args: list[str], runner: str
) -> None:
    # Was (trial, stop 45): a SIGTERM to the process group while the runs went
    # on stopped the runs only; the command went on, reported each snippet
    # as an error ("interrupted: the runs are being stopped") and ended as if
    # it had checked them: accept with status 0 ("accepted 0 output(s)"),
    # verify and run with 1.
    gate = Gate(tmp_path / "gate")
    root = project(tmp_path, probe_cache, {"g/slow": gate.snippet("released")}, runner)
    (root / "docs" / "a.md").write_text("# a\n\n```{snippet} g/slow\nstated\n```\n")
    before = every_file(root)
    command = start(root, *args)
    gate.wait_for_run(1, command)
    os.killpg(command.pid, signal.SIGTERM)
    out, err = command.communicate(timeout=120)
    assert (command.returncode, err) == (-signal.SIGTERM, "terminated; nothing was written\n"), out
    assert "ERROR" not in out and "Traceback" not in out
    assert every_file(root) == before
    gate.wait_until_none_runs()


@pytest.mark.parametrize("runner", ["subprocess", "fork"])
def test_ctrl_c_during_a_shard_says_so_in_one_line_and_runs_nothing_again(
    tmp_path: Path, probe_cache: Path, runner: str
) -> None:
    """A Ctrl-C reaches the whole process group, the fork server too: the
    shard must not take the server's end for a failure and run the snippet
    again ("fork server failed ...; running g/slow again", seen once in a
    new-user trial; not reproduced here, so this holds the message only)."""
    gate = Gate(tmp_path / "gate")
    root = project(tmp_path, probe_cache, {"g/slow": gate.snippet("released"), "g/next": "print('next')\n"}, runner=runner)
    (root / "conf.py").write_text((root / "conf.py").read_text() + "\nsnipcheck_fork_min_runs = 0\nsnipcheck_jobs = 1\n")
    command = start(root, "execute", "--shard", "1/1", "--out", str(tmp_path / "shard"))
    gate.wait_for_run(1, command)
    ctrl_c(command)
    out, err = command.communicate(timeout=120)
    assert (command.returncode, err) == (130, "interrupted; nothing was written\n"), out
    assert not (tmp_path / "shard" / "manifest.json").exists()
    gate.wait_until_none_runs()


# --- moments inside the parent ----------------------------------------------------------


@pytest.fixture(autouse=True)
def ctrl_c_raises() -> Any:
    """A terminal's Ctrl-C raises ``KeyboardInterrupt`` in this process, as in
    a command started from a shell: where the tests themselves were started in
    the background of a shell without job control, SIGINT comes ignored
    (POSIX), and the in-process commands below would never see it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def two_pages(tmp_path: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = project(tmp_path, probe_cache, {"f/a": "print('from a')\n", "f/b": "print('from b')\n"})
    monkeypatch.chdir(root)
    return root


def interrupt_at(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, after: bool = False, nth: int = 1,
    when: Callable[..., bool] = lambda *args, **kwargs: True,
) -> None:  # fmt: skip
    """Make the ``nth`` call of ``owner.name`` for which ``when(*args,
    **kwargs)`` holds raise a real SIGINT (before the call, or right after it
    with ``after``); only calls in the main thread count, where a terminal's
    Ctrl-C is handled."""
    real: Callable[..., Any] = getattr(owner, name)
    calls = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counts = threading.current_thread() is threading.main_thread() and when(*args, **kwargs)
        calls[0] += counts
        if counts and calls[0] == nth and not after:
            signal.raise_signal(signal.SIGINT)
        result = real(*args, **kwargs)
        if counts and calls[0] == nth and after:
            signal.raise_signal(signal.SIGINT)
        return result

    monkeypatch.setattr(owner, name, wrapper)


def record(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int | str, str]:
    try:
        status: int | str = cli.main(["--root", str(root), "--no-cache", "record"])
    except KeyboardInterrupt:
        status = "KeyboardInterrupt escaped"  # it would end the command in a traceback
    return status, capsys.readouterr().err


def leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("owner", "name", "after"),
    [
        ("snipcheck.app.index_reader", "read_index", False),  # reading the pages
        ("snipcheck.judge.verdict", "judge", False),  # comparing the first run
        ("snipcheck.pending.variation:Rerun", "problem", False),  # comparing the runs again under other hash seeds
        ("snipcheck.app.project:Project", "rewrite", False),
        ("snipcheck.app.index_reader", "read_back_cells", True),  # the rewritten pages parsed again
        ("snipcheck.files", "_temporary", True),  # the new bytes written, nothing replaced yet
    ],
    ids=["reading", "judging", "second-run", "rewriting", "read-back", "writing"],
)
def test_ctrl_c_before_the_first_page_is_replaced_writes_nothing(
    two_pages: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    owner: str, name: str, after: bool,
) -> None:  # fmt: skip
    import importlib

    module, _, attr = owner.partition(":")
    target = importlib.import_module(module)
    # a temporary file counts only beside a page (not beside a cache or index file)
    page: Callable[..., bool] = lambda path, *args, **kwargs: Path(path).parent.name == "docs"
    interrupt_at(monkeypatch, getattr(target, attr) if attr else target, name, after,
                 when=page if name == "_temporary" else lambda *args, **kwargs: True)  # fmt: skip
    before = every_file(two_pages)
    assert record(two_pages, capsys) == (130, "interrupted; nothing was written\n")
    assert every_file(two_pages) == before
    assert leftovers(two_pages) == []


def test_ctrl_c_after_the_first_page_is_replaced_finishes_the_write_and_says_so(
    two_pages: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write is all or nothing: once one page holds its new output, the
    # others are written too, and the message says which.
    # files.os is the os module: only the replace of a page counts (a cache
    # or index write elsewhere in the process may replace a file first)
    interrupt_at(monkeypatch, files.os, "replace", after=True, when=lambda tmp, path: Path(path).parent.name == "docs")
    status, err = record(two_pages, capsys)
    assert (status, err) == (130, "interrupted after writing docs/a.md, docs/b.md in full; nothing else was written\n")
    assert (two_pages / "docs" / "a.md").read_text() == "# a\n\n```{snippet} f/a\nfrom a\n```\n"
    assert (two_pages / "docs" / "b.md").read_text() == "# b\n\n```{snippet} f/b\nfrom b\n```\n"
    assert leftovers(two_pages) == []


def test_a_second_ctrl_c_while_the_runs_stop_ends_at_once_without_a_traceback(
    two_pages: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from snipcheck.run import stopping

    interrupt_at(monkeypatch, verdict, "judge")
    exits: list[int] = []

    def stop_live_runs(grace: float = 1.0) -> None:
        signal.raise_signal(signal.SIGINT)  # the second Ctrl-C

    monkeypatch.setattr(stopping, "stop_live_runs", stop_live_runs)
    monkeypatch.setattr(os, "_exit", lambda status: exits.append(status))
    assert record(two_pages, capsys) == (130, "interrupted; nothing was written\n")
    assert exits == [130]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back


def test_stop_live_runs_is_quiet_when_a_run_closes_its_socket_meanwhile(monkeypatch: pytest.MonkeyPatch) -> None:
    # Was: OSError: [Errno 9] Bad file descriptor from the atexit handler, when
    # a run's thread closed its control socket between the two loops.
    import socket

    from snipcheck.run import stopping

    mine, theirs = socket.socketpair()
    real_shutdown = mine.shutdown

    class Closing:
        def shutdown(self, how: int) -> None:
            real_shutdown(how)
            mine.close()  # the run's own thread, ending its run

        def __getattr__(self, attr: str) -> Any:
            return getattr(mine, attr)

    monkeypatch.setitem(stopping._live, id(mine), (Closing(), None))
    stopping.stop_live_runs(grace=0.1)
    theirs.close()


def test_ctrl_c_while_new_creates_its_file_leaves_it_whole_and_says_so(
    two_pages: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was: a KeyboardInterrupt traceback and an empty snippets/f/new.py (the
    # interrupt came between creating the file and filling it).
    from snipcheck.app import scaffold

    monkeypatch.setattr(scaffold, "open", open, raising=False)
    interrupt_at(monkeypatch, scaffold, "open", after=True)
    try:
        status: int | str = cli.main(["--root", str(two_pages), "new", "f/new"])
    except KeyboardInterrupt:
        status = "KeyboardInterrupt escaped"
    created = two_pages / "snippets" / "f" / "new.py"
    assert (status, capsys.readouterr().err) == (
        130, "interrupted after writing snippets/f/new.py in full; nothing else was written\n"
    )
    assert created.read_text() == scaffold.PYTHON


#: Raises KeyboardInterrupt when the command line imports ``snipcheck.app.cli.verify``,
#: as a Ctrl-C does in the first ~0.2 s of a command, then starts ``python -m snipcheck``.
INTERRUPTED_IMPORT = """\
import runpy, sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "snipcheck.app.cli.verify":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = ["snipcheck", *sys.argv[1:]]
runpy.run_module("snipcheck", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_the_command_line_is_still_importing_is_one_line_and_130(tmp_path: Path) -> None:
    # Was: Python's KeyboardInterrupt traceback (status 1 through runpy), from
    # the import of the command line's modules, before main() could catch it.
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT, "verify"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "interrupted; nothing was written\n", "")


def test_ctrl_c_while_the_arguments_are_parsed_is_one_line_and_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was: main() parsed the arguments (and took the shards' key) before its
    # try, so a Ctrl-C there was a traceback.
    def parser() -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_parser", parser)
    try:
        status = cli.main(["verify"])
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped main() as a KeyboardInterrupt")
    assert status == 130
    assert capsys.readouterr().err == "interrupted; nothing was written\n"


def test_the_launchers_status_after_a_ctrl_c_is_the_command_lines() -> None:
    from snipcheck.app import launch
    from snipcheck.app.cli import session

    assert launch.INTERRUPTED == session.INTERRUPTED == cli.INTERRUPTED


#: Sends this process a Ctrl-C from an atexit handler: once the command is done,
#: while the interpreter ends (handlers run last registered first, so after snipcheck's).
CTRL_C_AT_EXIT = """\
import atexit, os, runpy, signal, sys

atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
sys.argv = ["snipcheck", *sys.argv[1:]]
runpy.run_module("snipcheck", run_name="__main__", alter_sys=True)
"""


def test_a_ctrl_c_once_the_command_is_done_leaves_its_status_as_it_is(tmp_path: Path) -> None:
    # Was (trial, stop 45): a Ctrl-C just after the page was written and the
    # summary printed ended the process by SIGINT (130 in a shell), with no
    # line said: a command that had done all its work read as interrupted.
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_AT_EXIT, "normalizers"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, preexec_fn=as_a_terminal_starts_it,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout
