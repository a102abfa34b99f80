"""Sessions: build the chapter, run the tests, record outputs.

    nox -s docs              build the chapter into _build/html (fails on drift)
    nox -s tests             run the test suite
    nox -s guide             build the English guide (guide/) into _build/guide
    nox -s new -- ID         scaffold a snippet file and print the directive to paste
    nox -s record -- [ID…]   write actual outputs into docs/ (all drifted ones without ids)
    nox -s verify -- 2.14.1 [--shard k/n]   run the chapter on another torch: drift report
    nox -s accept -- 2.14.1 [--dry-run]     accept its new outputs, move the reference pin
    nox -s merge -- R1.json R2.json …       combine shard reports
    nox -s cache -- ACTION   the result cache and the CI cache (key, show, plan, prune, save, restore)
    nox -s lint              ruff, and mypy --strict on the extension
    nox -s bench             the benchmark of design §10 (figures and ratios)

Environments are shared, one per torch release (see :func:`shared_env`):

    .nox/torch-2.13.0   the reference: docs, tests, record, docs-live, bench, guide
                        (and verify/accept of 2.13.0)
    .nox/torch-X        verify and accept of torch X
    .nox/tool           the project without torch: new, merge, lint

Each is made once; a session installs only the extras it lacks, and pip's
output is shown only when pip fails.  They are pip-based virtualenvs (uv would
not see the local torch wheel and would download a multi-GB CUDA build).  The
reference torch release is read from pyproject.toml ([tool.snipcheck]
reference-torch): the one pin.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nox
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).parent
ENVS = ROOT / ".nox"
nox.options.sessions = ["docs", "tests"]
# Every session runs in a shared environment of its own making (shared_env),
# so nox makes none per session.
nox.options.default_venv_backend = "none"


class _NoUvProbeLine(logging.Filter):
    """Drops nox's "uv binary not found." line.

    nox looks for uv before it reads a session's backend (get_virtualenv asks
    which optional backends exist, for any backend, "none" included) and logs
    that line on every session where uv is missing.  These sessions use no
    backend of nox's, so the line says nothing; any other record passes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "uv binary not found."


logging.getLogger("nox").addFilter(_NoUvProbeLine())


def reference_torch() -> str:
    """The reference torch version from pyproject.toml."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["tool"]["snipcheck"]["reference-torch"]


@dataclass(frozen=True)
class Env:
    """A virtualenv under .nox/ that sessions share."""

    location: Path

    @property
    def python(self) -> str:
        return str(self.location / "bin" / "python")

    def run(self, session: nox.Session, program: str, *args: str, **kwargs: Any) -> Any:
        """Run ``program`` (looked up in this environment first) with the
        environment activated (``VIRTUAL_ENV``, ``PATH``)."""
        local = self.location / "bin" / program
        env = {
            "VIRTUAL_ENV": str(self.location),
            "PATH": os.pathsep.join([str(self.location / "bin"), os.environ.get("PATH", "")]),
            **kwargs.pop("env", {}),
        }
        return session.run(str(local) if local.exists() else program, *args, env=env, **kwargs)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (two sessions never install into one environment at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_env(session: nox.Session, name: str, requirements: Iterable[str] = (), extras: Iterable[str] = ()) -> Env:
    """The shared environment ``.nox/<name>``, holding ``requirements`` and this
    project (editable) with at least ``extras``.

    A marker file records what was installed (the requirements, the extras and
    pyproject.toml's hash); a session that finds what it needs installs
    nothing, one that needs another extra installs only that (about 4 s of
    pip saved on every later run).  Other requirements than the marker's (a
    local torch wheel instead of the release) make the environment anew.
    pip runs quietly; its whole output is shown if it fails.
    """
    env = Env(ENVS / name)
    requirements, extras = list(requirements), set(extras)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    marker = env.location / ".snipcheck-installed.json"
    with _locked(ENVS / f".{name}.lock"):
        try:
            state = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = {}
        if sorted(state.get("requirements", requirements)) != sorted(requirements):
            session.log(f"{name}: other requirements than {state.get('requirements')}: making it anew")
            state = {}
            shutil.rmtree(env.location, ignore_errors=True)
        installed = set(state.get("extras", ()))
        if state and state.get("pyproject") == digest and extras <= installed:
            return env
        if not Path(env.python).exists():
            session.log(f"creating .nox/{name} ({' '.join(requirements) or 'no torch'})")
            session.run(sys.executable, "-m", "venv", str(env.location), silent=True)
        wanted = sorted(extras | installed)
        target = "." + (f"[{','.join(wanted)}]" if wanted else "")
        session.log(f"installing into .nox/{name}: {' '.join([*requirements, target])}")
        env.run(
            session, "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            *requirements, "-e", target, silent=True,
        )  # fmt: skip
        marker.write_text(json.dumps({"requirements": requirements, "extras": wanted, "pyproject": digest}))
    return env


def reference_env(session: nox.Session, *extras: str) -> Env:
    """The reference environment: the pinned torch (CPU wheel), numpy, this project."""
    return shared_env(session, f"torch-{reference_torch()}", [f"torch=={reference_torch()}", "numpy"], extras)


def tool_env(session: nox.Session, *extras: str) -> Env:
    """This project without torch (nothing it does runs a snippet)."""
    return shared_env(session, "tool", (), extras)


SPHINX = ["--keep-going", "-b", "html", "-c", ".", "-d", "_build/doctrees", "docs", "_build/html"]


@nox.session
def docs(session: nox.Session) -> None:
    """Build the chapter; any drift, failed run or bad tag fails the build (-W)."""
    env = reference_env(session, "chapter")
    env.run(session, "sphinx-build", "-W", *SPHINX, *session.posargs)


SHARDS = ROOT / "_build" / "shards"


@nox.session
def shard(session: nox.Session) -> None:
    """Run one shard of the chapter's snippets into _build/shards/: `nox -s shard -- K/N`
    (one of N, e.g. on a CPU job of a CI matrix), `nox -s shard -- --provides cuda` (a requirement
    shard: only the cells that need a GPU, on a machine with one); extra arguments go to
    `snipcheck execute`. Then `nox -s docs-merged` builds the pages from all of them."""
    args = list(session.posargs)
    if args and re.fullmatch(r"\d+/\d+", args[0]):
        k, n = args.pop(0).split("/")
        out, head = SHARDS / f"shard-{k}-of-{n}", ["--shard", f"{k}/{n}"]
    elif "--provides" in args:
        names = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--provides"]
        out, head = SHARDS / ("for-" + "-".join(sorted(names))), []
    else:
        session.error("give the shard: nox -s shard -- 2/4, or a requirement shard: nox -s shard -- --provides cuda")
    env = reference_env(session, "chapter")
    env.run(session, "python", "-m", "snipcheck", "execute", *head, "--out", str(out), *args)


@nox.session(name="docs-merged")
def docs_merged(session: nox.Session) -> None:
    """Merge every shard under _build/shards/ into the build's cache and build the chapter from
    it, running nothing (-W: any drift, or a snippet no shard ran, fails it). Extra arguments go
    to the merge, e.g. `-- --not-run cuda --not-run burn` where no shard provided those."""
    folders = sorted(str(p) for p in SHARDS.glob("*") if (p / "manifest.json").is_file())
    if not folders:
        session.error(f"no shard under {SHARDS}: run nox -s shard -- K/N for each K first")
    env = reference_env(session, "chapter")
    env.run(session, "python", "-m", "snipcheck", "execute", "--merge", *folders, *session.posargs)
    env.run(session, "sphinx-build", "-W", *SPHINX, "-D", "snipcheck_execute=merged")


@nox.session
def cache(session: nox.Session) -> None:
    """The result cache and the CI cache (`snipcheck cache`): `nox -s cache -- key` prints the CI
    cache's key for the reference environment (what docs.yml keys actions/cache on); `-- plan
    --ci-cache _build/ci-cache` says what a build would take from it and what would run; `-- show`,
    `-- prune`, `-- save --ci-cache DIR`, `-- restore --ci-cache DIR`."""
    if not session.posargs:
        session.error("give an action: nox -s cache -- key (or show, plan, prune, save, restore)")
    env = reference_env(session, "chapter")  # the environment the shards and docs-merged run in: the same key
    env.run(session, "python", "-m", "snipcheck", "cache", *session.posargs)


@nox.session
def guide(session: nox.Session) -> None:
    """Build the English guide for outside users (guide/) into _build/guide; a drifted example fails it (-W).

    Its examples need no torch; one runs the pytest plugin, hence the test extra."""
    env = reference_env(session, "myst", "test")
    env.run(
        session, "sphinx-build", "-W", "--keep-going", "-b", "html", "-d", "_build/guide-doctrees",
        "guide", "_build/guide", *session.posargs,
    )  # fmt: skip


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (unit tests, test roots, and the real chapter)."""
    env = reference_env(session, "chapter", "test")
    env.run(session, "pytest", *session.posargs)


@nox.session
def new(session: nox.Session) -> None:
    """Scaffold a snippet: `nox -s new -- inplace/my-example [--expect RuntimeError] [--rust]`."""
    if not session.posargs:
        session.error("give the new snippet's id: nox -s new -- inplace/my-example")
    tool_env(session).run(session, "python", "-m", "snipcheck", "new", *session.posargs)


@nox.session(name="docs-live")
def docs_live(session: nox.Session) -> None:
    """Live preview on http://127.0.0.1:8000: edits to pages, snippets or the extension rebuild it,
    re-running only the snippets that changed."""
    env = reference_env(session, "chapter", "live")
    env.run(
        session, "sphinx-autobuild", "-c", ".", "-d", "_build/live-doctrees", "docs", "_build/live",
        "--watch", "snippets", "--watch", "_ext", "--watch", "conf.py", "--port", "8000",
        # pip's egg-info (rewritten by every other nox session) and bytecode are not sources
        "--re-ignore", r"\.egg-info|__pycache__|\.pyc$", *session.posargs,
    )  # fmt: skip


@nox.session
def record(session: nox.Session) -> None:
    """Run snippets and write their real output into docs/ (never type outputs by hand)."""
    env = reference_env(session, "chapter")
    env.run(session, "python", "-m", "snipcheck", "record", *session.posargs)


def torch_target(session: nox.Session) -> tuple[str, str, list[str]]:
    """Split posargs into (pip requirement for torch, slug, remaining args).

    The first argument is a version (``2.14.1``) or a wheel path.
    """
    if not session.posargs:
        session.error("give a torch version or wheel path: nox -s verify -- 2.14.1")
    spec, rest = session.posargs[0], list(session.posargs[1:])
    if spec.endswith(".whl"):
        wheel = Path(spec).resolve()
        if not wheel.is_file():
            session.error(f"no such wheel: {wheel}")
        try:
            name, version, _, _ = parse_wheel_filename(wheel.name)
        except InvalidWheelFilename as exc:
            session.error(f"{wheel.name} is not a wheel's file name ({exc}); give a torch wheel or a version")
        if name != "torch":
            session.error(f"{wheel.name} is a wheel of {name}, not of torch")
        return str(wheel), f"torch-{version.public}", rest
    try:
        version = Version(spec)
    except InvalidVersion:
        session.error(f"{spec!r} is neither a torch version (e.g. 2.14.1) nor a path to a torch wheel (.whl)")
    return f"torch=={version}", f"torch-{version}", rest


def torch_env(session: nox.Session) -> tuple[Env, str, list[str]]:
    """The shared environment of the torch named by posargs (the reference
    environment itself for the reference version), its slug and the other args."""
    requirement, slug, rest = torch_target(session)
    return shared_env(session, slug, [requirement, "numpy"], ["chapter"]), slug, rest


@nox.session
def verify(session: nox.Session) -> None:
    """Run every snippet on another torch and report drift (exit 1 on drift).

    Writes docs/_reports/<torch-version>.json (the version page's source) and
    _build/verify/<torch-version>.html; a shard (`--shard 2/8`) writes its JSON
    under _build/verify/ for `nox -s merge`.  Extra args go to `snipcheck verify`.
    """
    env, slug, rest = torch_env(session)
    shard = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "--shard"), None)
    suffix = "" if shard in (None, "1/1") else "-shard" + shard.replace("/", "of")
    defaults = []
    if "--json" not in rest:
        # a whole run is the version page's source; a shard is not, until merged
        folder = "docs/_reports" if not suffix else "_build/verify"
        defaults += ["--json", f"{folder}/{slug}{suffix}.json"]
    if "--html" not in rest:
        defaults += ["--html", f"_build/verify/{slug}{suffix}.html"]
    env.run(session, "python", "-m", "snipcheck", "verify", "--python", env.python, *defaults, *rest)


@nox.session
def accept(session: nox.Session) -> None:
    """Accept the new outputs of another torch: rewrite drifted stated outputs, move the pin.

    `nox -s accept -- 2.14.1 --dry-run` shows the diff first; `--force` writes
    over uncommitted changes.
    """
    env, _, rest = torch_env(session)
    env.run(session, "python", "-m", "snipcheck", "accept", "--python", env.python, *rest)


@nox.session
def merge(session: nox.Session) -> None:
    """Combine shard reports: `nox -s merge -- a.json b.json --json all.json --html all.html`."""
    tool_env(session).run(session, "python", "-m", "snipcheck", "merge", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything, mypy --strict on the extension."""
    env = tool_env(session, "lint")
    env.run(session, "ruff", "check", "_ext", "noxfile.py", "conf.py")
    env.run(session, "mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark (prints figures and ratios; asserts nothing): `nox -s bench -- --sizes 100,300,1000`.

    myst-nb (chapter extra) brings ipykernel for its `force` comparison."""
    env = reference_env(session, "chapter", "test")
    env.run(session, "python", "tests/benchmark.py", *session.posargs)
