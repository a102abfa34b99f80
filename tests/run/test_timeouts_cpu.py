"""Timeouts that hold on a busy machine (issue 36 §7).

A run's timeout counts the CPU seconds of its processes, so a snippet that
needs 0.8 s of CPU is not killed at a 1 s timeout because other processes
kept the core busy; a run that waits (a sleep) is stopped by the wall-clock
cap, ten times its timeout; each message names the limit it reached.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_support import runner  # noqa: F401 - a fixture: each Python runner in turn
from snipcheck.judge.compare import judge
from snipcheck.run import Runner
from snipcheck.sources.snippets import load
from snipcheck.sources.tags import WALL_FACTOR

LIMIT = 1 << 20

BURN = """\
import os, time
os.sched_setaffinity(0, {{0}})
start = time.process_time()
while time.process_time() - start < {cpu}:
    pass
print("burned", round(time.process_time() - start, 1))
"""


def write(tmp_path: Path, snippet_id: str, source: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "snippets" / f"{snippet_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return load(snippet_id, tmp_path / "snippets", tmp_path)


@pytest.fixture
def busy_core() -> Iterator[None]:
    """Three processes spinning on core 0, where the snippet pins itself:
    it gets a quarter to a half of that core, so its 0.8 CPU seconds take
    1.6 to 3.2 s of wall-clock time."""
    spin = "import os\nos.sched_setaffinity(0, {0})\nprint('ready', flush=True)\nwhile True: pass\n"
    # each in a session of its own: the scheduler shares a core among sessions (autogroups) first
    hogs = [
        subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True, start_new_session=True)
        for _ in range(3)
    ]
    try:
        for hog in hogs:  # each spins on core 0 before the snippet runs
            assert hog.stdout is not None and hog.stdout.readline() == "ready\n"
        yield
    finally:
        for hog in hogs:
            os.kill(hog.pid, signal.SIGKILL)
            hog.wait()


def test_a_snippet_slowed_by_a_busy_core_is_not_timed_out(runner: Runner, tmp_path: Path, busy_core: None) -> None:
    snippet = write(tmp_path, "t/burn", BURN.format(cpu=0.8))
    result = runner.run(snippet, timeout=1.0, output_limit=LIMIT)
    assert not result.timed_out, (result.duration, result.cpu, result.events)
    assert result.duration > 1.0  # it took longer than its timeout in wall-clock time: the load, not the snippet
    assert result.cpu is not None and 0.75 <= result.cpu < 1.0


def test_a_snippet_that_computes_past_its_cpu_limit_is_stopped_there(runner: Runner, tmp_path: Path) -> None:
    snippet = write(tmp_path, "t/spin", "while True:\n    pass\n")
    result = runner.run(snippet, timeout=1.0, output_limit=LIMIT)
    assert result.timed_out and result.limit == "cpu"
    assert result.cpu is not None and 1.0 <= result.cpu < 3.0
    verdict = judge(snippet.tags, result, "", [])
    (problem,) = verdict.problems
    assert "reached its timeout, counted in CPU seconds of its processes" in problem
    assert "raise 'timeout' in its tag block (or snipcheck_timeout)" in problem


def test_a_snippet_that_waits_is_stopped_at_the_wall_clock_cap(runner: Runner, tmp_path: Path) -> None:
    snippet = write(tmp_path, "t/sleep", "import time\nprint('waiting', flush=True)\ntime.sleep(60)\n")
    result = runner.run(snippet, timeout=0.3, output_limit=LIMIT)
    assert result.timed_out and result.limit == "wall"
    assert 0.3 * WALL_FACTOR <= result.duration < 0.3 * WALL_FACTOR + 3
    (problem,) = judge(snippet.tags, result, "waiting", []).problems
    assert f"the cap of a run that waits ({WALL_FACTOR:g} times its timeout, which counts CPU seconds)" in problem
    assert "raise 'timeout' in its tag block (or snipcheck_timeout): the cap grows with it" in problem


def test_the_cpu_of_a_process_the_snippet_starts_counts_too(runner: Runner, tmp_path: Path) -> None:
    child = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'while True: pass'])\n"
    snippet = write(tmp_path, "t/child", child)
    result = runner.run(snippet, timeout=1.0, output_limit=LIMIT)
    assert result.timed_out and result.limit == "cpu", (result.duration, result.cpu)
