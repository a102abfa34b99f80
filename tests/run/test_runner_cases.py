"""The cases of ``shared/cases/runner.md`` (issue 11) that one run shows, one test each.

Cases 10 (``python -m snipcheck run``) and 11-16 (processes that outlive the
build or take it down) are in test_run_command.py and test_lifecycle.py; case
18 (a per-test time limit) in test_suite_limits.py; the order stress test in
test_order_stress.py.  Each test runs under both Python runners (the
``runner`` fixture of runner_support.py) unless it is about one of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from load import busy
from runner_support import (  # noqa: F401 - fixtures
    CHILD_ALTERNATING,
    CHILD_EXPECTED,
    LIMIT,
    TIMEOUT,
    pairs,
    plain_python,
    project,
    runner,
    stream,
    write,
)
from snipcheck.judge.compare import judge, outcome_problem
from snipcheck.judge.normalize import resolve
from snipcheck.model import Stamp, Tags
from snipcheck.run import Runner, make_runner

NORMALIZERS = resolve([])


# --- 1, 2, 17: the order a terminal shows -------------------------------------------


def test_case_01_a_child_process_alternating_stdout_and_stderr_keeps_its_order(runner: Runner, project: Path) -> None:
    # Was: the page usually showed 0 2 4 1 3 5, differently from run to run.
    snippet = write(project, "order/child", CHILD_ALTERNATING)
    with busy():
        for _ in range(5):
            assert pairs(runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events) == CHILD_EXPECTED


def test_case_01_two_thousand_alternating_fd_writes_keep_their_order(runner: Runner, project: Path) -> None:
    # Was: 1613-1999 order breaks in every run.
    snippet = write(
        project,
        "order/fd",
        "import os\nfor i in range(1000):\n    os.write(1, b'o%d\\n' % i)\n    os.write(2, b'e%d\\n' % i)\n",
    )
    expected = [pair for i in range(1000) for pair in (("stdout", f"o{i}\n"), ("stderr", f"e{i}\n"))]
    with busy():
        for _ in range(3):
            assert pairs(runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events) == expected


def test_case_02_print_then_fd_write_keeps_its_order_under_load(runner: Runner, project: Path) -> None:
    # Was: with two CPU-bound processes beside the build, `1` before `0` in 2-4 of 24-32 runs.
    same = write(project, "order/same", "import os\nprint(0)\nos.write(1, b'1\\n')\n")
    other = write(project, "order/other", "import os, sys\nprint(0)\nos.write(2, b'1\\n')\nprint(2, file=sys.stderr)\n")
    with busy():
        for _ in range(24):
            assert pairs(runner.run(same, timeout=TIMEOUT, output_limit=LIMIT).events) == [("stdout", "0\n1\n")]
            assert pairs(runner.run(other, timeout=TIMEOUT, output_limit=LIMIT).events) == [
                ("stdout", "0\n"),
                ("stderr", "1\n2\n"),
            ]


def test_case_17_fd_and_python_output_keep_their_order_under_load_on_both_streams(
    runner: Runner, project: Path
) -> None:
    # Was: "fd 16" before "py 16" once under a loaded suite; os.write(2, ...) from
    # Python was only covered through the Rust tests.
    snippet = write(
        project,
        "order/mixed",
        "import os, sys\n"
        "for i in range(200):\n"
        "    print(f'py {i}')\n"
        "    os.write(1, f'fd {i}\\n'.encode())\n"
        "    print(f'py err {i}', file=sys.stderr)\n"
        "    os.write(2, f'fd err {i}\\n'.encode())\n",
    )
    expected = [
        pair
        for i in range(200)
        for pair in (("stdout", f"py {i}\nfd {i}\n"), ("stderr", f"py err {i}\nfd err {i}\n"))
    ]
    with busy():
        for _ in range(3):
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
            assert pairs(result.events) == expected
            assert {e.kind for e in result.events} == {"text"}


# --- 3-8: the fork runner is plain python (the parity corpus has the rest) ------------


def test_case_03_keyboard_interrupt_ends_by_sigint_and_its_hint_holds(runner: Runner, project: Path) -> None:
    # Was: SIGINT under plain python and the subprocess runner, exit status 1 under fork.
    snippet = write(project, "exit/kbd", 'print("before")\nraise KeyboardInterrupt\n')
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert (result.exit_status, result.signal) == (None, "SIGINT")
    assert result.exception is not None and result.exception.type == "KeyboardInterrupt"
    assert plain_python(project, snippet).returncode == -2
    problem = outcome_problem(Tags(), result)
    assert problem is not None and 'add expect = "KeyboardInterrupt"' in problem[1]
    verdict = judge(Tags(expect="KeyboardInterrupt"), result, terminal(result), NORMALIZERS)
    assert verdict.ok, verdict.problems


def terminal(result) -> str:  # type: ignore[no-untyped-def]
    from snipcheck.judge.compare import terminal_text

    return terminal_text(result)


@pytest.fixture(scope="module")
def torch_fork(stamp: Stamp):
    if stamp.torch is None:
        pytest.skip("torch is not installed")
    made = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=("torch",))
    assert made.unavailable is None, made.unavailable
    yield made
    made.close()


def test_case_04_the_recursion_limit_is_pythons(torch_fork: Runner, runner: Runner, project: Path) -> None:
    # Was: 1005 under fork, 1000 in plain python.
    snippet = write(
        project,
        "state/recursion",
        "import sys\nprint(sys.getrecursionlimit())\n"
        "def depth(n=1):\n    try:\n        return depth(n + 1)\n    except RecursionError:\n        return n\n"
        "print(depth())\n",
    )
    plain = plain_python(project, snippet).stdout
    assert plain.startswith("1000\n")
    for r in (torch_fork, runner):
        assert stream(r.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout") == plain


def test_case_05_annotations_and_modules_are_a_fresh_interpreters(torch_fork: Runner, project: Path) -> None:
    # Was: __annotations__ missing from the snippet's globals; torch._dynamo already in sys.modules.
    snippet = write(
        project,
        "state/fresh",
        "import sys\n"
        "print('__annotations__' in globals(), 'torch' in sys.modules, 'torch._dynamo' in sys.modules)\n"
        "import torch\n"
        "print('torch._dynamo' in sys.modules, 'numpy' in sys.modules)\n",
    )
    out = stream(torch_fork.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events, "stdout")
    assert out == plain_python(project, snippet).stdout
    assert out.splitlines()[0] == "True False False"


def test_case_06_closerange_does_not_break_the_run(runner: Runner, project: Path) -> None:
    # Was (fork): "the child could not start the snippet: ... OSError: [Errno 9] Bad file descriptor".
    snippet = write(
        project,
        "fds/closerange",
        "import os, warnings\nos.closerange(3, 4096)\nprint('still printing')\nwarnings.warn('and warning')\n"
        "raise ValueError('and failing')\n",
    )
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    plain = plain_python(project, snippet)
    assert stream(result.events, "stdout") == plain.stdout == "still printing\n"
    assert stream(result.events, "stderr") == plain.stderr
    assert [e.kind for e in result.events] == ["text", "warning", "traceback"]
    assert result.exception is not None and result.exception.type == "ValueError"


@pytest.mark.parametrize(
    ("source", "status"),
    [
        # 120: print's line is still buffered at exit, and the interpreter's final flush fails (Py_RunMain)
        ("import os\nos.close(1)\nos.close(2)\nprint('lost')\n", 120),
        (("import os\nnull = os.open(os.devnull, os.O_WRONLY)\nos.dup2(null, 1)\nos.dup2(null, 2)\n"
          "print('lost')\nprint('lost too', file=__import__('sys').stderr)\nraise SystemExit(3)\n"), 3),
    ],
    ids=["close", "dup2"],
)  # fmt: skip
def test_case_07_closed_or_redirected_stdout_and_stderr_lose_the_text(
    runner: Runner, project: Path, source: str, status: int
) -> None:
    # Was: the page showed the text that a terminal never shows.
    snippet = write(project, "fds/closed", source)
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    plain = plain_python(project, snippet)
    assert (plain.stdout, plain.stderr, plain.returncode) == ("", "", status)
    assert (result.events, result.exit_status) == ((), status)


def test_case_08_a_custom_excepthook_still_records_the_exception(runner: Runner, project: Path) -> None:
    # Was: `expect = "ValueError"` reported "exited with status 1".
    snippet = write(
        project,
        "exit/hook",
        "import sys\n"
        "def hook(etype, value, tb):\n    print('hook:', etype.__name__, value)\n"
        "sys.excepthook = hook\nraise ValueError('seen by the hook')\n",
    )
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert pairs(result.events) == [("stdout", "hook: ValueError seen by the hook\n")]
    assert result.exit_status == plain_python(project, snippet).returncode == 1
    assert result.exception is not None and (result.exception.type, result.exception.message) == (
        "ValueError",
        "seen by the hook",
    )
    assert judge(Tags(expect="ValueError"), result, "hook: ValueError seen by the hook", NORMALIZERS).ok


# --- 9: the capture channel against garbage and floods ----------------------------------

GARBAGE = textwrap.dedent(
    """\
    import os, sys
    junk = b"o\\x10\\x00\\x00\\x00garbage" * 8  # the old frame pipe's header: 256 MiB to come
    for fd in range(3, 1024):  # every descriptor the runner might hold
        try:
            os.write(fd, junk)
        except OSError:
            pass
    os.write(2, b"o\\x10\\x00\\x00\\x00" + b"a bogus frame header on stderr\\n")
    print("after the garbage", flush=True)
    line = "y" * 999 + "\\n"
    for _ in range(300_000):  # 300 MB
        sys.stdout.write(line)
    """
)
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
        runner.run(load("g/small", root / "snippets", root), timeout=60, output_limit=1 << 20)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = runner.run(load("g/garbage", root / "snippets", root), timeout=200, output_limit=1 << 20)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    finally:
        getattr(runner, "close", lambda: None)()
    print(json.dumps({
        "growth_kib": after - before,
        "events": [[e.stream, e.text[:40]] for e in result.events],
        "kept": sum(len(e.text.encode()) for e in result.events),
        "truncated": result.truncated_bytes,
        "exit": result.exit_status,
        "stopped": result.stopped_by_output,
    }))
    """
)


@pytest.mark.parametrize("kind", ["subprocess", "fork"])
def test_case_09_garbage_on_any_descriptor_neither_hides_later_output_nor_lifts_the_cap(
    kind: str, project: Path, stamp: Stamp
) -> None:
    # Was: a bogus frame header dropped all later output silently, and the build
    # grew 288 MiB for 300 MB printed (the 1 MiB cap bypassed).
    write(project, "g/small", "print('small')\n")
    write(project, "g/garbage", GARBAGE)
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(project), kind, json.dumps(stamp.__dict__)],
        capture_output=True, text=True, timeout=400, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert (seen["exit"], seen["stopped"]) == (None, True)  # stopped once 1 MiB past the limit
    assert seen["events"][0] == ["stderr", "o\x10\x00\x00\x00a bogus frame header on stderr\n"]
    assert seen["events"][1] == ["stdout", "after the garbage\n" + "y" * 22]
    assert seen["kept"] == 1 << 20
    assert seen["truncated"] == 1 << 20
    assert seen["growth_kib"] < 20 * 1024, seen


# --- 15: memory limit -------------------------------------------------------------------

ALLOCATE = "import torch\nx = torch.empty(768 << 20, dtype=torch.uint8)\nprint('allocated', x.numel() >> 20, 'MiB')\n"


@pytest.mark.parametrize("kind", ["subprocess", "fork"])
def test_case_15_a_run_has_a_memory_limit_that_a_tag_raises(kind: str, project: Path, stamp: Stamp) -> None:
    # Was: a snippet allocating 6 GB completed.  Here under a 512 MiB limit, 768 MiB
    # fails with the limit named; the memory tag raises it for one snippet.
    if stamp.torch is None:
        pytest.skip("torch is not installed")
    made = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=("torch",), memory_limit=512 << 20)
    try:
        over = made.run(write(project, "mem/over", ALLOCATE), timeout=TIMEOUT, output_limit=LIMIT)
        assert over.exit_status == 1 and stream(over.events, "stdout") == ""
        assert over.exception is not None and over.exception.type == "RuntimeError"
        assert over.exception.message.startswith("exceeded its memory limit of 512 MiB (")
        problem = outcome_problem(Tags(), over)
        assert problem is not None and "raised RuntimeError: exceeded its memory limit of 512 MiB" in problem[1]
        tagged = write(project, "mem/tagged", '# /// snipcheck\n# memory = "2 GiB"\n# ///\n' + ALLOCATE)
        assert tagged.tags.memory == 2 << 30
        ok = made.run(tagged, timeout=TIMEOUT, output_limit=LIMIT)
        assert (ok.exit_status, stream(ok.events, "stdout")) == (0, "allocated 768 MiB\n")
        # and the runner carries on
        after = made.run(write(project, "mem/after", "print('next')\n"), timeout=TIMEOUT, output_limit=LIMIT)
        assert stream(after.events, "stdout") == "next\n"
    finally:
        getattr(made, "close", lambda: None)()


def test_case_15_the_default_limit_is_four_gib(project: Path, stamp: Stamp) -> None:
    made = make_runner("python", python=sys.executable, stamp=stamp, kind="subprocess")
    snippet = write(project, "mem/six", "x = bytearray(6 << 30)\nprint('never')\n")
    result = made.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.exception is not None and result.exception.type == "MemoryError"
    assert result.exception.message.startswith("exceeded its memory limit of 4 GiB;")


def test_case_15_memory_sizes_in_tags_and_configuration() -> None:
    from snipcheck.settings import problem
    from snipcheck.sources.tags import TagError, parse, parse_size

    assert [parse_size(v) for v in ("4 GiB", "512 MiB", "2 GB", "1.5 GiB", "0", 1024)] == [
        4 << 30, 512 << 20, 2 * 10**9, 3 << 29, 0, 1024,
    ]  # fmt: skip
    assert parse('# /// snipcheck\n# memory = "8 GiB"\n# ///\nx = 1\n').tags.memory == 8 << 30
    with pytest.raises(TagError) as bad:
        parse('# /// snipcheck\n# memory = "lots"\n# ///\nx = 1\n')
    assert bad.value.line == 2 and "bad value for 'memory': 'lots'" in bad.value.message
    assert problem("snipcheck_memory_limit", "4 GiB") is None
    assert problem("snipcheck_memory_limit", "a lot") == 'expected a size such as "4 GiB" or "512 MiB", got \'a lot\''
