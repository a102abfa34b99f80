"""Sessions: build the chapter, run the tests, record outputs.

    nox -s docs              build the chapter into _build/html (fails on drift)
    nox -s tests             run the test suite
    nox -s new -- ID         scaffold a snippet file and print the directive to paste
    nox -s record -- [ID…]   write actual outputs into docs/ (all drifted ones without ids)
    nox -s verify -- 2.14.1 [--shard k/n]   run the chapter on another torch: drift report
    nox -s accept -- 2.14.1 [--dry-run]     accept its new outputs, move the reference pin
    nox -s merge -- R1.json R2.json …       combine shard reports
    nox -s lint              ruff, and mypy --strict on the extension
    nox -s bench             the benchmark of design §10 (figures and ratios)

Environments are pip-based virtualenvs (uv would not see the local torch wheel
and would download a multi-GB CUDA build).  The reference torch release is read
from pyproject.toml ([tool.snipcheck] reference-torch): the one pin.
"""

from __future__ import annotations

import hashlib
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
    """Install the pinned torch (CPU wheel), numpy and this project (editable).

    Skipped when this session's environment already holds exactly that (a
    marker file records the pin, the extras and pyproject.toml's hash), which
    spares every later run about 4 s of pip.
    """
    target = "." + (f"[{','.join(extras)}]" if extras else "")
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    wanted = f"torch=={reference_torch()} {target} {digest}"
    marker = Path(session.virtualenv.location or ".") / ".snipcheck-installed"
    if marker.is_file() and marker.read_text() == wanted:
        return
    session.install(f"torch=={reference_torch()}", "numpy")
    session.install("-e", target)
    marker.write_text(wanted)


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
def new(session: nox.Session) -> None:
    """Scaffold a snippet: `nox -s new -- inplace/my-example [--expect RuntimeError] [--rust]`."""
    if not session.posargs:
        session.error("give the new snippet's id: nox -s new -- inplace/my-example")
    session.install("-e", ".")
    session.run("python", "-m", "snipcheck", "new", *session.posargs)


@nox.session(name="docs-live")
def docs_live(session: nox.Session) -> None:
    """Live preview on http://127.0.0.1:8000: edits to pages, snippets or the extension rebuild it,
    re-running only the snippets that changed."""
    install_reference(session, "live")
    session.run(
        "sphinx-autobuild", "-c", ".", "-d", "_build/live-doctrees", "docs", "_build/live",
        "--watch", "snippets", "--watch", "_ext", "--watch", "conf.py", "--port", "8000",
        # pip's egg-info (rewritten by every other nox session) and bytecode are not sources
        "--re-ignore", r"\.egg-info|__pycache__|\.pyc$", *session.posargs,
    )


@nox.session
def record(session: nox.Session) -> None:
    """Run snippets and write their real output into docs/ (never type outputs by hand)."""
    install_reference(session)
    session.run("python", "-m", "snipcheck", "record", *session.posargs)


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
        version = wheel.name.split("-")[1]
        return str(wheel), f"torch-{version}", rest
    return f"torch=={spec}", f"torch-{spec}", rest


def torch_env(session: nox.Session, requirement: str, slug: str) -> str:
    """A virtualenv (kept under .nox/) holding one torch release and numpy; returns its python."""
    env = ROOT / ".nox" / f"_{slug}"
    python = env / "bin" / "python"
    if not python.exists():
        session.run("python", "-m", "venv", str(env))
    session.run(str(python), "-m", "pip", "install", "--quiet", requirement, "numpy", external=True)
    return str(python)


@nox.session
def verify(session: nox.Session) -> None:
    """Run every snippet on another torch and report drift (exit 1 on drift).

    Writes docs/_reports/<torch-version>.json (the version page's source) and
    _build/verify/<torch-version>.html; a shard (`--shard 2/8`) writes its JSON
    under _build/verify/ for `nox -s merge`.  Extra args go to `snipcheck verify`.
    """
    requirement, slug, rest = torch_target(session)
    session.install("-e", ".")
    python = torch_env(session, requirement, slug)
    shard = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "--shard"), None)
    suffix = "" if shard in (None, "1/1") else "-shard" + shard.replace("/", "of")
    defaults = []
    if "--json" not in rest:
        # a whole run is the version page's source; a shard is not, until merged
        folder = "docs/_reports" if not suffix else "_build/verify"
        defaults += ["--json", f"{folder}/{slug}{suffix}.json"]
    if "--html" not in rest:
        defaults += ["--html", f"_build/verify/{slug}{suffix}.html"]
    session.run("python", "-m", "snipcheck", "verify", "--python", python, *defaults, *rest)


@nox.session
def accept(session: nox.Session) -> None:
    """Accept the new outputs of another torch: rewrite drifted stated outputs, move the pin.

    `nox -s accept -- 2.14.1 --dry-run` shows the diff first; `--force` writes
    over uncommitted changes.
    """
    requirement, slug, rest = torch_target(session)
    session.install("-e", ".")
    python = torch_env(session, requirement, slug)
    session.run("python", "-m", "snipcheck", "accept", "--python", python, *rest)


@nox.session
def merge(session: nox.Session) -> None:
    """Combine shard reports: `nox -s merge -- a.json b.json --json all.json --html all.html`."""
    session.install("-e", ".")
    session.run("python", "-m", "snipcheck", "merge", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff on everything, mypy --strict on the extension."""
    session.install("-e", ".[test]", "ruff", "mypy", "types-docutils")
    session.run("ruff", "check", "_ext", "noxfile.py", "conf.py")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark (prints figures and ratios; asserts nothing): `nox -s bench -- --sizes 100,300,1000`."""
    install_reference(session, "test")
    session.install("ipykernel")  # for the myst-nb `force` comparison
    session.run("python", "tests/benchmark.py", *session.posargs)
