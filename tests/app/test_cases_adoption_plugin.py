"""The kind of ``shared/cases/adoption.md`` through the pytest plugin: its record hint runs where pytest ran.

A ``sphinx-quickstart --sep`` project (``source/conf.py``) checked with
``pytest --snipcheck source/`` from the folder that holds the Makefile: the
hint under a drifted snippet ("record it: ...") must run as printed there, as
the build's does (tests/sphinxext/test_cases_adoption.py).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

CONF = """\
project = "outside"
extensions = ["snipcheck"]
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def test_the_record_hint_of_a_failing_item_runs_where_pytest_ran(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "source" / "snippets" / "f").mkdir(parents=True)
    (root / "source" / "conf.py").write_text(CONF)
    (root / "source" / "index.rst").write_text("Outside\n=======\n\n.. snippet:: f/a\n\n   stale\n")
    (root / "source" / "snippets" / "f" / "a.py").write_text('print("fresh")\n')
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "source/"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    hint = next(line for line in done.stdout.splitlines() if "record it: " in line)
    command = shlex.split(hint.split("record it: ", 1)[1])
    assert command == ["snipcheck", "--conf-dir", "source", "record", "f/a"], done.stdout
    recorded = subprocess.run(
        [sys.executable, "-m", *command], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert recorded.returncode == 0, recorded.stderr
    assert (root / "source" / "index.rst").read_text() == "Outside\n=======\n\n.. snippet:: f/a\n\n   fresh\n"
