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
    return re.findall(r"^=+ (.*) in [\d.]+s", out, re.M)[-1]


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
