"""The build's output folders are never read as pages (sphinxext/build_folders.py)."""

from __future__ import annotations

from pathlib import Path

from snipcheck.sphinxext.build_folders import earlier_outputs, output_patterns


def test_only_folders_strictly_inside_the_sources_become_patterns_with_glob_characters_escaped(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    src.mkdir()
    out = src / "_build [x]" / "html"
    assert output_patterns(src, out, src / "_build [x]" / "doctrees") == [
        "_build [[]x]/html", "_build [[]x]/doctrees", "_build [[]x]/jupyter_execute", "_build [[]x]/.jupyter_cache",
    ]  # fmt: skip
    # outside the sources, the sources themselves, or a folder holding them: nothing
    assert output_patterns(src, tmp_path / "out", tmp_path / "doctrees") == []
    # myst-nb's copies beside an output folder at the top of the sources are in the sources too
    assert output_patterns(src, src / "html", src) == ["html", "jupyter_execute", ".jupyter_cache"]
    assert output_patterns(src, src, src / ".doctrees") == [".doctrees"]


def test_earlier_builds_are_found_by_what_only_sphinx_writes_there(tmp_path: Path) -> None:
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / ".buildinfo").write_text("# Sphinx build info version 1\n")
    (tmp_path / "_build" / "doctrees").mkdir()
    (tmp_path / "_build" / "doctrees" / "environment.pickle").write_bytes(b"")
    (tmp_path / "_build" / "doctrees" / "index.doctree").write_bytes(b"")
    (tmp_path / "guide" / "html").mkdir(parents=True)  # pages in a folder named like an output: kept
    (tmp_path / "guide" / "html" / "page.md").write_text("# Page\n")
    # Found by a tester: a folder of pages that merely holds a file of such a name was left out, unsaid
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "environment.pickle").write_bytes(b"")
    (tmp_path / "rl" / "index.rst").write_text("R\n=\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / ".buildinfo").write_text("my own notes\n")
    (tmp_path / ".venv" / "x" / "html").mkdir(parents=True)
    (tmp_path / ".venv" / "x" / "html" / ".buildinfo").write_text("# Sphinx build info version 1\n")
    (tmp_path / "a" / "b" / "c" / "d" / "html").mkdir(parents=True)  # sphinx-build -M html . a/b/c/d
    (tmp_path / "a" / "b" / "c" / "d" / "html" / ".buildinfo").write_text("# Sphinx build info version 1\n")
    found = earlier_outputs(tmp_path, frozenset({".venv"}))
    assert sorted(p.relative_to(tmp_path).as_posix() for p in found) == ["_build/doctrees", "_build/html", "a/b/c/d/html"]
    patterns = output_patterns(tmp_path, tmp_path / "elsewhere" / ".." / "_b", tmp_path / "_b" / "d", found)
    assert "_build/html" in patterns and "_build/jupyter_execute" in patterns and "guide/html" not in patterns
