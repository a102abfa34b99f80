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
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_support import LIMIT, TIMEOUT, write
from snipcheck.model import Stamp
from snipcheck.run import capture
from snipcheck.run.capture import RunError
from snipcheck.run.fork import ForkRunner
from snipcheck.run.python import SubprocessRunner


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
    capture.stop_live_runs(grace=0)
    server._proc.kill()  # as the exit closes it under a worker thread
    server._proc.wait()
    caplog.clear()  # what the first run logged ("fork runner ready"), where the level let it through
    with caplog.at_level(logging.INFO, logger="snipcheck"), pytest.raises(RunError, match="interrupted"):
        fork_runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert fork_runner._server in (None, server)  # no new server
    assert "again" not in caplog.text and "ready" not in caplog.text


def test_no_run_starts_once_the_runs_are_being_stopped(project: Path, stamp: Stamp) -> None:
    snippet = write(project, "s/hello", "print('ran')\n")
    capture.stop_live_runs(grace=0)
    with pytest.raises(RunError, match="interrupted"):
        SubprocessRunner(sys.executable, stamp).run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    capture.resume_runs()  # a new command in this process (a new executor does this)
    result = SubprocessRunner(sys.executable, stamp).run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert [event.text for event in result.events] == ["ran\n"]
