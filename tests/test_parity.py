"""Runner parity: a run is exactly ``python snippets/<id>.py`` (issue 11).

Every snippet of the parity corpus (``tests/roots/parity-corpus``) observes its
own process: exit paths, ``sys.modules``, argv, environment, working
directory, umask, signal dispositions, resource limits, open descriptors,
closed or redirected stdout/stderr, stdin, locale, hash seed, RNG, recursion
depth.  Each is run three ways, plain ``python file.py`` in the fixed
environment of a run, the subprocess runner and the fork runner (torch and
torch._dynamo preloaded, as the chapter's conf.py preloads them), each runner
with and without a PID namespace, and must give byte-identical stdout, stderr, terminal order (stdout and stderr interleaved
as a terminal shows them) and exit status.

Two things are normalised on every side alike, because they differ between two
plain runs too: the run directory (a fresh one per run) and object addresses
(``0x7f…``).  What cannot be identical is the short list in
:data:`snipcheck.runner.DIFFERENCES`; ``test_documented_differences_*`` keep it true.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.runner import DIFFERENCES, Runner, make_runner
from snipcheck.runner.capture import empty_stdin
from snipcheck.runner.python import child_environment, output_rewrite, prepare_run_dir
from snipcheck.snippets import load

CORPUS = Path(__file__).parent / "roots" / "parity-corpus"
IDS = sorted(f"parity/{p.stem}" for p in (CORPUS / "snippets" / "parity").glob("*.py"))
TIMEOUT = 60.0
LIMIT = 16 << 20  # the corpus prints a few megabytes on purpose
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
#: The runner configurations: kind, and whether PID namespaces are allowed.
#: What the fork server preloads: what the chapter's conf.py preloads.
PRELOAD = ("torch", "torch._dynamo")
WAYS = [("subprocess", True), ("fork", True), ("subprocess", False), ("fork", False)]


@dataclass(frozen=True)
class Seen:
    """What one way of running showed: per stream, as a terminal interleaves them, and how it ended."""

    stdout: str
    stderr: str
    terminal: str
    ended: str


def normal(text: str) -> str:
    return _ADDRESS.sub("0x…", text)


def ending(status: int | None, signal_name: str | None) -> str:
    return f"signal {signal_name}" if signal_name else f"exit {status}"


def plain(snippet: Snippet) -> Seen:
    """``python snippets/<id>.py`` in the fixed environment of a run: a fresh run
    directory as working directory, its environment, stdin at end-of-file.
    Run twice: stdout and stderr apart, then into one pipe as a terminal
    interleaves them."""
    seen = []
    for merged in (False, True):
        run_dir, script = prepare_run_dir(snippet)
        env = child_environment(run_dir)
        env.pop("PYTHONPATH")
        stdin = empty_stdin()
        try:
            done = subprocess.run(
                [sys.executable, script], cwd=run_dir, env=env, stdin=stdin, capture_output=not merged,
                stdout=subprocess.PIPE if merged else None, stderr=subprocess.STDOUT if merged else None,
                timeout=TIMEOUT, check=False,
            )  # fmt: skip
        finally:
            os.close(stdin)
            shutil.rmtree(run_dir, ignore_errors=True)

        def text(data: bytes, run_dir: str = run_dir) -> str:
            decoded = data.decode("utf-8", "backslashreplace")
            for old, new in output_rewrite(run_dir).items():  # what the runners do to their output
                decoded = decoded.replace(old, new)
            return normal(decoded)

        seen.append((text(done.stdout), text(done.stderr or b""), done.returncode))
    (out, err, code), (terminal, _, code2) = seen
    assert code == code2, f"{snippet.id} ends differently between two plain runs"
    name = None
    if code < 0:
        import signal

        name = signal.Signals(-code).name
    return Seen(out, err, terminal, ending(code if code >= 0 else None, name))


def observed(result: RunResult) -> Seen:
    out = "".join(e.text for e in result.events if e.stream == "stdout")
    err = "".join(e.text for e in result.events if e.stream == "stderr")
    terminal = "".join(e.text for e in result.events)
    assert not result.timed_out and result.truncated_bytes == 0
    return Seen(normal(out), normal(err), normal(terminal), ending(result.exit_status, result.signal))


@pytest.fixture(scope="module")
def plain_results(stamp: Stamp) -> dict[str, Seen]:
    return {snippet_id: plain(load(snippet_id, CORPUS / "snippets", CORPUS)) for snippet_id in IDS}


@pytest.fixture(scope="module", params=WAYS, ids=[f"{k}-{'pidns' if ns else 'no-pidns'}" for k, ns in WAYS])
def way(request: pytest.FixtureRequest, stamp: Stamp) -> Iterator[Runner]:
    kind, pidns = request.param
    patch = pytest.MonkeyPatch()
    if not pidns:
        patch.setenv("SNIPCHECK_NAMESPACES", "0")
    made = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=PRELOAD)
    try:
        yield made
    finally:
        getattr(made, "close", lambda: None)()
        patch.undo()


def test_the_corpus_covers_the_issue() -> None:
    wanted = {
        "exit_keyboard_interrupt", "exit_sys_exit_message", "exit_custom_excepthook", "exit_atexit", "exit_threads",
        "recursion_limit", "main_module", "sys_modules", "sys_modules_torch", "argv_flags", "environment",
        "working_directory", "umask", "signal_dispositions", "resource_limits", "open_fds", "closerange",
        "close_stdout", "close_both", "dup2_devnull", "stdin_eof", "locale_time", "hash_seed", "rng_seeded",
    }  # fmt: skip
    assert wanted <= {i.split("/")[1] for i in IDS}


@pytest.mark.parametrize("snippet_id", IDS)
def test_a_run_is_exactly_plain_python(way: Runner, plain_results: dict[str, Seen], snippet_id: str) -> None:
    snippet = load(snippet_id, CORPUS / "snippets", CORPUS)
    if way.name == "fork":
        assert way.unavailable is None, way.unavailable  # type: ignore[attr-defined]
    result = way.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.runner == way.name
    expected = plain_results[snippet_id]
    seen = observed(result)
    assert seen.ended == expected.ended
    assert seen.stdout == expected.stdout
    assert seen.stderr == expected.stderr
    assert seen.terminal == expected.terminal


def test_the_documented_differences_are_few() -> None:
    assert 0 < len(DIFFERENCES) <= 8
    assert all(text.strip() and "\n" not in text for text in DIFFERENCES.values())


DIFFERENCE_PROBE = """\
import gc, os, resource, stat, sys
print("sockets", stat.S_ISSOCK(os.fstat(1).st_mode), stat.S_ISSOCK(os.fstat(2).st_mode))
print("data limit", resource.getrlimit(resource.RLIMIT_DATA)[0])
print("frame below", sys._getframe().f_back is not None)
print("frozen objects", gc.get_freeze_count() > 0)
try:
    os.write(2, b"x" * (5 << 20))
except OSError as exc:
    print("a 5 MiB write(2) fails:", exc.errno in (90, 105))
"""


def test_documented_differences_hold_as_documented(tmp_path: Path, stamp: Stamp) -> None:
    # The other side of the parity test: each entry of DIFFERENCES that a snippet
    # can print is exactly as documented (so the list stays true and complete).
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "probe.py").write_text(DIFFERENCE_PROBE)
    snippet = load("probe", tmp_path / "snippets", tmp_path)
    assert plain(snippet).stdout == "sockets False False\ndata limit -1\nframe below False\nfrozen objects False\n"
    expected = {
        "subprocess": "sockets True True\ndata limit 4294967296\nframe below False\nfrozen objects False\n",
        "fork": "sockets True True\ndata limit 4294967296\nframe below True\nfrozen objects True\n",
    }
    for kind, wanted in expected.items():
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        out = "".join(e.text for e in result.events if e.stream == "stdout")
        assert out == wanted + "a 5 MiB write(2) fails: True\n", kind
    assert {"process ids", "stdout and stderr", "memory limit"} <= set(DIFFERENCES)


SIGNAL_33_PROBE = """\
import threading

def signal_33_caught():
    with open("/proc/self/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt"))
    return bool(mask >> 32 & 1)

print("before a thread", signal_33_caught())
thread = threading.Thread(target=lambda: None)
thread.start()
thread.join()
print("after a thread", signal_33_caught())
"""


def test_documented_difference_of_glibcs_signal_33_holds(tmp_path: Path, stamp: Stamp) -> None:
    # DIFFERENCES["fork runner: signal 33"]: a preload that starts a thread (numpy's
    # OpenBLAS) leaves glibc's SIGSETXID caught in every forked run; a plain run
    # catches it once the snippet starts a thread of its own.
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "probe.py").write_text(SIGNAL_33_PROBE)
    snippet = load("probe", tmp_path / "snippets", tmp_path)
    assert plain(snippet).stdout == "before a thread False\nafter a thread True\n"
    expected = {(): "before a thread False\n", ("numpy",): "before a thread True\n"}
    for preload, first in expected.items():
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=preload)
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        assert result.runner == "fork"
        out = "".join(e.text for e in result.events if e.stream == "stdout")
        assert out == first + "after a thread True\n", preload
    assert "fork runner: signal 33" in DIFFERENCES


C_EXIT_PROBE = """\
import ctypes
libc = ctypes.CDLL(None)
# atexit(3) itself lives in libc_nonshared.a; glibc exports what it calls.
# A C exit handler with an effect one can see: the process dies of SIGABRT.
getattr(libc, "__cxa_atexit")(libc.abort, None, None)
print("registered")
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="registers its handler with glibc's __cxa_atexit")
def test_the_fork_runner_skips_c_exit_handlers_as_documented(tmp_path: Path, stamp: Stamp) -> None:
    # DIFFERENCES["fork runner: C exit handlers"]: plain python (and the
    # subprocess runner, which ends as python does) runs the handler at exit;
    # a forked run ends with _exit after flushing C stdio, and never runs it.
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "cexit.py").write_text(C_EXIT_PROBE)
    snippet = load("cexit", tmp_path / "snippets", tmp_path)
    assert plain(snippet).ended == "signal SIGABRT"
    endings = {}
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        assert "".join(e.text for e in result.events if e.stream == "stdout") == "registered\n", kind
        endings[kind] = ending(result.exit_status, result.signal)
    assert endings == {"subprocess": "signal SIGABRT", "fork": "exit 0"}
    assert "fork runner: C exit handlers" in DIFFERENCES
