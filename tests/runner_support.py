"""The Python runners under test, a project to write snippets into, and what
plain ``python`` prints for a snippet: shared by the runner tests
(``run/test_runner.py``, ``run/test_runner_cases.py``, ``run/test_order_stress.py``,
``run/test_faults_runner.py``, ``run/test_timeouts_cpu.py``).

Not a test module: test modules import it, never each other; a test module
imports the fixtures ``runner`` and ``project`` by name.  Imports snipcheck's
run, sources and model, and the support modules ``load`` and ``terminal``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from load import RUN_CHILDREN, RUN_PID, spec_gone
from snipcheck.model import Event, Snippet, Stamp
from snipcheck.rawbytes import from_bytes
from snipcheck.run import PYTHON_RUNNERS, Runner, make_runner
from snipcheck.sources.snippets import load
from terminal import on_terminals

TIMEOUT = 30.0  # generous: only the timeout tests expect to reach their limit
LIMIT = 1 << 20


@pytest.fixture(scope="module", params=PYTHON_RUNNERS)
def runner(request: pytest.FixtureRequest, stamp: Stamp) -> Iterator[Runner]:
    """Each Python runner in turn (module-scoped): every test that takes it holds for both."""
    made = make_runner("python", python=sys.executable, stamp=stamp, kind=request.param, preload=())
    yield made
    close = getattr(made, "close", None)
    if close is not None:
        close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "snippets").mkdir(parents=True)
    return root


def write(project: Path, snippet_id: str, source: str) -> Snippet:
    path = project / "snippets" / f"{snippet_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return load(snippet_id, project / "snippets", project)


def plain_python(project: Path, snippet: Snippet) -> subprocess.CompletedProcess[str]:
    """What ``python snippets/<id>.py`` prints from the project root, each
    stream on a terminal of its own (a run's hash secret, that of ``PYTHONHASHSEED=0``, as
    ``DIFFERENCES["hash seed"]`` says), with the project directory shown
    relative, as the runner promises (``snippets/<id>.py``, whatever the machine)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8"}
    argv = [sys.executable, snippet.path]
    out, err, code = on_terminals(argv, project, env, merged=False, timeout=TIMEOUT)
    prefix = f"{project}{os.sep}"
    return subprocess.CompletedProcess(
        argv,
        code,
        from_bytes(out).replace(prefix, ""),  # as the runners read bytes (snipcheck.rawbytes)
        from_bytes(err).replace(prefix, ""),
    )


def wrapped_python(path: Path, *, before: str = "", flags: str = "") -> Path:
    """An executable at ``path`` that runs ``before`` (shell), then this
    interpreter with ``flags``: a slow start, an interpreter without site-packages."""
    path.write_text(f'#!/bin/sh\n{before}exec "{sys.executable}" {flags}"$@"\n')
    path.chmod(0o755)
    return path


def stream(events: tuple[Event, ...], name: str) -> str:
    return "".join(e.text for e in events if e.stream == name)


def pairs(events: tuple[Event, ...]) -> list[tuple[str, str]]:
    return [(e.stream, e.text) for e in events]


#: A snippet whose child process alternates stdout and stderr (case 1 of
#: shared/cases/runner.md), and the order a terminal shows it in.
CHILD_ALTERNATING = textwrap.dedent(
    """\
    import subprocess, sys
    child = (
        "import sys\\n"
        "for i in range(6):\\n"
        "    print('child', i, file=sys.stdout if i % 2 == 0 else sys.stderr, flush=True)\\n"
    )
    subprocess.run([sys.executable, "-c", child], check=True)
    """
)
CHILD_EXPECTED = [("stdout" if i % 2 == 0 else "stderr", f"child {i}\n") for i in range(6)]


#: Snippet code naming the calling process, and its children, so that this test
#: can find them (``load.RUN_PID``): a run's ``/proc`` is its own PID namespace's.
HOST_PID = RUN_PID
HOST_CHILDREN = RUN_CHILDREN


def gone(spec: str) -> bool:
    """Whether the process named by ``spec`` (printed by :data:`HOST_PID`) no longer runs."""
    return spec_gone(spec)
