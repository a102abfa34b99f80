"""New examples of the kind of ``shared/cases/false-green.md``: "holds" without having checked.

Walked again after the layered layout (the file's own cases are in
test_false_green.py, test_placements.py, test_verify.py and
test_cache_environment.py).  These are placements and edits the file does not
list, tried as an attacker would: a snippet inside MyST's ``{eval-rst}``
block, one inside ``.. only:: latex`` (which an HTML build never shows), and
an edited helper module the snippet imports; and the builders that publish
outside HTML (a PDF through LaTeX, man pages, Texinfo, JSON for a web app,
XML), which test_judge_while_writing.py does not build.  In each, a stale stated output
must fail the plain ``sphinx-build`` (no ``-W``) and ``snipcheck verify``, and
``snipcheck run`` must show the new output, never a cached one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import snipcheck_cli, write_project

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def sphinx(root: Path, cache: Path, builder: str = "html") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", builder, "-c", ".", "docs", f"_build/{builder}"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def assert_drift_everywhere(root: Path, cache: Path, where: str) -> None:
    """The build (no -W) and verify both call f/a drifted at ``where``."""
    build = sphinx(root, cache)
    assert build.returncode == 1, build.stdout + build.stderr
    assert f"  {where}: f/a: drift" in build.stderr, build.stderr
    check = snipcheck_cli(root, "verify", cache=cache)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "0 unchanged, 1 drifted" in check.stdout, check.stdout


PLACEMENTS = {
    "eval-rst": ("index.md", "# T\n\n```{eval-rst}\n.. snippet:: f/a\n\n   stale\n```\n", "index.md:4"),
    "only latex": ("index.rst", "T\n=\n\n.. only:: latex\n\n   .. snippet:: f/a\n\n      stale\n", "index.rst:6"),
}


@pytest.mark.parametrize("page", PLACEMENTS.values(), ids=PLACEMENTS)
def test_a_placement_in_a_nested_markup_is_judged_by_the_build_and_by_verify(tmp_path: Path, page: tuple[str, str, str]) -> None:
    name, text, where = page
    root = write_project(tmp_path / "p", CONF, {f"docs/{name}": text}, {"f/a": 'print("fresh")\n'})
    assert_drift_everywhere(root, tmp_path / "cache", where)
    recorded = snipcheck_cli(root, "record", cache=tmp_path / "cache")
    assert recorded.returncode == 0, recorded.stderr
    assert (root / "docs" / name).read_text() == text.replace("stale", "fresh")
    assert sphinx(root, tmp_path / "cache").returncode == 0


def test_an_edited_helper_module_is_never_served_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    root = write_project(
        tmp_path / "p", CONF, {"docs/index.md": "# T\n\n```{snippet} f/a\n1\n```\n"},
        {"f/a": "from _shared import X\nprint(X)\n", "f/_shared": "X = 1\n"},
    )  # fmt: skip
    first = sphinx(root, cache)
    assert first.returncode == 0, first.stderr
    (root / "snippets" / "f" / "_shared.py").write_text("X = 2\n")
    assert_drift_everywhere(root, cache, "index.md:3")
    run = snipcheck_cli(root, "run", "f/a", cache=cache)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[1] == "2", run.stdout


@pytest.mark.parametrize("builder", ["latex", "man", "texinfo", "json", "xml", "dummy"])
def test_every_other_builder_fails_on_drift_without_w(tmp_path: Path, builder: str) -> None:
    root = write_project(
        tmp_path / "p", CONF, {"docs/index.md": "# T\n\n```{snippet} f/a\nstale\n```\n"}, {"f/a": 'print("fresh")\n'}
    )
    built = sphinx(root, tmp_path / "cache", builder)
    assert built.returncode == 1, built.stdout + built.stderr
    assert "ERROR: snipcheck: 1 stated output or claim do not hold" in built.stderr, built.stderr
    assert "  index.md:3: f/a: drift" in built.stderr, built.stderr
