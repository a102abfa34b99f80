"""Run a Python snippet as ``python snippets/<id>.py`` in a fresh process.

Every run gets the fixed environment of the design: a fresh temporary working
directory holding a copy of the snippet at ``snippets/<id>.py``, stdin at
end-of-file, ``PYTHONHASHSEED=0``, a UTF-8 locale, ``TZ=UTC``, unbuffered
output, default warning filters, and a private ``HOME``.  The run directory is
removed afterwards, so nothing a snippet writes lands in the repository.

Pure core: no Sphinx or docutils.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..model import RunResult, Snippet, Stamp
from .capture import popen_spawner, run_captured

BOOTSTRAP_DIR = str(Path(__file__).parent / "bootstrap")
#: Variables passed through from the parent environment, when set.
PASSTHROUGH = ("PATH", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "SYSTEMROOT")


def child_environment(run_dir: str) -> dict[str, str]:
    """The fixed environment of a snippet run (see the module docstring)."""
    env = {k: os.environ[k] for k in PASSTHROUGH if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(
        {
            "HOME": os.path.join(run_dir, "home"),
            "TMPDIR": os.path.join(run_dir, "tmp"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TZ": "UTC",
            "PYTHONHASHSEED": "0",
            "PYTHONUNBUFFERED": "1",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONUTF8": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": BOOTSTRAP_DIR,
        }
    )
    return env


def prepare_run_dir(snippet: Snippet) -> tuple[str, str]:
    """Create a fresh run directory holding the snippet at its shown path.

    :return: ``(run_dir, relative_script_path)``.
    """
    run_dir = os.path.realpath(tempfile.mkdtemp(prefix="snipcheck-"))
    script = Path(run_dir) / snippet.path
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(snippet.source, encoding="utf-8")
    for shown, source in snippet.helpers:
        helper = Path(run_dir) / shown
        helper.parent.mkdir(parents=True, exist_ok=True)
        helper.write_text(source, encoding="utf-8")
    for sub in ("home", "tmp"):
        os.mkdir(os.path.join(run_dir, sub))
    return run_dir, snippet.path


class SubprocessRunner:
    """Runs each snippet with a plain ``python <file>`` subprocess.

    :param python: path of the interpreter.
    :param stamp: the environment stamp of that interpreter.
    """

    name = "subprocess"

    def __init__(self, python: str, stamp: Stamp) -> None:
        self.python = python
        self.stamp = stamp

    def run(self, snippet: Snippet, *, timeout: float, output_limit: int) -> RunResult:
        """Run ``snippet``; see :meth:`snipcheck.runner.Runner.run`."""
        run_dir, script = prepare_run_dir(snippet)
        try:
            captured = run_captured(
                popen_spawner([self.python, script], cwd=run_dir, env=child_environment(run_dir)),
                timeout=timeout,
                output_limit=output_limit,
                rewrite={run_dir + os.sep: ""},
            )
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        return captured.result(stamp=self.stamp, runner=self.name, output_limit=output_limit)
