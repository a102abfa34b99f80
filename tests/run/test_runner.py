"""Unit tests of the Python runner: one snippet, one fresh process, output captured in order.

Where possible the expected output is what a plain ``python snippets/<id>.py``
prints, run from a copy of the project: the runner promises readers exactly
that.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
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
from snipcheck.model import Event, ExceptionInfo, Stamp
from snipcheck.run import PYTHON_RUNNERS, Runner, make_runner
from snipcheck.run.python import RUN_DIR_NAME

ORDER = """\
import sys, warnings
print("one")
print("two", file=sys.stderr)
warnings.warn("careful")
print("three")
raise ValueError("bad value")
"""


def test_stdout_stderr_warning_and_traceback_in_terminal_order(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/order", ORDER)
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    plain = plain_python(project, snippet)
    assert [(e.stream, e.kind) for e in result.events] == [
        ("stdout", "text"),
        ("stderr", "text"),
        ("stderr", "warning"),
        ("stdout", "text"),
        ("stderr", "traceback"),
    ]
    assert result.events[0].text == "one\n"
    assert result.events[1].text == "two\n"
    assert result.events[3].text == "three\n"
    # Each stream holds exactly what the plain interpreter printed on it.
    assert stream(result.events, "stdout") == plain.stdout
    assert stream(result.events, "stderr") == plain.stderr
    assert result.events[2].text.startswith("snippets/r/order.py:4: UserWarning: careful\n")


PARTIAL_BEFORE_LABELS = """\
import sys, warnings
sys.stderr.write("partial, then a warning: ")
warnings.warn("careful")
sys.stderr.write("partial, then the traceback: ")
raise ValueError("bad value")
"""


def test_a_partial_stderr_line_keeps_its_label_before_a_warning_and_the_traceback(runner: Runner, project: Path) -> None:
    # stderr is line-buffered as on a terminal (issue 23 item 3): the partial line
    # leaves with the warning's (or the traceback's) first write, but it is the
    # snippet's own text, not the warning's.
    snippet = write(project, "r/partial", PARTIAL_BEFORE_LABELS)
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert [(e.kind, e.text.partition("\n")[0]) for e in result.events] == [
        ("text", "partial, then a warning: "),
        ("warning", "snippets/r/partial.py:3: UserWarning: careful"),
        ("text", "partial, then the traceback: "),
        ("traceback", "Traceback (most recent call last):"),
    ]
    assert stream(result.events, "stderr") == plain_python(project, snippet).stderr


def test_traceback_shows_the_snippet_path_and_its_own_line_numbers(runner: Runner, project: Path) -> None:
    snippet = write(project, "inplace/boom", '# /// snipcheck\n# expect = "ValueError"\n# ///\n\ndef f():\n    raise ValueError("boom")\n\nf()\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    traceback = result.events[-1]
    assert traceback.kind == "traceback"
    assert '  File "snippets/inplace/boom.py", line 8, in <module>\n' in traceback.text
    assert '  File "snippets/inplace/boom.py", line 6, in f\n' in traceback.text
    assert traceback.text == plain_python(project, snippet).stderr


def test_exception_info_and_exit_status(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/raise", 'print("before")\nraise ValueError("bad value")\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exception == ExceptionInfo("ValueError", "bad value")
    assert result.exit_status == 1
    assert result.signal is None
    assert result.timed_out is False


def test_exception_type_is_qualified_outside_builtins_and_main(runner: Runner, project: Path) -> None:
    mine = write(project, "r/mine", 'class MyError(Exception):\n    pass\nraise MyError("mine")\n')
    assert runner.run(mine, timeout=TIMEOUT, output_limit=LIMIT).exception == ExceptionInfo("MyError", "mine")
    lib = write(project, "r/lib", 'import json\njson.loads("{")\n')
    exc = runner.run(lib, timeout=TIMEOUT, output_limit=LIMIT).exception
    assert exc is not None and exc.type == "json.decoder.JSONDecodeError"


def test_exit_status_of_sys_exit(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/exit", 'import sys\nprint("bye")\nsys.exit(3)\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exit_status == 3
    assert result.exception is None
    assert result.events == (Event("stdout", "text", "bye\n"),)


def test_crash_by_signal_is_a_result(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/abort", 'import os\nprint("going", flush=True)\nos.abort()\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.signal == "SIGABRT"
    assert result.exit_status is None
    assert result.events == (Event("stdout", "text", "going\n"),)


def test_timeout_kills_the_process_and_keeps_what_it_printed(runner: Runner, project: Path) -> None:
    snippet = write(
        project, "r/slow", f"import time\nprint('started', {HOST_PID}, flush=True)\ntime.sleep(60)\nprint('never')\n"
    )
    result = runner.run(snippet, timeout=1.0, output_limit=LIMIT)
    assert result.timed_out is True
    assert result.exit_status is None
    text = stream(result.events, "stdout")
    word, pid = text.split()
    assert word == "started"
    assert gone(pid)


def test_grandchild_holding_the_pipes_does_not_keep_the_run_alive(runner: Runner, project: Path) -> None:
    # The grandchild inherits stdout/stderr and would hold them open for 30 s;
    # the run must end when the snippet's process exits, and take it down too.
    snippet = write(
        project, "r/grandchild", f"import subprocess\np = subprocess.Popen(['sleep', '30'])\nprint({HOST_CHILDREN})\n"
    )
    result = runner.run(snippet, timeout=20.0, output_limit=LIMIT)
    assert result.timed_out is False
    assert result.exit_status == 0
    assert gone(stream(result.events, "stdout").strip())


def test_output_cap_keeps_the_limit_and_counts_the_rest(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/big", 'import sys\nsys.stdout.write("x" * 5000)\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=1000)
    assert stream(result.events, "stdout") == "x" * 1000
    assert result.truncated_bytes == 4000
    assert result.output_limit == 1000


def test_output_cap_does_not_split_a_utf8_character(runner: Runner, project: Path) -> None:
    # 1000 two-byte characters under a 1001-byte cap: 500 fit, the 501st would be cut.
    snippet = write(project, "r/wide", 'import sys\nsys.stdout.write("é" * 1000)\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=1001)
    assert stream(result.events, "stdout") == "é" * 500
    assert result.truncated_bytes == 1000


def test_stdin_is_at_end_of_file(runner: Runner, project: Path) -> None:
    snippet = write(
        project,
        "r/stdin",
        "import sys\nprint(repr(sys.stdin.read()))\ntry:\n    input()\nexcept EOFError:\n    print('EOF')\n",
    )
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert stream(result.events, "stdout") == "''\nEOF\n"


def test_invalid_utf8_is_shown_as_backslash_escapes(runner: Runner, project: Path) -> None:
    snippet = write(project, "r/bytes", 'import os\nos.write(1, b"ok \\xff\\xfe end\\n")\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert stream(result.events, "stdout") == "ok \\x{ff}\\x{fe} end\n"


def test_fd_level_output_keeps_its_order_with_python_output(runner: Runner, project: Path) -> None:
    # C++ code (torch's) writes straight to file descriptors 1 and 2; its
    # output must interleave with print() output as a terminal shows it.
    snippet = write(
        project,
        "r/mixed",
        "import os\nfor i in range(200):\n    print(f'py {i}')\n    os.write(1, f'fd {i}\\n'.encode())\n",
    )
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert stream(result.events, "stdout") == plain_python(project, snippet).stdout


# hash() only: the order a set display of strings prints in also depends on which strings the
# process interned before (CPython rebuilds such a constant then), so the fork server's differs.
HASHES = "import os, sys\nprint(hash('snipcheck'), hash(b'x'), sys.flags.hash_randomization, os.environ.get('PYTHONHASHSEED'))\n"


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_a_runner_made_with_another_hash_seed_hashes_as_plain_python_under_it(
    kind: str, project: Path, stamp: Stamp
) -> None:
    # record, accept and review run an output again under other seeds (snipcheck.pending.variation):
    # each runner, the fork server included, must really hash under the seed it is given.
    snippet = write(project, "r/hashes", HASHES)
    seen = {}
    for seed in (0, 4005):
        made = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(), hash_seed=seed)
        try:
            seen[seed] = stream(made.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout")
        finally:
            getattr(made, "close", lambda: None)()
        env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONHASHSEED": str(seed)}
        plain = subprocess.run([sys.executable, "-c", HASHES], env=env, capture_output=True, text=True, check=True)
        assert seen[seed] == plain.stdout.replace(f" {seed}\n", " None\n"), (kind, seed)
    assert seen[0] != seen[4005]


def test_fixed_environment_and_fresh_working_directory(runner: Runner, project: Path) -> None:
    snippet = write(
        project,
        "r/env",
        "import os, sys\n"
        "print(os.environ.get('PYTHONHASHSEED'), os.environ.get('TZ'), sys.flags.utf8_mode)\n"
        "print(os.path.exists('snippets/r/env.py'), sorted(os.listdir('.')))\n"
        "print(os.getcwd(), os.path.join(os.getcwd(), 'out.txt'), os.environ['HOME'])\n"
        "open('left-behind', 'w').close()\n"
        "print(os.getcwd().replace(os.sep, '|'))  # past the rewrite: the real folder\n",
    )
    first, second = (runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT) for _ in range(2))
    settings, found, cwd, real1 = stream(first.events, "stdout").splitlines()
    assert settings == "None UTC 0"  # the hash secret is fixed, not in the environment; no UTF-8 mode
    # a fresh directory per run: nothing the first run wrote is there for the second
    assert found == "True ['home', 'snippets', 'tmp']"
    assert stream(second.events, "stdout").splitlines()[1] == found
    # the run directory is shown by its documented name (false-green.md case 8)
    assert cwd == f"{RUN_DIR_NAME} out.txt home"
    real2 = stream(second.events, "stdout").splitlines()[3]
    assert real1 != real2
    for real in (real1, real2):
        assert not Path(real.replace("|", os.sep)).is_relative_to(project)
        assert not Path(real.replace("|", os.sep)).exists()  # removed after the run


def test_nothing_is_written_into_the_project(runner: Runner, project: Path) -> None:
    (project / "snippets" / "r").mkdir(parents=True)
    (project / "snippets" / "r" / "_helper.py").write_text("VALUE = 1\n", encoding="utf-8")
    snippet = write(
        project,
        "r/writes",
        "import os\n"
        "open('out.txt', 'w').write('x')\n"
        "os.makedirs('snippets/r', exist_ok=True)\n"
        "open('snippets/r/new.txt', 'w').write('x')\n"
        "print('done')\n",
    )
    before = sorted((p.relative_to(project), p.stat().st_mtime_ns) for p in project.rglob("*"))
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert stream(result.events, "stdout") == "done\n"
    after = sorted((p.relative_to(project), p.stat().st_mtime_ns) for p in project.rglob("*"))
    assert after == before


def test_snippet_can_import_a_helper_next_to_it(runner: Runner, project: Path) -> None:
    # snipcheck.sources.snippets treats '_'-prefixed files as helpers; under
    # ``python snippets/r/uses_helper.py`` the snippet's directory is on
    # sys.path, so the helper imports.
    (project / "snippets" / "r").mkdir(parents=True)
    (project / "snippets" / "r" / "_helper.py").write_text("VALUE = 41 + 1\n", encoding="utf-8")
    snippet = write(project, "r/uses_helper", "from _helper import VALUE\nprint(VALUE)\n")
    assert plain_python(project, snippet).stdout == "42\n"
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exception is None, stream(result.events, "stderr")
    assert stream(result.events, "stdout") == "42\n"


# --- the fork runner against the plain subprocess runner -------------------------

EQUIVALENCE = {
    "eq/exit-sequence": (
        "import atexit, random, sys, threading, time, warnings\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "def late():\n"
        "    time.sleep(0.2)\n"
        "    print('non-daemon thread finished')\n"
        "threading.Thread(target=late).start()\n"
        "print(hash('abc'))\n"
        "warnings.warn('deprecated thing', DeprecationWarning)\n"
        "print(sys.argv, __file__, __name__)\n"
        "print('main done')\n"
    ),
    "eq/torch-anomaly": (
        "import torch\n"
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "with torch.autograd.set_detect_anomaly(True):\n"
        "    b = a.sigmoid()\n"
        "    b.mul_(2)\n"
        "    b.sum().backward()\n"
    ),
    "eq/torch-warning": (
        "import torch\n"
        "x = torch.tensor([1.0], requires_grad=True)\n"
        "y = x * 2\n"
        "print(y.grad)\n"
    ),
}


@pytest.fixture
def torch_runners(stamp: Stamp) -> Iterator[tuple[Runner, Runner]]:
    """The fork runner with torch preloaded, and the subprocess runner (a plain run)."""
    if stamp.torch is None:
        pytest.skip("torch is not installed")
    fork = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=("torch",))
    plain = make_runner("python", python=sys.executable, stamp=stamp, kind="subprocess")
    yield fork, plain
    fork.close()  # type: ignore[attr-defined]


def test_fork_runner_with_torch_preloaded_matches_a_plain_run(torch_runners: tuple[Runner, Runner], project: Path) -> None:
    # The design's promise: forking a warm parent that imported torch gives
    # byte-identical results to ``python snippets/<id>.py`` (atexit handlers,
    # non-daemon threads, warnings, tracebacks through torch, anomaly stacks).
    fork, plain = torch_runners
    for snippet_id, source in EQUIVALENCE.items():
        snippet = write(project, snippet_id, source)
        a = fork.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        b = plain.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        assert (a.events, a.exit_status, a.signal, a.exception) == (b.events, b.exit_status, b.signal, b.exception), snippet_id
        assert a.runner == "fork"


# Counts the read(2) calls torch's first tensor operation and first backward
# pass make (/proc/self/io counts every read of the process).
FIRST_USE_READS = (
    "import torch\n"
    "\n"
    "def reads():\n"
    "    with open('/proc/self/io') as f:\n"
    "        return int(next(line for line in f if line.startswith('syscr')).split()[1])\n"
    "\n"
    "start = reads()\n"
    "baseline = reads() - start\n"
    "before = reads()\n"
    "torch.arange(5.0).mul_(3)\n"
    "first_op = reads() - before - baseline\n"
    "x = torch.ones(2, requires_grad=True)\n"
    "(x * 3).sum().backward()\n"
    "print(first_op, x.grad.tolist())\n"
)


def test_the_fork_server_does_torchs_lazy_set_up_once_for_every_run(
    torch_runners: tuple[Runner, Runner], project: Path
) -> None:
    # A plain run's first tensor operation reads the CPU's features from
    # /proc/cpuinfo and /sys; a run forked from the server finds that done
    # (forkserver._warm_up), and nothing else about the run differs.
    fork, plain = torch_runners
    snippet = write(project, "r/first_use", FIRST_USE_READS)
    a = stream(fork.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout").split(" ", 1)
    b = stream(plain.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout").split(" ", 1)
    server = getattr(fork, "_server", None)  # white-box: the server is not public
    warmed = server.warmed if server is not None else None
    assert int(b[0]) > 0, "a plain run's first tensor operation reads nothing: the test no longer sees the set-up"
    assert int(a[0]) == 0, f"the forked run's first tensor operation did torch's set-up again ({a[0]} reads)"
    assert a[1] == b[1] == "[3.0, 3.0]\n"
    assert warmed == 2  # both steps were safe here


def test_fork_server_exits_when_the_runner_is_closed(stamp: Stamp, project: Path) -> None:
    # Closing the runner must make the server exit on its own; a server that
    # has to be killed after a grace period costs every build that wait.
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=())
    snippet = write(project, "r/hello", "print('hello')\n")
    assert stream(runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout") == "hello\n"
    server = runner._server  # white-box: the server process is not public
    assert server is not None
    runner.close()
    assert server._proc.returncode == 0  # exited by itself, not SIGKILLed (-9)
