"""Shared fixtures: sphinx.testing, hermetic per-test copies of the test roots.

Every Sphinx test gets its own copy of its test root (so builds never share a
doctree or an output directory), its own result cache and report directory
(``snipcheck_cache_dir`` / ``snipcheck_report_dir`` overrides pointing into the
test's ``tmp_path``), and nothing is ever written under ``tests/roots``.

Probing the snippet interpreter imports torch (about 2 s); its answer depends
only on the interpreter, so it is computed once per session and copied into
each per-test cache.  Results are never shared between tests.

Test folders lie under ``/var/tmp``, not ``/tmp``: each snippet run has a
``/tmp`` of its own, where a marker a snippet leaves would not be seen.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

# The tests live in one folder per layer of the package (tests/sources, ...,
# tests/sphinxext, and tests/site for the chapter and the repository); the
# support modules beside this file (helpers, load, faults_support,
# shard_support, ...) are importable from each.  What test modules share lives
# in those support modules, never in a test module (site/test_suite_shape.py
# checks it); every folder is on sys.path, so any one folder or file runs alone
# as in the whole suite.
for _folder in sorted(Path(__file__).parent.iterdir()):
    if _folder.is_dir() and any(_folder.glob("test_*.py")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

from snipcheck.model import Stamp  # noqa: E402
from snipcheck.run.environment import probe
from snipcheck.sources.placement import Placement

# browser_fixtures: the browser tests' build, server, Chromium; wheel_fixtures:
# the built sdist and wheel, and fresh virtualenvs holding the wheel;
# leftovers: the session fails if it leaves a run directory or a server behind
pytest_plugins = ["sphinx.testing.fixtures", "browser_fixtures", "wheel_fixtures", "leftovers"]

# Every run gets /tmp and /dev/shm of its own (run/sandbox.py), so a test's
# folders, which its snippets write to and read from as a user's scripts would
# use a folder of theirs, lie elsewhere: pytest's documented temporary root.
if "PYTEST_DEBUG_TEMPROOT" not in os.environ and os.access("/var/tmp", os.W_OK):
    os.environ["PYTEST_DEBUG_TEMPROOT"] = "/var/tmp"

# Sphinx colours its log (an escape code around each warning) when NO_COLOR is
# unset and FORCE_COLOR is set or CI=true, as on a CI runner: the tests compare
# warnings as plain text, so no build they run is coloured unless the test
# itself asks for colour (test_progress, test_cli unset NO_COLOR in their env).
os.environ["NO_COLOR"] = "1"

TESTS = Path(__file__).parent
ROOTS = TESTS / "roots"
REPO = TESTS.parent


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return ROOTS


@pytest.fixture(autouse=True)
def _no_env_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    # SNIPCHECK_CACHE_DIR overrides snipcheck_cache_dir; a developer's setting
    # must not leak into the tests (test_chapter sets it for its subprocesses).
    monkeypatch.delenv("SNIPCHECK_CACHE_DIR", raising=False)


@pytest.fixture(autouse=True)
def _runs_allowed() -> None:
    """Each test starts with runs allowed: a test that stopped the live runs
    (a Ctrl-C, in-process) leaves ``stopping.stopping()`` set in its worker,
    as a command's exit does, and a runner used directly would refuse to run."""
    from snipcheck.run.stopping import resume_runs

    resume_runs()


@pytest.fixture(autouse=True)
def _fresh_translations() -> None:
    """Each test's Sphinx builds start with no message catalog loaded.

    ``sphinx.locale.translators`` is process-wide, and ``sphinx.locale.init``
    adds a later application's catalogs to the translator an earlier one
    loaded: after an in-process build of the Chinese chapter, an English
    project's theme said 搜索 (seen when test_lint ran before test_i18n).
    """
    import sphinx.locale

    sphinx.locale.translators.clear()


@pytest.fixture(scope="session")
def probe_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory holding only the probe answer for ``sys.executable``."""
    directory = tmp_path_factory.mktemp("probe-cache")
    probe(sys.executable, directory)
    return directory


@pytest.fixture(scope="session")
def stamp(probe_cache: Path) -> Stamp:
    """The environment stamp of the interpreter the snippets run under."""
    return probe(sys.executable, probe_cache)


def fresh_cache(directory: Path, probe_cache: Path) -> Path:
    """An empty result cache at ``directory`` that already knows the probe."""
    shutil.copytree(probe_cache / "probes", directory / "probes")
    return directory


@pytest.fixture
def cache_dir(tmp_path: Path, probe_cache: Path) -> Path:
    """This test's own (empty) result cache."""
    return fresh_cache(tmp_path / "snipcheck-cache", probe_cache)


@pytest.fixture
def app_params(request, app_params, tmp_path: Path, rootdir: Path, cache_dir: Path):
    """sphinx.testing's app parameters, made hermetic (see module docstring)."""
    args, kwargs = app_params
    marker_kwargs: dict = {}
    for info in reversed(list(request.node.iter_markers("sphinx"))):
        marker_kwargs.update(info.kwargs)
    testroot = marker_kwargs.get("testroot", "root")
    srcdir = tmp_path / "src"
    shutil.copytree(rootdir / f"test-{testroot}", srcdir)
    kwargs["srcdir"] = srcdir
    kwargs["builddir"] = tmp_path / "_build"
    overrides = dict(kwargs.get("confoverrides") or {})
    overrides.setdefault("snipcheck_cache_dir", str(cache_dir))
    overrides.setdefault("snipcheck_report_dir", str(tmp_path / "report"))
    # Tests exercise the runner their root or test names, however few its runs.
    overrides.setdefault("snipcheck_fork_min_runs", 0)
    kwargs["confoverrides"] = overrides
    return type(app_params)(args, kwargs)


@pytest.fixture(scope="session")
def loaded_noxfile() -> ModuleType:
    """noxfile.py, loaded once per test session: loading it registers its
    sessions in nox's one registry, and a second load warned once a session
    ("FutureWarning: The session 'docs' has already been registered")."""
    spec = importlib.util.spec_from_file_location("snipcheck_noxfile", REPO / "noxfile.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def chapter_index(tmp_path_factory: pytest.TempPathFactory):
    """The real chapter's placement index (placements and code written in pages),
    read as the build reads it (once per session)."""
    from snipcheck.app.index_reader import read_index

    return read_index(REPO / "docs", REPO, tmp_path_factory.mktemp("chapter-index"))


@pytest.fixture(scope="session")
def chapter_placements(chapter_index) -> list[Placement]:
    """The real chapter's placements."""
    return chapter_index.placements
