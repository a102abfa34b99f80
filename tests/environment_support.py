"""A fake Python environment: a site folder holding a fake distribution, its
upgrade in place as pip makes it, and an interpreter wrapper that puts the
folder on its path.  Shared by the tests of the environment the cache is keyed
on (``engine/test_cache_environment.py``) and of the CI cache
(``shard/test_ci_cache.py``).

Not a test module: test modules import it, never each other.  Imports the
standard library only.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def fake_site(directory: Path, name: str, version: str) -> Path:
    """A folder holding package ``name`` (whose ``__version__`` is ``version``)
    and its ``<name>-<version>.dist-info``, as pip installs it."""
    site = directory / "site"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(f"__version__ = {version!r}\n")
    dist = site / f"{name}-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return site


def upgrade_in_place(site: Path, name: str, old: str, new: str) -> None:
    """What ``pip install name==new`` does to ``site``: new code, renamed metadata,
    and no bytecode of the old code (pip uninstalls the old ``__pycache__``; runs
    now write bytecode as plain python does, and a file of the same size
    rewritten within the same second would otherwise load the stale .pyc)."""
    shutil.rmtree(site / name / "__pycache__", ignore_errors=True)
    (site / name / "__init__.py").write_text(f"__version__ = {new!r}\n")
    (site / f"{name}-{old}.dist-info").rename(site / f"{name}-{new}.dist-info")


def interpreter_with(directory: Path, site: Path) -> Path:
    """An interpreter wrapper that puts ``site`` on ``PYTHONPATH`` (like tests/helpers.py ``fake_python``)."""
    wrapper = directory / "python-with-site"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper
