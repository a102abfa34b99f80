"""The built distributions and fresh virtualenvs holding the wheel (a pytest plugin module).

``dists`` builds the sdist and the wheel once per session with
``python -m build``, from a copy of the project in which junk is planted
(bytecode, a docs/_build page) and, until the project ships one, a locale
catalog: test_packaging checks that the junk stays out and the catalog goes
in.  :func:`venv_with` makes a fresh virtualenv holding the wheel (never an
editable install) and whatever else a test asks for; ``wheel_env`` is the
one holding the wheel and its core dependencies only.

Environments are made by this interpreter's pip (``pip --python``), without
byte-compiling: seconds, and no pip inside them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
JUNK = ["_ext/snipcheck/__pycache__/planted.cpython-311.pyc", "docs/_build/html/planted.html", "_build/html/planted.html"]
PLANTED_CATALOG = ["_ext/snipcheck/locale/xx/LC_MESSAGES/snipcheck.po", "_ext/snipcheck/locale/xx/LC_MESSAGES/snipcheck.mo"]


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"project": copy, "wheel": path, "sdist": path}``, built by ``python -m build``
    (sdist first, then the wheel from the sdist, as PyPA's tools do)."""
    root = tmp_path_factory.mktemp("packaging")
    project = root / "project"
    shutil.copytree(
        REPO, project,
        ignore=shutil.ignore_patterns(".git", ".nox", "_build", "build", "dist", "*.egg-info", ".pytest_cache", "__pycache__"),
    )  # fmt: skip
    for name in JUNK:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(b"junk")
    if not any((project / "_ext/snipcheck/locale").glob("**/*.po")):
        for name in PLANTED_CATALOG:
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_bytes(b"")
    out = root / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(project)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"project": project, "wheel": wheel, "sdist": sdist}


def pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """This interpreter's pip, acting on the environment of ``python``."""
    command = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def venv_with(directory: Path, wheel: Path, extras: str = "", *others: str) -> Path:
    """A fresh virtualenv at ``directory`` holding ``wheel`` (with ``extras``,
    e.g. ``"myst"``) and the requirements ``others``; its python.

    :raises AssertionError: with pip's output, if pip fails.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, timeout=300)
    python = directory / "bin" / "python"
    target = f"{wheel}[{extras}]" if extras else str(wheel)
    result = pip(python, "install", "--quiet", "--no-compile", target, *others)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return python


def venv_environ(python: Path) -> dict[str, str]:
    """Environment variables for running the tools of ``python``'s virtualenv
    as its own user would: its ``bin`` first on ``PATH``, and nothing of this
    test run (``PYTHONPATH``, snipcheck's and pytest's variables, colours)."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "NO_COLOR", "FORCE_COLOR")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith(("SNIPCHECK_", "PYTEST_"))}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    return env


@pytest.fixture(scope="module")
def wheel_env(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the wheel and its core dependencies only; its python."""
    return venv_with(tmp_path_factory.mktemp("wheel-env") / "venv", dists["wheel"])
