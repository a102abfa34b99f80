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
import re
import runpy
import shutil
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snipcheck.judge import nbval_sanitize, normalize
from snipcheck.model import Stamp
from snipcheck.run import PYTHON_RUNNERS
from snipcheck.run.sandbox import protected_paths
from snipcheck.sources import inputs, tags
from snipcheck.sources.tags import parse_size


def _number(text: str) -> float:
    return float(text.strip())


def _integer(text: str) -> int:
    return int(text.strip())


def _execute_value(text: str) -> bool | str:
    """``-D snipcheck_execute=``: ``merged``, or a boolean (``0``/``1``, ``false``/``true``)."""
    word = text.strip().lower()
    if word == "merged":
        return "merged"
    if word in ("0", "false", "no", "off"):
        return False
    if word in ("1", "true", "yes", "on"):
        return True
    raise ValueError(text)


def _names(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


@dataclass(frozen=True)
class Value:
    """Declaration of one setting (see :data:`VALUES`).

    :param parse: turns a command-line string (``sphinx-build -D name=text``)
        into a value; ``None`` leaves the string to Sphinx.
    """

    default: Any
    types: tuple[type, ...]
    rebuild: str
    help: str
    parse: Callable[[str], Any] | None = None


VALUES: dict[str, Value] = {
    "snipcheck_snippets_dir": Value("snippets", (str,), "env", "directory of snippet files"),
    "snipcheck_python": Value("", (str,), "env", "interpreter that runs Python snippets (default: the running one)"),
    "snipcheck_execute": Value(True, (bool, str), "env", "run snippets; False shows the stated outputs only; 'merged' runs none and takes every result from a merge of shards (snipcheck execute --merge): a runnable snippet without one fails the build", _execute_value),
    "snipcheck_cache_dir": Value("", (str,), "", "directory of the result cache, relative to conf.py; default: snipcheck-cache in the build's doctree directory (the command line: BUILDDIR/doctrees, see build_dir)"),
    "snipcheck_report_dir": Value("", (str,), "", "directory for full diffs and the build report, relative to conf.py; default: snipcheck-report beside the cache"),
    "snipcheck_timeout": Value(60.0, (int, float), "env", "default per-snippet timeout, in CPU seconds, with a wall-clock cap of 10 times as many (more than 0, at most 86400)", _number),
    "snipcheck_output_limit": Value(1 << 20, (int,), "env", "bytes of output kept per run", _integer),
    "snipcheck_jobs": Value(0, (int,), "", "parallel runs; 0 means one per CPU core", _integer),
    "snipcheck_normalizers": Value(list(normalize.DEFAULT), (list, tuple), "env", "normalizer names, in order", _names),
    "snipcheck_nbval_sanitize": Value([], (list, tuple), "env", "nbval sanitizer files (regex: and replace: line pairs), relative to conf.py: their replacements apply, after snipcheck_normalizers, to both outputs when comparing", _names),
    "snipcheck_provides": Value([], (list, tuple), "env", "features this build declares present, e.g. ['burn']", _names),
    "snipcheck_requirements": Value([], (list, tuple, dict), "env", "names of the project's own features a requires tag may name, e.g. ['burn'], absent unless snipcheck_provides names them; or a dict of each name to one sentence saying what it is and why a build may lack it, which the build summary gives where it is unmet", _names),
    "snipcheck_runner": Value("fork", (str,), "env", "Python runner: 'fork' (warm server, default) or 'subprocess'"),
    "snipcheck_fork_min_runs": Value(3, (int,), "", "start the fork server only when a build needs at least this many Python runs; fewer run as plain subprocesses (0: always fork)", _integer),
    "snipcheck_preload": Value(None, (list, tuple), "", "modules the fork runner's server imports once; default (None): torch when the snippet interpreter has it, else nothing", _names),
    "snipcheck_env": Value([], (list, tuple), "env", "environment variables every Python snippet reads: passed through to its run and part of its cache key", _names),
    "snipcheck_depends": Value([], (list, tuple), "env", "data files every Python snippet reads, relative to the project root (globs allowed): copied into its run directory and part of its cache key", _names),
    "snipcheck_source_dir": Value("", (str,), "", "the pages the command line reads (record, verify, accept), relative to conf.py; default: conf.py's own directory, as sphinx-quickstart lays a project out"),
    "snipcheck_fail_on_drift": Value(True, (bool,), "", "drift, failed runs, timeouts and truncated outputs make sphinx-build exit with status 1, with or without -W"),
    "snipcheck_record_command": Value("snipcheck record {id}", (str,), "", "the command hints name for recording a snippet's output; {id} is replaced by the snippet id"),
    "snipcheck_memory_limit": Value("4 GiB", (str, int), "env", "memory limit of each process of a run (RLIMIT_DATA), e.g. '4 GiB'; 0 for none; a snippet's memory tag overrides it"),
    "snipcheck_notebook_limit": Value("50 MiB", (str, int), "env", "largest .ipynb notebook snipcheck reads, e.g. '50 MiB'; a larger one warns and is not run; 0 for no limit"),
    "snipcheck_seed": Value(None, (int,), "env", "seed every Python run's random generators (Python's random, numpy's global one, torch) with this whole number, so random outputs are the same on every build; default (None): fresh randomness, as under plain python; a snippet's seed tag overrides it"),
    "snipcheck_show_durations": Value(True, (bool,), "env", "show each run's duration in the stamp under its output; False makes two builds of the same code give byte-identical pages (with snipcheck_seed for random outputs)"),
    "snipcheck_timings_file": Value("snipcheck-timings.json", (str,), "", "the timing file a sharded build plans with, relative to conf.py: written by snipcheck execute --merge, never by hand"),
    "snipcheck_reference": Value("", (str,), "env", "reference environment of the stated outputs; default from pyproject.toml [tool.snipcheck] reference-torch"),
}


def problem(name: str, value: Any, root: Path | None = None) -> str | None:
    """Why ``value`` is invalid for setting ``name``, or ``None`` if it is valid.

    :param root: the project root; with it, ``snipcheck_depends`` patterns
        are also checked to match files inside the project.
    """
    decl = VALUES[name]
    if value is None and decl.default is None:
        return None  # "not set": resolved where it is used (see Settings.preload_modules)
    wanted = " or ".join(t.__name__ for t in decl.types)
    ok_type = isinstance(value, decl.types) and not (isinstance(value, bool) and bool not in decl.types)
    if not ok_type:
        return f"expected {wanted}, got {type(value).__name__}"
    if name == "snipcheck_timeout":
        return tags.timeout_problem(value)
    if name == "snipcheck_seed":
        return tags.seed_problem(value, fresh_ok=False)
    if name == "snipcheck_execute" and isinstance(value, str) and value != "merged":
        return "expected True, False or 'merged'"
    if name == "snipcheck_output_limit" and value <= 0:
        return "must be positive"
    if name in ("snipcheck_jobs", "snipcheck_fork_min_runs") and int(value) < 0:
        return "must be 0 (one per core) or more"
    if name == "snipcheck_normalizers":
        try:
            normalize.resolve(value)
        except KeyError as exc:
            return str(exc.args[0])
    if name == "snipcheck_requirements" and isinstance(value, dict):
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            return "expected a list of names, or a dict of names to sentences (strings)"
    elif name in (
        "snipcheck_provides", "snipcheck_requirements", "snipcheck_preload", "snipcheck_env", "snipcheck_depends",
        "snipcheck_nbval_sanitize",
    ) and not all(isinstance(x, str) for x in value):
        return "expected a list of strings"
    if name == "snipcheck_env":
        return next((why for why in map(tags.variable_problem, value) if why), None)
    if name == "snipcheck_depends":
        why = next((why for why in map(tags.pattern_problem, value) if why), None)
        if why or root is None:
            return why
        try:
            inputs.resolve(value, root)
        except inputs.InputError as exc:
            return str(exc)
    if name == "snipcheck_record_command" and "{id}" not in value:
        return "must contain {id}, where the snippet id goes"
    if name == "snipcheck_runner" and value not in PYTHON_RUNNERS:
        return f"expected one of {', '.join(PYTHON_RUNNERS)}"
    if name in ("snipcheck_memory_limit", "snipcheck_notebook_limit"):
        try:
            parse_size(value)
        except ValueError as exc:
            return str(exc)
    if name == "snipcheck_python" and value and shutil.which(value) is None:
        return "no such interpreter (give an absolute path or a command on PATH)"
    return None


def invalid(name: str, value: Any, why: str) -> str:
    """The one message for an invalid setting, as the build and the command line say it:
    the value, why, and the default used instead."""
    default = "(the interpreter running snipcheck)" if name == "snipcheck_python" else repr(VALUES[name].default)
    return f"invalid {name} = {value!r}: {why}; using the default {default}"


class ConfError(ValueError):
    """Running ``conf.py`` raised: the message names the file, the line and the error."""


def _conf_failure(conf: Path, exc: BaseException) -> str:
    """What went wrong in ``conf``, at its innermost line of ``conf`` itself."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == conf:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f"{conf}:{line}" if line else str(conf)
    return f"{where}: running conf.py raised {type(exc).__name__}: {exc}; fix conf.py (Sphinx runs the same file)"


def reference_from_pyproject(root: Path) -> str:
    """``"torch X"`` from ``[tool.snipcheck] reference-torch`` in ``pyproject.toml``, or ``""``."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    torch = data.get("tool", {}).get("snipcheck", {}).get("reference-torch")
    return f"torch {torch}" if torch else ""


def build_dir(confdir: Path) -> Path:
    """Where a project's builds go, for the command line (which has no build).

    ``BUILDDIR`` of the ``Makefile`` sphinx-quickstart writes beside
    ``conf.py`` or, with separate source and build folders, one level up;
    else ``_build`` beside ``conf.py``.  ``make clean`` removes it.
    """
    for folder in (confdir, confdir.parent):
        try:
            text = (folder / "Makefile").read_text(encoding="utf-8")
        except OSError:
            continue
        m = re.search(r"^BUILDDIR\s*\??=\s*(\S+)\s*$", text, re.MULTILINE)
        if m and "$" not in m.group(1):
            return (folder / m.group(1)).resolve()
    return (confdir / "_build").resolve()


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
    requirements: tuple[str, ...] = ()
    requirement_notes: tuple[tuple[str, str], ...] = ()
    runner: str = "fork"
    preload: tuple[str, ...] | None = None
    fork_min_runs: int = 3
    memory_limit: int = 4 << 30
    notebook_limit: int = 50 << 20
    source_dir: Path | None = None
    fail_on_drift: bool = True
    record_command: str = "snipcheck record {id}"
    env: tuple[str, ...] = ()
    depends: tuple[str, ...] = ()
    seed: int | None = None
    show_durations: bool = True
    merged: bool = False
    timings_file: Path | None = None

    @classmethod
    def from_mapping(
        cls, root: Path, values: Mapping[str, Any], doctreedir: Path | None = None
    ) -> tuple[Settings, list[str]]:
        r"""Resolve ``values`` (missing names take their default).

        :param doctreedir: the build's doctree directory, where the cache and
            report go by default; ``None`` outside a build (the command
            line), which then uses :func:`build_dir`\ ``/doctrees``: the
            same place for the projects sphinx-quickstart makes.

        :return: the settings and one message per invalid value (replaced by
            its default).
        """
        messages = []
        v: dict[str, Any] = {}
        for name, decl in VALUES.items():
            value = values.get(name, decl.default)
            why = problem(name, value, Path(root))
            if why:
                messages.append(invalid(name, value, why))
                value = decl.default
            v[name] = value
        root = Path(root)
        sanitizers = nbval_sanitize.load(v["snipcheck_nbval_sanitize"], root)
        messages.extend(sanitizers.problems)
        doctrees = Path(doctreedir) if doctreedir is not None else build_dir(root) / "doctrees"
        return (
            cls(
                root=root,
                snippets_dir=root / v["snipcheck_snippets_dir"],
                cache_dir=Path(
                    os.environ.get("SNIPCHECK_CACHE_DIR")
                    or (root / v["snipcheck_cache_dir"] if v["snipcheck_cache_dir"] else doctrees / "snipcheck-cache")
                ),
                report_dir=root / v["snipcheck_report_dir"] if v["snipcheck_report_dir"] else doctrees / "snipcheck-report",
                python=absolute_command(v["snipcheck_python"]) or sys.executable,
                execute=bool(v["snipcheck_execute"]),
                merged=v["snipcheck_execute"] == "merged",
                timings_file=root / v["snipcheck_timings_file"],
                timeout=float(v["snipcheck_timeout"]),
                output_limit=v["snipcheck_output_limit"],
                jobs=v["snipcheck_jobs"] or (os.cpu_count() or 1),
                normalizers=normalize.resolve(v["snipcheck_normalizers"]) + sanitizers.normalizers,
                provides=tuple(v["snipcheck_provides"]),
                requirements=tuple(v["snipcheck_requirements"]),
                requirement_notes=tuple(v["snipcheck_requirements"].items())
                if isinstance(v["snipcheck_requirements"], dict)
                else (),
                reference=v["snipcheck_reference"] or reference_from_pyproject(root),
                runner=v["snipcheck_runner"],
                preload=None if v["snipcheck_preload"] is None else tuple(v["snipcheck_preload"]),
                fork_min_runs=v["snipcheck_fork_min_runs"],
                memory_limit=parse_size(v["snipcheck_memory_limit"]),
                notebook_limit=parse_size(v["snipcheck_notebook_limit"]),
                source_dir=(root / v["snipcheck_source_dir"]) if v["snipcheck_source_dir"] else root,
                fail_on_drift=v["snipcheck_fail_on_drift"],
                record_command=v["snipcheck_record_command"],
                env=tuple(v["snipcheck_env"]),
                depends=tuple(v["snipcheck_depends"]),
                seed=v["snipcheck_seed"],
                show_durations=v["snipcheck_show_durations"],
            ),
            messages,
        )

    @classmethod
    def from_conf(cls, root: Path, **overrides: Any) -> tuple[Settings, list[str]]:
        """Read the ``snipcheck_*`` names of ``root/conf.py`` by executing it.

        :raises FileNotFoundError: if there is no ``conf.py``.
        :raises ConfError: if running it raised (the message names its line).
        """
        # absolute: it is run after the chdir below (``-c guide`` is relative)
        conf = Path(root).resolve() / "conf.py"
        if not conf.is_file():
            raise FileNotFoundError(f"no conf.py in {root}")
        cwd = os.getcwd()
        os.chdir(root)  # conf.py files assume they run in their own directory
        try:
            namespace = runpy.run_path(str(conf), run_name="conf")
        except (Exception, SystemExit) as exc:  # the project's own code: told, not as a traceback
            raise ConfError(_conf_failure(conf, exc)) from exc
        finally:
            os.chdir(cwd)
        values = {k: v for k, v in namespace.items() if k.startswith("snipcheck_")}
        values.update(overrides)
        return cls.from_mapping(Path(root).resolve(), values)

    def declared_files(self) -> tuple[tuple[str, str], ...]:
        """The files of ``snipcheck_depends`` (see :func:`snipcheck.sources.inputs.resolve`).

        A pattern that stopped matching since the settings were checked adds
        nothing: the snippets that read its files then fail to open them, visibly.
        """
        found: dict[str, str] = {}
        for pattern in self.depends:
            try:
                found.update(inputs.resolve([pattern], self.root))
            except inputs.InputError:
                continue
        return tuple(sorted(found.items()))

    def preload_modules(self, stamp: Stamp) -> tuple[str, ...]:
        """The modules the fork server imports once, for the interpreter ``stamp`` describes.

        ``snipcheck_preload`` as configured; left unset (``None``), torch when
        that interpreter has it (the probe found it), else nothing, so a
        project without torch starts its server without a word about it.

        :param stamp: the probe stamp of the snippet interpreter.
        """
        if self.preload is not None:
            return self.preload
        return ("torch",) if stamp.torch else ()

    def preload_problem(self, stamp: Stamp) -> str | None:
        """Why the configured preload cannot work on this interpreter, or ``None``.

        A configured module that is not installed is reported by the fork
        server itself ("cannot preload ..."), except torch, which the runner
        leaves out where the probe found none: this says so.

        :param stamp: the probe stamp of the snippet interpreter.
        """
        if self.preload is not None and "torch" in self.preload and not stamp.torch:
            return (
                f"snipcheck_preload names torch, but the snippet interpreter {self.python} has no torch, "
                "so the fork server does not preload it; install torch there, or remove it from snipcheck_preload"
            )
        return None

    def protected(self, *extra: Path) -> tuple[str, ...]:
        """The folders no run may change: the project root (where ``conf.py``
        is), the pages, the snippets, the cache and the report folder, the
        command line's build folder (:func:`build_dir`), ``extra`` (a build's
        source, output and doctree folders), and the git work tree and git
        directories holding them (see :func:`snipcheck.run.sandbox.protected_paths`)."""
        named = [self.root, self.source_dir or self.root, self.snippets_dir, self.cache_dir, self.report_dir]
        return protected_paths([*named, build_dir(self.root), *extra])
