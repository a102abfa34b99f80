"""The pytest plugin: ``pytest --snipcheck docs/`` runs every placement through the core.

Each test runs a real ``pytest`` in a subprocess on a small project (the
plugin is registered through the ``pytest11`` entry point of the installed
package); the chapter's own run is in test_chapter.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CONF = """\
extensions = ["myst_parser", "snipcheck"]
snipcheck_source_dir = "docs"
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""
PAGE = """\
# Page

```{snippet} p/drifts
stale words
```

```{snippet} p/holds
fresh words
```

```{snippet} p/future
stated elsewhere
```
"""
RST = """\
Other
=====

.. snippet:: p/rst

   from rst
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "docs" / "index.md").write_text(PAGE)
    (root / "docs" / "other.rst").write_text(RST)
    snippets = root / "snippets" / "p"
    snippets.mkdir(parents=True)
    (snippets / "drifts.py").write_text('print("fresh words")\n')
    (snippets / "holds.py").write_text('print("fresh words")\n')
    (snippets / "future.py").write_text('# /// snipcheck\n# requires = ["torch>=99"]\n# ///\nprint("never")\n')
    (snippets / "rst.py").write_text('print("from rst")\n')
    return root


def pytest_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(project.parent / "cache"), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "docs/", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def tally(out: str) -> str:
    return re.findall(r"^=+ (.*) in [\d.]+s", out, re.MULTILINE)[-1]


def test_one_item_per_placement_and_a_failure_with_the_diff(project: Path) -> None:
    done = pytest_run(project, "-rfs")
    assert done.returncode == 1, done.stdout
    assert tally(done.stdout) == "1 failed, 2 passed, 1 skipped"
    assert "FAILED docs/index.md::p/drifts" in done.stdout
    assert "snippet 'p/drifts' (docs/index.md:3): the stated output differs from the actual output" in done.stdout
    assert "-stale words\n+fresh words" in done.stdout
    assert "if the new output is right, record it: snipcheck record p/drifts" in done.stdout
    # the skip names what is missing, at the page's line
    assert re.search(r"SKIPPED \[1\] docs/index.md:\d+: this environment lacks torch>=99", done.stdout), done.stdout


def test_k_selects_snippets_by_id(project: Path) -> None:
    done = pytest_run(project, "-k", "holds or rst")
    assert done.returncode == 0, done.stdout
    assert tally(done.stdout) == "2 passed, 2 deselected"


def test_x_stops_at_the_first_drift(project: Path) -> None:
    done = pytest_run(project, "-x")
    assert done.returncode == 1
    assert tally(done.stdout) == "1 failed"


def test_xdist_spreads_the_items_over_workers(project: Path) -> None:
    pytest.importorskip("xdist")
    done = pytest_run(project, "-n", "2")
    assert done.returncode == 1, done.stdout
    assert tally(done.stdout) == "1 failed, 2 passed, 1 skipped"


def test_without_the_flag_nothing_is_collected_from_pages(project: Path) -> None:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(project.parent / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "docs/"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 5, done.stdout  # no tests collected


def forked(project: Path, extra: str = "") -> Path:
    """``project`` with one snippet, run by the fork runner (the default), ``extra`` added to conf.py."""
    (project / "conf.py").write_text(CONF.replace('snipcheck_runner = "subprocess"\n', "") + extra)
    (project / "docs" / "index.md").write_text("# Page\n\n```{snippet} p/holds\nfresh words\n```\n")
    (project / "docs" / "other.rst").unlink()
    return project


def test_the_plugin_plans_the_runs_so_fewer_than_fork_min_runs_start_no_fork_server(project: Path) -> None:
    done = pytest_run(forked(project), "-rA", "--log-level=INFO")
    assert done.returncode == 0, done.stdout
    assert tally(done.stdout) == "1 passed"
    assert "fork runner ready" not in done.stdout  # snipcheck_fork_min_runs = 3: one run goes as a subprocess


def test_the_fork_server_start_is_logged_once(project: Path) -> None:
    done = pytest_run(forked(project, "snipcheck_fork_min_runs = 0\n"), "-rA", "--log-level=INFO")
    assert done.returncode == 0, done.stdout
    assert done.stdout.count("fork runner ready (preloaded nothing)") == 1, done.stdout


CHAIN_PAGE = """\
# Tutorial

```{snippet} t/alone
```

```{snippet-chain} demo
```

```{snippet} t/setup
```

```{snippet} t/use
```

```{snippet} t/more
```
"""
CHAIN_SOURCES = {
    "t/alone": "print('on its own', 'x' in globals())\n",
    "t/setup": "x = [1]\nprint('x =', x)\n",
    "t/use": "x.append(2)\nprint('x again =', x)\n",
    "t/more": "print('and', x + [3])\n",
}


def test_a_chain_is_collected_one_item_a_cell_and_its_cells_run_together(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "docs" / "index.md").write_text(CHAIN_PAGE)
    for snippet_id, code in CHAIN_SOURCES.items():
        path = root / "snippets" / f"{snippet_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache-record"))
    recorded = subprocess.run(
        [sys.executable, "-m", "snipcheck", "record"], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    done = pytest_run(root, "-v")
    assert done.returncode == 0, done.stdout
    assert tally(done.stdout) == "4 passed"
    for snippet_id in CHAIN_SOURCES:
        assert f"docs/index.md::{snippet_id} PASSED" in done.stdout
    # a later cell alone: the cells before it run first, in its process
    (tmp_path / "cache").rename(tmp_path / "cache-old")
    done = pytest_run(root, "-k", "more")
    assert done.returncode == 0, done.stdout
    assert tally(done.stdout) == "1 passed, 3 deselected"
    # an edit of a middle cell: that cell and the one after it drift, each at its own line
    (root / "snippets" / "t" / "use.py").write_text("x.append(5)\nprint('x again =', x)\n")
    done = pytest_run(root)
    assert done.returncode == 1, done.stdout
    assert tally(done.stdout) == "2 failed, 2 passed"
    assert "FAILED docs/index.md::t/use" in done.stdout and "FAILED docs/index.md::t/more" in done.stdout


#: Tool folders that land in a project whose pages sit beside conf.py, each
#: holding a page Sphinx would read: pytest writes its own (below), the others are made.
TOOL_PAGES = [".venv/lib/python3/site-packages/pkg/README.md", "node_modules/pkg/README.md", ".tox/py/README.md",
              "docs/.ipynb_checkpoints/index-checkpoint.md", ".nox/tests/README.rst"]  # fmt: skip


def test_pytest_snipcheck_and_other_tools_leave_no_page_that_a_strict_build_then_reads(tmp_path: Path) -> None:
    """issue 24: ``pytest --snipcheck`` writes ``.pytest_cache/README.md``
    into the rootdir; in a MyST project whose source folder is that folder, a
    ``-W`` build read it as an orphan page and failed.  The extension keeps
    every tool folder out of the source (``exclude_patterns``)."""
    root = tmp_path / "p"
    (root / "docs").mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_runner = "subprocess"\n')
    (root / "index.md").write_text("# Home\n\n```{toctree}\ndocs/index\n```\n")
    (root / "docs" / "index.md").write_text("# Page\n\n```{snippet} p/holds\nfresh words\n```\n")
    (root / "snippets" / "p").mkdir(parents=True)
    (root / "snippets" / "p" / "holds.py").write_text('print("fresh words")\n')
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--snipcheck", "docs/"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert (root / ".pytest_cache" / "README.md").is_file()  # what pytest leaves
    for page in TOOL_PAGES:
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        (root / page).write_text("# Not a page of this site\n" if page.endswith(".md") else "Not a page\n==========\n")
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"), ".", str(tmp_path / "html")],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    written = sorted(p.relative_to(tmp_path / "html").as_posix() for p in (tmp_path / "html").rglob("*.html"))
    assert written == ["docs/index.html", "genindex.html", "index.html", "search.html"]


def test_a_projects_own_exclude_patterns_are_kept_and_not_repeated(tmp_path: Path) -> None:
    from sphinx.testing.util import SphinxTestApp

    (tmp_path / "conf.py").write_text(
        'extensions = ["snipcheck"]\nexclude_patterns = ["_build", ".venv", "**/.venv"]\nsnipcheck_execute = False\n'
    )
    (tmp_path / "index.rst").write_text("Home\n====\n")
    app = SphinxTestApp("html", srcdir=tmp_path, builddir=tmp_path / "_build")
    try:
        patterns = list(app.config.exclude_patterns)
    finally:
        app.cleanup()
    assert patterns[:3] == ["_build", ".venv", "**/.venv"]
    assert patterns.count(".venv") == 1 and patterns.count("**/.venv") == 1
    assert {".pytest_cache", "**/.pytest_cache", "node_modules", "**/node_modules"} <= set(patterns)
