"""Order stress test (issue 11): the terminal's order on every run, on a busy machine.

A snippet whose child process alternates stdout and stderr, and a snippet
mixing ``print`` and ``os.write`` on both streams, each run 200 times under
each Python runner with two CPU-bound processes beside it.  Every run must
give exactly the order a terminal shows.  Marked ``slow``; part of the default
run (CI runs plain ``pytest``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from load import busy
from runner_support import CHILD_ALTERNATING, CHILD_EXPECTED, LIMIT, TIMEOUT, pairs, project, runner, write  # noqa: F401 - fixtures
from snipcheck.run import Runner

MIX = """\
import os, sys
for i in range(5):
    print(f"print {i}")
    os.write(1, f"fd1 {i}\\n".encode())
    print(f"print err {i}", file=sys.stderr)
    os.write(2, f"fd2 {i}\\n".encode())
"""
MIX_EXPECTED = [
    pair for i in range(5) for pair in (("stdout", f"print {i}\nfd1 {i}\n"), ("stderr", f"print err {i}\nfd2 {i}\n"))
]
RUNS = 200


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_order_holds_on_every_run_under_load(runner: Runner, project: Path) -> None:
    child = write(project, "stress/child", CHILD_ALTERNATING)
    mix = write(project, "stress/mix", MIX)
    wrong: list[str] = []
    with busy():
        for n in range(RUNS):
            for snippet, expected in ((child, CHILD_EXPECTED), (mix, MIX_EXPECTED)):
                seen = pairs(runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT).events)
                if seen != expected:
                    wrong.append(f"run {n} of {snippet.id}: {seen}")
    assert wrong == []
