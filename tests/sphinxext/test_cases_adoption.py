"""The kind of ``shared/cases/adoption.md``: what an outside Sphinx project meets.

Walked again after the layered layout.  Case 12 ("The configuration has
changed" on every build, so every page rewritten) is tested on the chapter in
tests/site/test_chapter.py; here it is tried as an outside project meets it: a
``sphinx-quickstart --sep`` layout (``source/conf.py`` with alabaster, an
``.rst`` page, the build run from the folder that holds the Makefile).  A new
example of the kind: the hint a drifted build prints ("record it: snipcheck
record f/a"), run as it is where the user ran the build (it now names
``--conf-dir source``); and conf.py shapes the quickstart does not write:
``snipcheck`` listed before ``myst_parser``, pages with a ``.txt`` suffix.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import plain, snipcheck_cli, write_project

CONF = """\
project = "outside"
extensions = ["snipcheck"]
html_theme = "alabaster"
exclude_patterns = []
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def quickstart_sep(root: Path, stated: str) -> Path:
    """A ``sphinx-quickstart --sep`` project: ``source/`` (conf.py, index.rst, snippets/) beside ``build/``."""
    (root / "source" / "snippets" / "f").mkdir(parents=True)
    (root / "source" / "conf.py").write_text(CONF)
    (root / "source" / "index.rst").write_text(f"Outside\n=======\n\n.. snippet:: f/a\n\n   {stated}\n")
    (root / "source" / "snippets" / "f" / "a.py").write_text('print("fresh")\n')
    (root / "Makefile").write_text("# as sphinx-quickstart writes it; the tests call sphinx-build directly\n")
    return root


def build(root: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "source", "build/html"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_12_a_second_build_of_an_unchanged_outside_project_changes_nothing(tmp_path: Path) -> None:
    root = quickstart_sep(tmp_path / "p", "fresh")
    first = build(root, tmp_path / "cache")
    assert first.returncode == 0, first.stdout + first.stderr
    page = root / "build" / "html" / "index.html"
    written = page.stat().st_mtime_ns
    again = build(root, tmp_path / "cache")
    output = plain(again.stdout + again.stderr)
    assert again.returncode == 0, output
    assert "configuration has changed" not in output, output
    assert "updating environment: 0 added, 0 changed, 0 removed" in output, output
    assert "1 match their stated output" in output, output
    assert page.stat().st_mtime_ns == written


def test_the_record_hint_of_a_drifted_build_runs_where_the_build_ran(tmp_path: Path) -> None:
    # Was: "record it: snipcheck record f/a", which, run beside source/, said
    # "error: no conf.py in …; give the directory that holds conf.py with --conf-dir".
    root = quickstart_sep(tmp_path / "p", "stale")
    drifted = build(root, tmp_path / "cache")
    assert drifted.returncode == 1
    hint = next(line for line in drifted.stderr.splitlines() if "record it: " in line)
    command = shlex.split(hint.split("record it: ", 1)[1].removesuffix(" [snipcheck.drift]"))
    assert command == ["snipcheck", "--conf-dir", "source", "record", "f/a"]
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", *command], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert (root / "source" / "index.rst").read_text() == "Outside\n=======\n\n.. snippet:: f/a\n\n   fresh\n"
    assert build(root, tmp_path / "cache").returncode == 0


@pytest.mark.parametrize(
    ("configured", "confdir", "expected"),
    [
        ("snipcheck record {id}", "p", "snipcheck record {id}"),  # the build runs beside conf.py
        ("snipcheck record {id}", "p/source", "snipcheck --conf-dir source record {id}"),
        ("snipcheck record {id}", "p/my {docs}", "snipcheck --conf-dir 'my {{docs}}' record {id}"),
        ("snipcheck record {id}", "elsewhere", "snipcheck record {id}"),  # never a path that climbs
        ("nox -s record -- {id}", "p/source", "nox -s record -- {id}"),  # the project's own command
    ],
)
def test_the_hint_names_the_conf_dir_only_below_the_build_folder(
    tmp_path: Path, configured: str, confdir: str, expected: str
) -> None:
    from snipcheck.sphinxext.record_hint import record_command

    command = record_command(configured, tmp_path / confdir, tmp_path / "p")
    assert command == expected


SHAPES = {
    "snipcheck before myst_parser": ('extensions = ["snipcheck", "myst_parser"]\n', {"index.md": "# T\n\n```{snippet} f/a\n```\n"}, "index.md:3"),
    "a .txt source suffix": (
        'extensions = ["snipcheck"]\nsource_suffix = {".rst": "restructuredtext", ".txt": "restructuredtext"}\n',
        {"index.rst": "T\n=\n\n.. toctree::\n\n   other\n", "other.txt": "O\n=\n\n.. snippet:: f/a\n"},
        "other.txt:4",
    ),
}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES)
def test_record_and_the_build_agree_on_other_conf_shapes(tmp_path: Path, shape: tuple[str, dict[str, str], str]) -> None:
    conf, pages, where = shape
    conf += 'exclude_patterns = ["_build"]\nsnipcheck_runner = "subprocess"\nsnipcheck_preload = []\n'
    root = write_project(tmp_path / "p", conf, pages, {"f/a": 'print("fresh")\n'})
    recorded = snipcheck_cli(root, "record", cache=tmp_path / "cache")
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout.startswith(f"{where}: f/a: recorded\n"), recorded.stdout
    assert "fresh" in (root / where.split(":")[0]).read_text()
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-b", "html", ".", "_build/html"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "1 match their stated output" in built.stdout, built.stdout
