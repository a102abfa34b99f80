"""A minimal project for the command line and the environment a command runs
in: shared by the tests of ``python -m snipcheck run`` and of what a run leaves
behind (``app/test_run_command.py``, ``run/test_lifecycle.py``,
``run/test_sandbox_files.py``).

Not a test module: test modules import it, never each other.  Imports the
standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path


def cli_project(root: Path, runner: str, snippets: dict[str, str], **conf: object) -> Path:
    """A minimal project for the command line: conf.py and snippet files."""
    (root / "snippets").mkdir(parents=True, exist_ok=True)
    settings = {"snipcheck_runner": runner, "snipcheck_preload": [], "snipcheck_fork_min_runs": 0, **conf}
    (root / "conf.py").write_text("".join(f"{k} = {v!r}\n" for k, v in settings.items()), encoding="utf-8")
    for snippet_id, source in snippets.items():
        path = root / "snippets" / f"{snippet_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


def cli_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The build's environment: its own TMPDIR (to find what it leaves behind)."""
    tmpdir = tmp / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    env.update(TMPDIR=str(tmpdir), SNIPCHECK_CACHE_DIR=str(tmp / "cache"), **extra)
    return env
