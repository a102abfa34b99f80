"""The layer contract: imports go only downward, and no module imports a circle.

``pyproject.toml`` ``[tool.importlinter]`` holds the contract (the layers of
``snipcheck``, top to bottom; only ``sphinxext`` and ``app`` import Sphinx,
docutils or myst-parser; ``snipcheck`` never imports the chapter's package;
no circle between sibling modules).  :func:`test_contracts_kept` runs
import-linter on it.  import-linter's sibling check does not see a package
that imports one of its own modules which imports the package back, so
:func:`test_no_module_circle` reads the whole import graph (grimp's, the one
import-linter builds) and finds every circle between any two modules
(``tests/import_circles.py``).

grimp reads every import statement of a module, those inside functions
(lazy imports) and under ``if TYPE_CHECKING:`` too; the last tests add an
upward import inside a function, and a circle, to a copy of the package and
check that the contract and the circle check fail, naming them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

EXT = REPO / "_ext"
PACKAGES = ("snipcheck", "snipcheck_chapter")


def lint_imports(ext: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's ``lint-imports`` on the packages under ``ext``, with
    this repository's contract, caching nothing."""
    env = {**os.environ, "PYTHONPATH": str(ext)}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys; from importlinter.cli import lint_imports; "
                "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))"
            ),
            str(REPO / "pyproject.toml"),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def find_circles(ext: Path) -> subprocess.CompletedProcess[str]:
    """``tests/import_circles.py`` on the packages under ``ext``, in a fresh
    interpreter (grimp would find this one's imported packages instead)."""
    return subprocess.run(
        [sys.executable, str(REPO / "tests" / "import_circles.py"), str(ext)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_contracts_kept(tmp_path: Path) -> None:
    done = lint_imports(EXT, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 4 kept, 0 broken." in done.stdout


def test_no_module_circle() -> None:
    done = find_circles(EXT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith(" 0 circles\n")


@pytest.fixture
def ext_copy(tmp_path: Path) -> Path:
    """A copy of the packages under ``_ext``, to add a bad import to."""
    ext = tmp_path / "ext"
    for name in PACKAGES:
        shutil.copytree(EXT / name, ext / name, ignore=shutil.ignore_patterns("__pycache__"))
    return ext


def test_lazy_upward_import_breaks_the_contract(ext_copy: Path, tmp_path: Path) -> None:
    # judge/ is below app/: an import of app inside a function is still an upward import.
    module = ext_copy / "snipcheck" / "judge" / "claims.py"
    module.write_text(
        module.read_text(encoding="utf-8") + "\n\ndef _upward() -> None:\n    from snipcheck.app import cli  # noqa\n",
        encoding="utf-8",
    )
    line = module.read_text(encoding="utf-8").splitlines().index("    from snipcheck.app import cli  # noqa") + 1
    done = lint_imports(ext_copy, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "snipcheck's layers import only downward BROKEN" in done.stdout
    assert f"snipcheck.judge.claims -> snipcheck.app.cli (l.{line})" in done.stdout


def test_lazy_sphinx_import_in_core_breaks_the_contract(ext_copy: Path, tmp_path: Path) -> None:
    module = ext_copy / "snipcheck" / "sources" / "tags.py"
    module.write_text(
        module.read_text(encoding="utf-8") + "\n\ndef _sphinx() -> None:\n    import docutils.nodes  # noqa\n",
        encoding="utf-8",
    )
    done = lint_imports(ext_copy, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "only sphinxext and app import Sphinx, docutils or myst-parser BROKEN" in done.stdout
    assert "snipcheck.sources.tags -> docutils" in done.stdout


def test_circle_through_a_package_is_found(ext_copy: Path) -> None:
    # A package importing one of its modules that imports the package back:
    # no two siblings, so only the module graph shows it.
    package = ext_copy / "snipcheck" / "sources" / "__init__.py"
    package.write_text(
        package.read_text(encoding="utf-8") + "\n\ndef _late() -> None:\n    from snipcheck.sources import chains  # noqa\n",
        encoding="utf-8",
    )
    module = ext_copy / "snipcheck" / "sources" / "chains.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\nimport snipcheck.sources  # noqa\n", encoding="utf-8")
    line = len(module.read_text(encoding="utf-8").splitlines())
    done = find_circles(ext_copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "circle: snipcheck.sources, snipcheck.sources.chains\n" in done.stdout
    assert f"  snipcheck.sources.chains:{line} -> snipcheck.sources (import snipcheck.sources  # noqa)\n" in done.stdout
    assert done.stdout.endswith(" 1 circles\n")
