"""Sessions: build the chapter, run the tests, record outputs.

    nox -s docs              build the chapter into _build/html (fails on drift)
    nox -s tests             run the test suite
    nox -s record -- [ID…]   write actual outputs into docs/ (all drifted ones without ids)

Environments are pip-based virtualenvs (uv would not see the local torch wheel
and would download a multi-GB CUDA build).  The reference torch release is read
from pyproject.toml ([tool.snipcheck] reference-torch): the one pin.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["docs", "tests"]


def reference_torch() -> str:
    """The reference torch version from pyproject.toml."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["tool"]["snipcheck"]["reference-torch"]


def install_reference(session: nox.Session, *extras: str) -> None:
    """Install the pinned torch (CPU wheel), numpy and this project."""
    session.install(f"torch=={reference_torch()}", "numpy")
    target = "." + (f"[{','.join(extras)}]" if extras else "")
    session.install("-e", target)


SPHINX = ["sphinx-build", "--keep-going", "-b", "html", "-c", ".", "-d", "_build/doctrees", "docs", "_build/html"]


@nox.session
def docs(session: nox.Session) -> None:
    """Build the chapter; any drift, failed run or bad tag fails the build (-W)."""
    install_reference(session)
    session.run(*SPHINX[:1], "-W", *SPHINX[1:], *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (unit tests, test roots, and the real chapter)."""
    install_reference(session, "test")
    session.run("pytest", *session.posargs)


@nox.session
def record(session: nox.Session) -> None:
    """Run snippets and write their real output into docs/ (never type outputs by hand)."""
    install_reference(session)
    session.run("python", "-m", "snipcheck", "record", *session.posargs)
