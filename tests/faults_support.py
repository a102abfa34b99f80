"""Helpers of the fault-tolerance tests (test_faults*.py): one-off builds and
the checks every fault test makes (sources unchanged, cache consistent).

It holds no tests; the other test_faults*.py modules import it as a plain
module (tests/ is on sys.path), like helpers.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from helpers import plain
from snipcheck.engine.cache import ResultCache
from sphinx.testing.util import SphinxTestApp

TESTS = Path(__file__).parent
ROOTS = TESTS / "roots"


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path → sha256), to prove nothing changed."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def cached_ids(cache_dir: Path) -> set[str]:
    """Snippet ids of the entries in a result cache, after checking it is
    consistent: no temporary file left anywhere, every entry readable and
    stored under its own key (:meth:`ResultCache.get` raises otherwise)."""
    leftovers = [p for p in cache_dir.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]
    assert leftovers == [], f"temporary files left in the cache: {leftovers}"
    cache = ResultCache(cache_dir)
    ids = set()
    for entry in sorted((cache_dir / "results").glob("*/*.json")):
        result = cache.get(entry.stem)  # raises CacheError for a corrupt entry
        assert result is not None
        ids.add(json.loads(entry.read_text(encoding="utf-8"))["snippet"])
    return ids


@dataclass
class Build:
    """One finished Sphinx build of a copy of a test root."""

    srcdir: Path
    outdir: Path
    cache_dir: Path
    report_dir: Path
    status: str
    warnings_text: str
    before: dict[str, str]
    after: dict[str, str]
    statuscode: int = 0

    @property
    def all_warnings(self) -> list[str]:
        """Every warning, one string each (a snipcheck message may span lines)."""
        return split_warnings(self.warnings_text)

    @property
    def warnings(self) -> list[str]:
        """The snipcheck warnings (each ends with its ``[snipcheck.<subtype>]``)."""
        return [w for w in self.all_warnings if re.search(r"\[snipcheck\.\w+\]$", w)]

    def about(self, snippet_id: str) -> list[str]:
        """The snipcheck warnings that name ``snippet_id``."""
        return [w for w in self.warnings if f"snippet {snippet_id!r}" in w]

    @property
    def summary(self) -> str | None:
        """snipcheck's closing error that fails the build, if any."""
        found = [w for w in self.all_warnings if w.startswith("ERROR: snipcheck: ")]
        assert len(found) <= 1, found
        return found[0] if found else None

    @property
    def other_warnings(self) -> list[str]:
        """The warnings that are not snipcheck's (Sphinx, MyST, Pygments)."""
        return [w for w in self.all_warnings if w not in self.warnings and w != self.summary]


def split_warnings(text: str) -> list[str]:
    """A Sphinx warning stream cut into warnings: each starts with a line
    ``[<location>: ]WARNING: `` (or ``ERROR: ``); helpers.snipcheck_warnings
    would glue a warning of another type to the snipcheck one after it."""
    return [w.rstrip("\n") for w in re.split(r"^(?=(?:\S+: )?(?:WARNING|ERROR): )", plain(text), flags=re.MULTILINE) if w.strip()]


def copy_root(name: str, dest: Path) -> Path:
    shutil.copytree(ROOTS / f"test-{name}", dest)
    return dest


def sphinx_build(
    srcdir: Path,
    tmp: Path,
    cache_dir: Path,
    confoverrides: Mapping[str, Any] | None = None,
    *,
    freshenv: bool = False,
    builder: str = "html",
) -> Build:
    """Build ``srcdir`` in-process with sphinx.testing, hermetic like conftest's ``app``."""
    overrides = {"snipcheck_cache_dir": str(cache_dir), "snipcheck_report_dir": str(tmp / "report")}
    overrides.update(confoverrides or {})
    before = snapshot(srcdir)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SNIPCHECK_CACHE_DIR", raising=False)
        app = SphinxTestApp(
            builder,
            srcdir=srcdir,
            builddir=tmp / "_build",
            confoverrides=overrides,
            status=StringIO(),
            warning=StringIO(),
            freshenv=freshenv,
        )
        try:
            app.build()
        finally:
            app.cleanup()
    return Build(
        srcdir=srcdir,
        outdir=Path(app.outdir),
        cache_dir=cache_dir,
        report_dir=tmp / "report",
        status=plain(app.status.getvalue()),
        warnings_text=app.warning.getvalue(),
        before=before,
        after=snapshot(srcdir),
        statuscode=app.statuscode,
    )


def sphinx_build_command(srcdir: Path, outdir: Path, report_dir: Path, *extra: str) -> list[str]:
    """``sphinx-build -W --keep-going`` for a subprocess build (cache from the environment)."""
    return [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
        "-D", f"snipcheck_report_dir={report_dir}", "-D", "snipcheck_fork_min_runs=0",
        "-d", str(outdir / ".doctrees"), *extra,
        str(srcdir), str(outdir),
    ]  # fmt: skip


def subprocess_env(cache_dir: Path) -> dict[str, str]:
    return {**os.environ, "SNIPCHECK_CACHE_DIR": str(cache_dir)}


def gone(pid: int) -> bool:
    """Whether process ``pid`` no longer runs (absent, or a zombie nobody reaped)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" in state.split()[1]


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, their children, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name (field 2) may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return {p for p in found if not gone(p)}


def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=300, check=False, **kwargs)
