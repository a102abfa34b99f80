"""Snippets and helper modules are read, never written (issue 10 §2; sources.md #5, #6).

A run copies the snippet, its helper modules and its declared data files to
relative paths inside a fresh run directory and runs there.  A helper that is
a symbolic link out of the snippets folder is a located error and is never
read; a snippets folder outside the project (``"../shared-snippets"``) is
shown and run as ``shared-snippets/...``; nothing is written outside the run
directory, and every source keeps its bytes and its modification time.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import directive_line, html
from snipcheck.model import Snippet, Tags
from snipcheck.run.python import prepare_run_dir
from snipcheck.sources.snippets import SnippetError, load, shown_path
from faults_support import copy_root, sphinx_build

OLD = 1_000_000_000_000_000_000  # 2001-09-09, in ns: any write would move it


def files_and_times(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and modification time (not following links)."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), os.lstat(p).st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def age(folder: Path) -> None:
    for p in folder.rglob("*"):
        if p.is_file() and not p.is_symlink():
            os.utime(p, ns=(OLD, OLD))


def output_of(page: Path, snippet_id: str) -> str:
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    return div.find(class_="snipcheck-output").find("pre").get_text()


# --- sources.md #5: a helper linked out of the project ----------------------------------------------


def test_a_helper_linked_out_of_the_snippets_folder_is_a_located_error_and_never_touched(
    tmp_path: Path, probe_cache: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "_shared.py").write_bytes(b"GREETING = 'from outside'\r\n")
    age(outside)
    before = files_and_times(outside)
    src = copy_root("basic", tmp_path / "src")
    (src / "snippets" / "basic" / "_shared.py").symlink_to(outside / "_shared.py")
    build = sphinx_build(src, tmp_path, fresh_cache(tmp_path / "cache", probe_cache))
    assert files_and_times(outside) == before  # before: rewritten with LF line ends, new mtime
    index = src / "index.md"
    for sid in ("basic/hello", "basic/other"):  # both lie beside the link
        (warning,) = build.about(sid)
        assert warning.startswith(f"{index}:{directive_line(index, sid)}: WARNING: snippet '{sid}': helper module ")
        assert (
            f"snippets/basic/_shared.py resolves to {outside / '_shared.py'}, outside the snippets directory "
            f"{(src / 'snippets').resolve()}; helper modules must live in the snippets directory" in warning
        )


def test_loading_a_snippet_beside_a_linked_out_helper_names_the_helper(tmp_path: Path) -> None:
    (tmp_path / "snippets" / "f").mkdir(parents=True)
    (tmp_path / "snippets" / "f" / "x.py").write_text("print(1)\n")
    (tmp_path / "elsewhere.py").write_text("SECRET = 1\n")
    (tmp_path / "snippets" / "f" / "_shared.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(SnippetError) as info:
        load("f/x", tmp_path / "snippets", tmp_path)
    assert info.value.path == "snippets/f/_shared.py"


# --- sources.md #6: a snippets folder outside the project -----------------------------------------

WHERE = """\
from pathlib import Path

from _helper import NAME

print(__file__, NAME)
Path(__file__).with_name("written.txt").write_text("by the snippet")
print(sorted(p.name for p in Path(__file__).parent.iterdir()))
"""


def test_a_snippets_folder_outside_the_project_is_run_from_copies(tmp_path: Path, probe_cache: Path) -> None:
    shared = tmp_path / "shared-snippets"
    (shared / "demo").mkdir(parents=True)
    (shared / "demo" / "where.py").write_text(WHERE)
    (shared / "demo" / "_helper.py").write_bytes(b'NAME = "helper"\r\n')
    age(shared)
    before = files_and_times(shared)
    src = tmp_path / "project"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_preload = []\n'
        'snipcheck_snippets_dir = "../shared-snippets"\n'
    )
    (src / "index.md").write_text(
        "# Outside\n\n```{snippet} demo/where\nshared-snippets/demo/where.py helper\n"
        "['__pycache__', '_helper.py', 'where.py', 'written.txt']\n```\n"
    )
    build = sphinx_build(src, tmp_path, fresh_cache(tmp_path / "cache", probe_cache))
    assert build.warnings == []
    assert output_of(build.outdir / "index.html", "demo/where") == (
        "shared-snippets/demo/where.py helper\n['__pycache__', '_helper.py', 'where.py', 'written.txt']\n"
    )
    # before: the snippet file was rewritten, run in place, and written.txt landed beside it
    assert files_and_times(shared) == before


def test_shown_paths_are_relative_and_never_climb(tmp_path: Path) -> None:
    root = tmp_path / "project"
    assert shown_path("a/x.py", root / "snippets", root) == "snippets/a/x.py"
    assert shown_path("a/x.py", root / ".." / "shared-snippets", root) == "shared-snippets/a/x.py"
    assert shown_path("a/x.py", tmp_path / "elsewhere" / "snips", root) == "snips/a/x.py"
    assert shown_path("a/x.py", root, root) == "a/x.py"


# --- the run directory ----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["../escaped.py", "{outside}/escaped.py", "snippets/../../escaped.py"])
def test_nothing_is_ever_written_outside_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    runs = tmp_path / "runs"  # run directories go here, away from other processes' ones
    runs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(runs))
    path = bad.format(outside=tmp_path)
    snippet = Snippet("x", path, "/nowhere/x.py", "python", "print(1)\n", "print(1)", 1, Tags())
    for candidate in (snippet, dataclasses.replace(snippet, path="snippets/x.py", helpers=((path, "X = 1\n"),))):
        with pytest.raises(ValueError, match="outside the run directory"):
            prepare_run_dir(candidate)
        assert not (tmp_path / "escaped.py").exists()
        assert list(runs.iterdir()) == []  # nothing beside the run directory, which is removed
