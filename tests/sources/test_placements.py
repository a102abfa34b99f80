"""One placement index: the build, record, verify and the lint see the same snippets.

The ``markups`` test root places a snippet every way a page can: in
reStructuredText at the top level, in a tab set and in an included file; in
MyST with backtick, tilde and colon fences, in a tab set, a dropdown, a block
quote, a list item and an included file (false-green.md #1: the CLI used to
see only top-level MyST fences, and verify said "holds" about a chapter whose
other placements never ran).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, ROOTS
from helpers import snipcheck_cli
from snipcheck.app.index_reader import read_index
from faults_support import sphinx_build

MARKUPS = {
    # id: (docname, file, fence kind)
    "m/rst-top": ("index", "index.rst", "rst"),
    "m/rst-tab": ("index", "index.rst", "rst"),
    "m/rst-include": ("index", "parts/included.rst", "rst"),
    "m/md-backtick": ("page", "page.md", "backtick"),
    "m/md-tilde": ("page", "page.md", "tilde"),
    "m/md-colon": ("page", "page.md", "colon"),
    "m/md-tab": ("page", "page.md", "backtick"),
    "m/md-dropdown": ("page", "page.md", "backtick"),
    "m/md-quote": ("page", "page.md", "backtick"),
    "m/md-list": ("page", "page.md", "backtick"),
    "m/md-include": ("page", "parts/included.md", "backtick"),
}


def summary(placements: list, srcdir: Path) -> list[tuple[str, str, str, int, str]]:
    return [
        (p.snippet_id, p.docname, Path(p.source).resolve().relative_to(srcdir.resolve()).as_posix(), p.line, p.stated)
        for p in placements
    ]


@pytest.fixture
def markups(tmp_path: Path) -> Path:
    root = tmp_path / "markups"
    shutil.copytree(ROOTS / "test-markups", root)
    return root


@pytest.mark.parametrize("cwd", ["elsewhere", "beside"])
def test_the_index_finds_every_kind_of_placement_with_its_file_and_fence(
    markups: Path, tmp_path: Path, cwd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docutils names an included file relative to the working directory when
    # the two share a folder ("beside": a clone in /tmp, pages in /tmp/...):
    # the index must name every file absolutely, wherever the command runs.
    monkeypatch.chdir(tmp_path if cwd == "beside" else "/")
    index = read_index(markups, markups, tmp_path / "index")
    assert all(Path(p.source).is_absolute() for p in index.placements), [p.source for p in index.placements]
    found = {p.snippet_id: (p.docname, Path(p.source).relative_to(markups).as_posix(), p.kind) for p in index.placements}
    assert found == MARKUPS
    assert all(p.writable == "" for p in index.placements), [(p.snippet_id, p.writable) for p in index.placements]


def test_build_and_command_line_see_the_same_placements(markups: Path, tmp_path: Path, cache_dir: Path) -> None:
    built = sphinx_build(markups, tmp_path / "build", cache_dir, {"snipcheck_fork_min_runs": 0})

    # the build ran every placement: one record each, none an error
    report = json.loads((tmp_path / "build" / "report" / "report.json").read_text())
    assert sorted(r["snippet_id"] for r in report["snippets"]) == sorted(MARKUPS)
    assert {r["status"] for r in report["snippets"]} == {"drift"}  # nothing recorded yet: every body is empty
    # verify counts the same placements, and record fills every one of them
    out = snipcheck_cli(markups, "verify", "--json", str(tmp_path / "verify.json"), cache=cache_dir)
    assert out.returncode == 1, out.stderr
    verified = json.loads((tmp_path / "verify.json").read_text())
    assert verified["total"] == len(MARKUPS) == len(verified["snippets"])
    assert built.statuscode == 1


def test_record_fills_every_placement_and_then_the_build_holds(markups: Path, tmp_path: Path, cache_dir: Path) -> None:
    before = {p: p.read_bytes() for p in markups.rglob("*") if p.is_file()}
    out = snipcheck_cli(markups, "record", cache=cache_dir)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"{len(MARKUPS)} stated output(s) recorded; 0 unchanged or skipped"
    index = read_index(markups, markups, tmp_path / "index")
    for p in index.placements:
        name = p.snippet_id.split("/")[1]
        assert p.stated == f"{name} says hi\n  indented line", p.snippet_id
    # only the pages changed, never a snippet file
    changed = sorted(p.relative_to(markups).as_posix() for p, data in before.items() if p.read_bytes() != data)
    assert changed == ["index.rst", "page.md", "parts/included.md", "parts/included.rst"]
    built = sphinx_build(markups, tmp_path / "build", cache_dir)
    assert built.statuscode == 0 and built.warnings == [] and built.summary is None, built.warnings_text
    again = snipcheck_cli(markups, "record", cache=cache_dir)
    assert again.stdout.splitlines()[-1] == f"0 stated output(s) recorded; {len(MARKUPS)} unchanged or skipped"


@pytest.mark.parametrize("name", sorted(p.name.removeprefix("test-") for p in ROOTS.glob("test-*")))
def test_on_every_test_root_the_build_and_the_index_agree(name: str, tmp_path: Path, cache_dir: Path) -> None:
    root = tmp_path / name
    shutil.copytree(ROOTS / f"test-{name}", root)
    built = sphinx_build(root, tmp_path / "build", cache_dir, {"snipcheck_execute": False}, freshenv=True)
    index = read_index(root, root, tmp_path / "index")
    path = tmp_path / "build" / "report" / "report.json"
    # a build with no placement writes no report; one with placements always does
    report = json.loads(path.read_text()) if index.placements or path.exists() else {"snippets": []}
    assert sorted((r["snippet_id"], r["docname"], r["line"]) for r in report["snippets"]) == sorted(
        (p.snippet_id, p.docname, p.line) for p in index.placements
    ), built.warnings_text


def test_on_the_chapter_the_build_and_the_index_agree(chapter_placements: list, tmp_path: Path, cache_dir: Path) -> None:
    from io import StringIO

    from snipcheck.sphinxext.index import all_placements
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    overrides = {"snipcheck_execute": False, "snipcheck_report_dir": str(tmp_path / "report"),
                 "snipcheck_cache_dir": str(cache_dir)}  # fmt: skip
    with docutils_namespace():
        app = Sphinx(
            str(REPO / "docs"), str(REPO), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
            confoverrides=overrides, status=StringIO(), warning=StringIO(),
        )  # fmt: skip
        app.build()
        built = all_placements(app.env)
    assert summary(built, REPO / "docs") == summary(chapter_placements, REPO / "docs")
    assert len(built) > 40
