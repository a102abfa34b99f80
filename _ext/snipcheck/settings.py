"""The ``snipcheck_*`` settings: declared once, validated, resolved to paths.

:data:`VALUES` declares every setting (default, accepted types, whether a
change must re-read the documents, help).  The Sphinx layer registers them as
config values; the command line reads them from ``conf.py`` with
:meth:`Settings.from_conf` without importing Sphinx.  Relative paths are
relative to the directory holding ``conf.py``.

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

import os
import runpy
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import normalize
from .cache import ResultCache
from .execute import Executor, ExecutorConfig
from .model import Stamp
from .runner import PYTHON_RUNNERS
from .tags import parse_size


@dataclass(frozen=True)
class Value:
    """Declaration of one setting (see :data:`VALUES`)."""

    default: Any
    types: tuple[type, ...]
    rebuild: str
    help: str


VALUES: dict[str, Value] = {
    "snipcheck_snippets_dir": Value("snippets", (str,), "env", "directory of snippet files"),
    "snipcheck_python": Value("", (str,), "env", "interpreter that runs Python snippets (default: the running one)"),
    "snipcheck_execute": Value(True, (bool,), "env", "run snippets; False shows the stated outputs only"),
    "snipcheck_cache_dir": Value("_build/snipcheck-cache", (str,), "", "directory of the result cache"),
    "snipcheck_report_dir": Value("_build/snipcheck", (str,), "", "directory for full diffs and the build report"),
    "snipcheck_timeout": Value(60.0, (int, float), "env", "default per-snippet timeout, in seconds"),
    "snipcheck_output_limit": Value(1 << 20, (int,), "env", "bytes of output kept per run"),
    "snipcheck_jobs": Value(0, (int,), "", "parallel runs; 0 means one per CPU core"),
    "snipcheck_normalizers": Value(list(normalize.DEFAULT), (list, tuple), "env", "normalizer names, in order"),
    "snipcheck_provides": Value([], (list, tuple), "env", "features this build declares present, e.g. ['burn']"),
    "snipcheck_runner": Value("fork", (str,), "", "Python runner: 'fork' (warm server, default) or 'subprocess'"),
    "snipcheck_fork_min_runs": Value(3, (int,), "", "start the fork server only when a build needs at least this many Python runs; fewer run as plain subprocesses (0: always fork)"),
    "snipcheck_preload": Value(["torch"], (list, tuple), "", "modules the fork runner's server imports once"),
    "snipcheck_memory_limit": Value("4 GiB", (str, int), "env", "memory limit of each process of a run (RLIMIT_DATA), e.g. '4 GiB'; 0 for none; a snippet's memory tag overrides it"),
    "snipcheck_reference": Value("", (str,), "env", "reference environment of the stated outputs; default from pyproject.toml [tool.snipcheck] reference-torch"),
}


def problem(name: str, value: Any) -> str | None:
    """Why ``value`` is invalid for setting ``name``, or ``None`` if it is valid."""
    decl = VALUES[name]
    wanted = " or ".join(t.__name__ for t in decl.types)
    ok_type = isinstance(value, decl.types) and not (isinstance(value, bool) and bool not in decl.types)
    if not ok_type:
        return f"expected {wanted}, got {type(value).__name__}"
    if name in ("snipcheck_timeout", "snipcheck_output_limit") and float(value) <= 0:
        return "must be positive"
    if name in ("snipcheck_jobs", "snipcheck_fork_min_runs") and int(value) < 0:
        return "must be 0 (one per core) or more"
    if name == "snipcheck_normalizers":
        try:
            normalize.resolve(value)
        except KeyError as exc:
            return str(exc.args[0])
    if name in ("snipcheck_provides", "snipcheck_preload") and not all(isinstance(x, str) for x in value):
        return "expected a list of strings"
    if name == "snipcheck_runner" and value not in PYTHON_RUNNERS:
        return f"expected one of {', '.join(PYTHON_RUNNERS)}"
    if name == "snipcheck_memory_limit":
        try:
            parse_size(value)
        except ValueError as exc:
            return str(exc)
    if name == "snipcheck_python" and value and shutil.which(value) is None:
        return "no such interpreter (give an absolute path or a command on PATH)"
    return None


def reference_from_pyproject(root: Path) -> str:
    """``"torch X"`` from ``[tool.snipcheck] reference-torch`` in ``pyproject.toml``, or ``""``."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    torch = data.get("tool", {}).get("snipcheck", {}).get("reference-torch")
    return f"torch {torch}" if torch else ""


def absolute_command(command: str) -> str:
    """``command`` as an absolute path (runs happen in other directories)."""
    if not command:
        return ""
    found = shutil.which(command)
    return os.path.abspath(found) if found else command


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one project.

    :param root: the directory holding ``conf.py``.
    """

    root: Path
    snippets_dir: Path
    cache_dir: Path
    report_dir: Path
    python: str
    execute: bool
    timeout: float
    output_limit: int
    jobs: int
    normalizers: tuple[normalize.Normalizer, ...]
    provides: tuple[str, ...]
    reference: str
    runner: str = "fork"
    preload: tuple[str, ...] = ("torch",)
    fork_min_runs: int = 3
    memory_limit: int = 4 << 30

    @classmethod
    def from_mapping(cls, root: Path, values: Mapping[str, Any]) -> tuple[Settings, list[str]]:
        """Resolve ``values`` (missing names take their default).

        :return: the settings and one message per invalid value (replaced by
            its default).
        """
        messages = []
        v: dict[str, Any] = {}
        for name, decl in VALUES.items():
            value = values.get(name, decl.default)
            why = problem(name, value)
            if why:
                messages.append(f"invalid {name} = {value!r}: {why}; using the default {decl.default!r}")
                value = decl.default
            v[name] = value
        root = Path(root)
        return (
            cls(
                root=root,
                snippets_dir=root / v["snipcheck_snippets_dir"],
                cache_dir=Path(os.environ.get("SNIPCHECK_CACHE_DIR") or root / v["snipcheck_cache_dir"]),
                report_dir=root / v["snipcheck_report_dir"],
                python=absolute_command(v["snipcheck_python"]) or sys.executable,
                execute=v["snipcheck_execute"],
                timeout=float(v["snipcheck_timeout"]),
                output_limit=v["snipcheck_output_limit"],
                jobs=v["snipcheck_jobs"] or (os.cpu_count() or 1),
                normalizers=normalize.resolve(v["snipcheck_normalizers"]),
                provides=tuple(v["snipcheck_provides"]),
                reference=v["snipcheck_reference"] or reference_from_pyproject(root),
                runner=v["snipcheck_runner"],
                preload=tuple(v["snipcheck_preload"]),
                fork_min_runs=v["snipcheck_fork_min_runs"],
                memory_limit=parse_size(v["snipcheck_memory_limit"]),
            ),
            messages,
        )

    @classmethod
    def from_conf(cls, root: Path, **overrides: Any) -> tuple[Settings, list[str]]:
        """Read the ``snipcheck_*`` names of ``root/conf.py`` by executing it.

        :raises FileNotFoundError: if there is no ``conf.py``.
        """
        conf = Path(root) / "conf.py"
        if not conf.is_file():
            raise FileNotFoundError(f"no conf.py in {root}")
        cwd = os.getcwd()
        os.chdir(root)  # conf.py files assume they run in their own directory
        try:
            namespace = runpy.run_path(str(conf), run_name="conf")
        finally:
            os.chdir(cwd)
        values = {k: v for k, v in namespace.items() if k.startswith("snipcheck_")}
        values.update(overrides)
        return cls.from_mapping(Path(root).resolve(), values)

    def executor(self, stamp: Stamp, *, use_cache: bool = True) -> Executor:
        """An executor for snippets under these settings."""
        return Executor(
            ExecutorConfig(
                python=self.python,
                stamp=stamp,
                cache=ResultCache(self.cache_dir) if use_cache else None,
                jobs=self.jobs,
                timeout=self.timeout,
                output_limit=self.output_limit,
                provides=self.provides,
                runner=self.runner,
                preload=self.preload,
                build_dir=self.cache_dir / "rust",
                fork_min_runs=self.fork_min_runs,
                memory_limit=self.memory_limit,
            )
        )
