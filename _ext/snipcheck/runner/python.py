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


def child_environment(run_dir: str, declared: tuple[str, ...] = ()) -> dict[str, str]:
    """The fixed environment of a snippet run (see the module docstring).

    :param declared: further variables passed through, when set: those the
        snippet declares (``Snippet.env``); the fixed ones below always win.
    """
    env = {k: os.environ[k] for k in PASSTHROUGH + tuple(declared) if k in os.environ}
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


def _inside(run_dir: str, rel: str) -> Path:
    """``run_dir / rel``, created folders included, refusing any path that
    would land outside ``run_dir`` (absolute, ``..``, a link out).

    :raises ValueError: for such a path (a bug upstream: shown paths are relative).
    """
    target = Path(run_dir, rel)
    if os.path.isabs(rel) or not target.resolve().is_relative_to(run_dir):
        raise ValueError(f"refusing to write {rel!r} outside the run directory {run_dir}")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def prepare_run_dir(snippet: Snippet) -> tuple[str, str]:
    """Create a fresh run directory holding the snippet at its shown path, its
    helper modules beside it and its declared data files (``Snippet.files``)
    at their paths relative to the project root.  Nothing is written outside it.

    :return: ``(run_dir, relative_script_path)``.
    :raises OSError: if a declared data file cannot be copied.
    """
    run_dir = os.path.realpath(tempfile.mkdtemp(prefix="snipcheck-"))
    try:
        for rel, source_path in snippet.files:
            shutil.copyfile(source_path, _inside(run_dir, rel))
        _inside(run_dir, snippet.path).write_text(snippet.source, encoding="utf-8")
        for shown, source in snippet.helpers:
            _inside(run_dir, shown).write_text(source, encoding="utf-8")
        for sub in ("home", "tmp"):
            os.mkdir(os.path.join(run_dir, sub))
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
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
                popen_spawner([self.python, script], cwd=run_dir, env=child_environment(run_dir, snippet.env)),
                timeout=timeout,
                output_limit=output_limit,
                rewrite={run_dir + os.sep: ""},
            )
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        return captured.result(stamp=self.stamp, runner=self.name, output_limit=output_limit)
