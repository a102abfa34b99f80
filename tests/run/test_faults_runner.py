"""Fault tolerance of the runners (issue 6): snippets that misbehave.

Each test runs under both Python runners (the ``runner`` fixture of
runner_support.py) unless it is about the fork runner itself.  What the Sphinx
build makes of the same faults (warnings, the page, the rest of the page) is in
test_faults.py; cases already covered by test_runner.py are not repeated here:

* sleeps past its timeout, printed part kept: ``test_timeout_kills_the_process_and_keeps_what_it_printed``
* ``os.abort()``: ``test_crash_by_signal_is_a_result``
* reads stdin: ``test_stdin_is_at_end_of_file``
* a grandchild holding the pipes: ``test_grandchild_holding_the_pipes_does_not_keep_the_run_alive``
* invalid UTF-8: ``test_invalid_utf8_is_shown_as_backslash_escapes``
* output cap and its count: ``test_output_cap_keeps_the_limit_and_counts_the_rest``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from chain_support import cells
from runner_support import (  # noqa: F401 - fixtures
    HOST_CHILDREN,
    HOST_PID,
    LIMIT,
    TIMEOUT,
    gone,
    plain_python,
    project,
    runner,
    stream,
    write,
)
from snipcheck.model import ExceptionInfo, Stamp
from snipcheck.run import PYTHON_RUNNERS, Runner, make_runner

TESTS = Path(__file__).parents[1]


def test_syntax_error_shows_what_plain_python_shows(runner: Runner, project: Path) -> None:
    # ``python file.py`` prints a syntax error without a traceback header and
    # without any frame; the fork runner compiles the file itself, and its own
    # frame must not appear (it did: forkserver.py's _run_main, with its path).
    snippet = write(project, "r/syntax", 'print("before"\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    plain = plain_python(project, snippet)
    assert plain.stderr == (
        '  File "snippets/r/syntax.py", line 1\n'
        '    print("before"\n'
        "         ^\n"
        "SyntaxError: '(' was never closed\n"
    )
    assert [(e.stream, e.kind) for e in result.events] == [("stderr", "traceback")]
    assert stream(result.events, "stderr") == plain.stderr
    assert result.exception == ExceptionInfo("SyntaxError", "'(' was never closed (syntax.py, line 1)")
    assert result.exit_status == plain.returncode == 1


def test_indentation_error_shows_what_plain_python_shows(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/indent", "if True:\nprint('x')\n")
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    plain = plain_python(project, snippet)
    assert "IndentationError: expected an indented block" in plain.stderr
    assert stream(result.events, "stderr") == plain.stderr
    assert result.exception is not None and result.exception.type == "IndentationError"


def test_infinite_loop_is_killed_at_its_timeout(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/spin", f"print('spinning', {HOST_PID}, flush=True)\nwhile True:\n    pass\n")
    start = time.monotonic()
    result = runner.run(snippet, timeout=1.0, output_limit=LIMIT)
    assert time.monotonic() - start < 10
    assert result.timed_out is True
    assert result.exit_status is None and result.signal is None
    word, pid = stream(result.events, "stdout").split()
    assert word == "spinning"
    assert gone(pid)


def test_os_exit_status_is_a_result_and_printed_output_is_kept(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/exit3", "import os\nprint('bye')\nos._exit(3)\n")
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert (result.exit_status, result.signal, result.exception) == (3, None, None)
    assert stream(result.events, "stdout") == "bye\n" == plain_python(project, snippet).stdout


def test_segfault_is_a_result_and_printed_output_is_kept(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/segv", "import ctypes\nprint('about to crash')\nctypes.string_at(0)\n")
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert (result.exit_status, result.signal, result.timed_out) == (None, "SIGSEGV", False)
    assert stream(result.events, "stdout") == "about to crash\n"


def test_a_child_that_outlives_the_snippet_is_killed_with_its_group(runner: Runner, project: Path) -> None:
    # Unlike the grandchild of test_runner.py, this one lets go of the output
    # pipes: nothing waits for it, and only the group kill takes it down.
    snippet = write(
        project,
        "r/orphan",
        # cwd="/": a child left in the run directory could die of its removal
        "import subprocess\n"
        "p = subprocess.Popen(['sleep', '60'], cwd='/',\n"
        "                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"print({HOST_CHILDREN})\n",
    )
    result = runner.run(snippet, timeout=20.0, output_limit=LIMIT)
    assert (result.exit_status, result.timed_out) == (0, False)
    pid = stream(result.events, "stdout").strip()
    deadline = time.monotonic() + 5
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(pid)


def test_writes_and_chdir_land_nowhere_in_the_project(runner: Runner, project: Path) -> None:
    snippet = write(
        project,
        "r/chdir",
        "import os\n"
        "open('in-cwd.txt', 'w').write('x')\n"
        "with open(__file__, 'a') as f:\n"
        "    f.write('# tampered\\n')\n"
        "os.chdir(os.path.dirname(os.path.abspath(__file__)))\n"
        "open('beside-the-snippet.txt', 'w').write('x')\n"
        "os.chdir('..')\n"
        "open('in-snippets.txt', 'w').write('x')\n"
        "open(os.path.expanduser('~/.snippetrc'), 'w').write('x')\n"
        "print(os.getcwd().replace(os.sep, '|'))  # not rewritten to a relative path\n",
    )
    before = sorted((p.relative_to(project), p.read_bytes() if p.is_file() else b"") for p in project.rglob("*"))
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exit_status == 0, stream(result.events, "stderr")
    after = sorted((p.relative_to(project), p.read_bytes() if p.is_file() else b"") for p in project.rglob("*"))
    assert after == before
    cwd = Path(stream(result.events, "stdout").strip().replace("|", os.sep))
    assert cwd.name == "snippets" and not cwd.is_relative_to(project)
    assert not cwd.parent.exists()  # the run directory is gone too


# --- 200 MB of output ---------------------------------------------------------------

_MEASURE = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path
    from snipcheck.model import Stamp
    from snipcheck.run import make_runner
    from snipcheck.sources.snippets import load

    root, kind = Path(sys.argv[1]), sys.argv[2]
    stamp = Stamp(**json.loads(sys.argv[3]))
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
    try:
        # warm up: imports, the fork server, one small run
        runner.run(load("big/small", root / "snippets", root), timeout=60, output_limit=1 << 20)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = runner.run(load("big/flood", root / "snippets", root), timeout=120, output_limit=1 << 20)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    finally:
        getattr(runner, "close", lambda: None)()
    print(json.dumps({
        "growth_kib": after - before,
        "kept": sum(len(e.text.encode()) for e in result.events),
        "truncated": result.truncated_bytes,
        "exit": result.exit_status,
        "timed_out": result.timed_out,
        "stopped": result.stopped_by_output,
        "tail": result.events[-1].text[-20:],
    }))
    """
)

FLOODS = {
    # 200 MiB straight to file descriptor 1, as C++ code would write it
    "fd": "import os\nblock = b'x' * (1 << 20)\nfor _ in range(200):\n    os.write(1, block)\n",
    # 200 MB through sys.stdout (the child's framed capture), line by line
    "print": "import sys\nline = 'y' * 999 + '\\n'\nfor _ in range(200_000):\n    sys.stdout.write(line)\n",
}


@pytest.mark.parametrize("how", sorted(FLOODS))
@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_200_mb_of_output_is_capped_in_bounded_memory_and_stopped(kind: str, how: str, project: Path, stamp: Stamp) -> None:
    # Measured in a fresh interpreter: ru_maxrss is the peak of the whole
    # process, so the growth across the flooding run is what capture kept.
    # Was (issue 23 item 4): the parent read and counted all 200 MB (a 2 GB
    # flood: three minutes of its CPU); it stops the run once the limit's
    # worth more has come, the same point on every run.
    write(project, "big/small", "print('small')\n")
    write(project, "big/flood", FLOODS[how])
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(project), kind, json.dumps(stamp.__dict__)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert (seen["exit"], seen["timed_out"], seen["stopped"]) == (None, False, True)
    assert seen["kept"] == 1 << 20
    assert seen["truncated"] == 1 << 20
    # 200 MB went through; the parent grew by a few MiB at most (the cap is 1 MiB).
    assert seen["growth_kib"] < 20 * 1024, seen


def test_a_sink_counts_its_margin_past_the_limit_then_is_full() -> None:
    from snipcheck.run.channel import MARGIN_FLOOR, Sink

    sink = Sink(10, margin=5)
    sink.add(("stdout", "text"), b"x" * 15)
    assert (sink.kept, sink.dropped, sink.full) == (10, 5, False)  # exactly limit + margin: not yet
    sink.add(("stderr", "text"), b"y")
    assert (sink.dropped, sink.full) == (5, True)  # past it: full, the count stays at the margin
    sink.add(("stdout", "text"), b"z" * 100)
    assert (sink.kept, sink.dropped) == (10, 5)  # nothing more is counted
    assert Sink(1 << 30).margin == 1 << 30 and Sink(1000).margin == MARGIN_FLOOR  # the limit again, at least 1 MiB


def test_a_flood_stops_at_the_same_byte_on_every_run(runner: Runner, project: Path) -> None:
    # Writes of changing sizes to both streams, 30 MiB in all: the run is
    # stopped where its output passes 1 MiB past a 64 KiB limit, whatever
    # the load, and the result says so the same way every time.
    snippet = write(
        project,
        "r/flood",
        "import os, sys\nfor n in range(30_000):\n"
        "    os.write(1 + n % 2, b'%d ' % n + b'x' * (n % 2000) + b'\\n')\n",
    )
    results = [runner.run(snippet, timeout=TIMEOUT, output_limit=1 << 16) for _ in range(3)]
    for result in results:
        assert (result.stopped_by_output, result.truncated_bytes) == (True, 1 << 20)
        assert (result.exit_status, result.signal, result.exception, result.timed_out) == (None, None, None, False)
        assert sum(len(e.text.encode()) for e in result.events) == 1 << 16
    assert len({r.events for r in results}) == 1


def test_a_chain_cell_that_floods_stops_the_chain_there(runner: Runner, project: Path) -> None:
    chain = cells(project / "chain", {
        "c/a": "print('first')\n",
        "c/b": "import os\nwhile True:\n    os.write(1, b'y' * 4096)\n",
        "c/c": "print('never')\n",
    })  # fmt: skip
    results = runner.run_chain(chain, timeouts=[TIMEOUT] * 3, output_limit=1 << 16)
    assert len(results) == 2
    assert stream(results[0].events, "stdout") == "first\n"
    assert (results[1].stopped_by_output, results[1].truncated_bytes, results[1].exit_status) == (True, 1 << 20, None)


# --- the fork runner: nothing one snippet does reaches the next -------------------------

#: Builds an LSTM with dropout: torch warns from its own file (rnn.py), so the
#: "shown once per location" registry lives in a module the fork server
#: preloaded, not in the snippet's fresh ``__main__``.
LSTM_WARNING = "import torch\nlstm = torch.nn.LSTM(2, 2, num_layers=1, dropout=0.5)\nprint('{name} built')\n"
LSTM_MESSAGE = "UserWarning: dropout option adds dropout after all but last recurrent layer"


@pytest.fixture(scope="module")
def torch_fork(stamp: Stamp):
    """One fork runner whose server preloaded torch (all runs fork that one parent)."""
    if stamp.torch is None:
        pytest.skip("torch is not installed")
    made = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=("torch",))
    assert made.unavailable is None, made.unavailable  # really forking, not the fallback
    yield made
    made.close()


def test_the_same_warning_in_two_snippets_is_shown_in_both(torch_fork: Runner, project: Path) -> None:
    first = write(project, "w/first", LSTM_WARNING.format(name="first"))
    second = write(project, "w/second", LSTM_WARNING.format(name="second"))
    for snippet in (first, second, first):
        result = torch_fork.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        assert result.runner == "fork"
        warnings = [e.text for e in result.events if e.kind == "warning"]
        assert len(warnings) == 1 and LSTM_MESSAGE in warnings[0], (snippet.id, result.events)
    # Control: run in one process, the second construction is silent, so the
    # check above would catch a registry shared between runs.
    together = write(project, "w/together", LSTM_WARNING.format(name="first") + LSTM_WARNING.format(name="second"))
    assert plain_python(project, together).stderr.count(LSTM_MESSAGE) == 1


GLOBALS_CHANGE = """\
import json, random, sys, warnings
import torch
torch.autograd.set_detect_anomaly(True)
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
random.seed(0)
json.LEAKED = True
sys.setrecursionlimit(123)
warnings.simplefilter("error")
sys.modules["planted"] = json
print("changed")
"""

GLOBALS_READ = """\
import json, sys, warnings
import torch
print("anomaly", torch.is_anomaly_enabled())
print("dtype", torch.get_default_dtype())
print("module attribute", hasattr(json, "LEAKED"))
print("recursion limit changed", sys.getrecursionlimit() == 123)
print("warnings as errors", any(f[0] == "error" for f in warnings.filters))
print("planted module", "planted" in sys.modules)
"""

FRESH = """\
anomaly False
dtype torch.float32
module attribute False
recursion limit changed False
warnings as errors False
planted module False
"""


def test_global_state_changed_by_one_snippet_does_not_reach_the_next(torch_fork: Runner, project: Path) -> None:
    change = write(project, "g/change", GLOBALS_CHANGE)
    read = write(project, "g/read", GLOBALS_READ)
    assert plain_python(project, read).stdout == FRESH
    assert stream(torch_fork.run(change, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout") == "changed\n"
    result = torch_fork.run(read, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.runner == "fork"
    assert stream(result.events, "stdout") == FRESH


def test_rng_state_differs_between_forks_like_fresh_processes(torch_fork: Runner, project: Path) -> None:
    # A snippet that seeds nothing must not get the same "random" numbers in
    # every run just because every run forks the same parent.
    snippet = write(project, "g/rng", "import random, torch\nprint(random.random(), torch.rand(1).item())\n")
    seen = {stream(torch_fork.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout") for _ in range(3)}
    assert len(seen) == 3


def test_stdin_is_at_end_of_file_even_where_dev_null_is_not_the_null_device(
    project: Path, stamp: Stamp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen on a test machine: /dev/null was a regular file, holding whatever
    # some `cmd 2>/dev/null` had last written, so a snippet reading stdin read
    # that.  The run's stdin must not depend on /dev/null.
    junk = tmp_path / "not-the-null-device"
    junk.write_text("written by someone's 2>/dev/null\n")
    monkeypatch.setattr(os, "devnull", str(junk))
    snippet = write(project, "r/stdin-eof", "import sys\nprint(repr(sys.stdin.read()))\n")
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind="subprocess")
    assert stream(runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout") == "''\n"
