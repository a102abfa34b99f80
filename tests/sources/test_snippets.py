"""Unit tests of snipcheck.sources.snippets: ids, locating, loading and discovering snippet files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from snipcheck.model import Tags
from snipcheck.sources.snippets import SnippetError, check_id, discover, load, locate

INVALID_ID = (
    "invalid snippet id {!r}: an id is a path under the snippets directory without suffix, "
    "made of letters, digits, '-', '_' and '/', e.g. 'inplace/leaf-add'"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "snippets" / "inplace").mkdir(parents=True)
    (tmp_path / "snippets" / "inplace" / "leaf-add.py").write_text(
        '# /// snipcheck\n# expect = "RuntimeError"\n# ///\n\nimport torch\nraise RuntimeError("x")\n',
        encoding="utf-8",
    )
    return tmp_path


@pytest.mark.parametrize("snippet_id", ["inplace/leaf-add", "a", "a/b/c_d", "v2/x.y", "A9/b-c"])
def test_valid_ids(snippet_id: str) -> None:
    check_id(snippet_id)


@pytest.mark.parametrize(
    "snippet_id",
    ["../../etc/passwd", "/etc/passwd", "", "a//b", "a/./b", "a/../b", "a/..", "..", "a b", "-a", "a/.x", "a\\b", "a/"],
)
def test_ids_that_could_escape_or_are_malformed_are_rejected(snippet_id: str) -> None:
    with pytest.raises(SnippetError) as info:
        check_id(snippet_id)
    assert info.value.message == INVALID_ID.format(snippet_id)


def test_id_with_suffix_is_rejected_with_the_fix() -> None:
    with pytest.raises(SnippetError) as info:
        check_id("inplace/leaf-add.py")
    assert info.value.message == "invalid snippet id 'inplace/leaf-add.py': leave out the suffix (write 'inplace/leaf-add')"


def test_traversal_id_is_rejected_before_any_file_is_touched(project: Path) -> None:
    # A file that '../../etc/passwd'-style ids would reach must never be read.
    (project / "secret.py").write_text("print('secret')\n", encoding="utf-8")
    with pytest.raises(SnippetError) as info:
        load("../secret", project / "snippets", project)
    assert info.value.message == INVALID_ID.format("../secret")


def test_symlink_out_of_the_snippets_directory_is_rejected(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("print('outside')\n", encoding="utf-8")
    os.symlink(outside, project / "snippets" / "inplace" / "link.py")
    with pytest.raises(SnippetError) as info:
        locate("inplace/link", project / "snippets")
    assert info.value.message.startswith("snippet 'inplace/link' resolves to ")
    assert "snippets must live under the snippets directory" in info.value.message


def test_missing_file_names_both_candidates_and_the_next_step(project: Path) -> None:
    with pytest.raises(SnippetError) as info:
        load("inplace/nope", project / "snippets", project)
    assert info.value.message == (
        "snippet 'inplace/nope' not found: no file snippets/inplace/nope.py or "
        "snippets/inplace/nope.rs, and no snippet-code block with this id earlier in the page; create the file "
        "(snipcheck new inplace/nope), write the code in the page, or fix the id"
    )
    assert info.value.path is None


def test_ambiguous_id_is_rejected(project: Path) -> None:
    (project / "snippets" / "inplace" / "leaf-add.rs").write_text("fn main() {}\n", encoding="utf-8")
    with pytest.raises(SnippetError) as info:
        locate("inplace/leaf-add", project / "snippets")
    assert "is ambiguous" in info.value.message


def test_load_reads_source_tags_and_paths(project: Path) -> None:
    snippet = load("inplace/leaf-add", project / "snippets", project)
    assert snippet.id == "inplace/leaf-add"
    assert snippet.path == "snippets/inplace/leaf-add.py"
    assert snippet.abspath == str((project / "snippets" / "inplace" / "leaf-add.py").resolve())
    assert snippet.language == "python"
    assert snippet.source == (project / "snippets" / "inplace" / "leaf-add.py").read_text(encoding="utf-8")
    assert snippet.tags == Tags(expect="RuntimeError")
    assert snippet.code == 'import torch\nraise RuntimeError("x")'
    assert snippet.code_lineno == 5


def test_malformed_tag_block_becomes_snippet_error_with_path_and_line(project: Path) -> None:
    (project / "snippets" / "bad.py").write_text('# /// snipcheck\n# expect = "ok"\n# colour = 1\n# ///\n', encoding="utf-8")
    with pytest.raises(SnippetError) as info:
        load("bad", project / "snippets", project)
    assert info.value.path == "snippets/bad.py"
    assert info.value.line == 3
    assert info.value.message.startswith("unknown tag 'colour'")


def test_non_utf8_file_is_reported(project: Path) -> None:
    (project / "snippets" / "latin1.py").write_bytes(b"print('\xe9')\n")
    with pytest.raises(SnippetError) as info:
        load("latin1", project / "snippets", project)
    assert info.value.path == "snippets/latin1.py"
    assert info.value.message.startswith("snippets/latin1.py is not valid UTF-8")


def test_discover_lists_snippets_sorted_and_skips_helpers(project: Path) -> None:
    snippets = project / "snippets"
    (snippets / "inplace" / "a-first.py").write_text("", encoding="utf-8")
    (snippets / "burn").mkdir()
    (snippets / "burn" / "tensor.rs").write_text("fn main() {}\n", encoding="utf-8")
    (snippets / "_helper.py").write_text("", encoding="utf-8")
    (snippets / "inplace" / "_common.py").write_text("", encoding="utf-8")
    (snippets / "_private").mkdir()
    (snippets / "_private" / "x.py").write_text("", encoding="utf-8")
    (snippets / "inplace" / ".hidden.py").write_text("", encoding="utf-8")
    (snippets / "inplace" / "notes.txt").write_text("", encoding="utf-8")
    assert discover(snippets) == ["burn/tensor", "inplace/a-first", "inplace/leaf-add"]


def test_discover_lists_each_id_once(project: Path) -> None:
    # x.py and x.rs are one (ambiguous) id; listing it twice would make every
    # caller that iterates ids run or report it twice.
    (project / "snippets" / "inplace" / "leaf-add.rs").write_text("fn main() {}\n", encoding="utf-8")
    ids = discover(project / "snippets")
    assert ids == sorted(set(ids))


def _old_folder(folder: Path) -> None:
    """Date ``folder`` an hour back, as a folder nobody touched during the build."""
    stamp = folder.stat().st_mtime - 3600
    os.utime(folder, (stamp, stamp))


def test_a_folder_of_many_snippets_is_listed_once_for_their_helpers(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Listing the folder once per snippet made reading a 10,000-snippet site
    # quadratic: each load read every entry of its folder again.
    folder = project / "snippets" / "many"
    folder.mkdir()
    (folder / "_shared.py").write_text("VALUE = 1\n")
    for i in range(40):
        (folder / f"s{i:02d}.py").write_text("print(1)\n")
    _old_folder(folder)
    listings = []
    scandir = os.scandir

    def counting(path: object = ".") -> object:
        listings.append(os.fspath(path))  # type: ignore[arg-type]
        return scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", counting)
    loaded = [load(f"many/s{i:02d}", project / "snippets", project) for i in range(40)]
    assert all(s.helpers == (("snippets/many/_shared.py", "VALUE = 1\n"),) for s in loaded)
    assert listings.count(str(folder)) == 1, listings


def test_a_helper_added_or_removed_after_a_load_is_seen_by_the_next_load(project: Path) -> None:
    folder = project / "snippets" / "kept"
    folder.mkdir()
    (folder / "a.py").write_text("import _h\n")
    _old_folder(folder)
    assert load("kept/a", project / "snippets", project).helpers == ()
    (folder / "_h.py").write_text("X = 2\n")  # the folder's time moves on
    assert load("kept/a", project / "snippets", project).helpers == (("snippets/kept/_h.py", "X = 2\n"),)
    _old_folder(folder)
    load("kept/a", project / "snippets", project)  # kept now
    (folder / "_h.py").write_text("X = 3\n")  # a helper's text is read at each load
    assert load("kept/a", project / "snippets", project).helpers == (("snippets/kept/_h.py", "X = 3\n"),)
    (folder / "_h.py").unlink()
    assert load("kept/a", project / "snippets", project).helpers == ()


def test_a_snippets_folder_is_resolved_once_a_second_and_a_link_made_since_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build loads every snippet from one folder: the folder is resolved
    once (not twice a snippet), and a second later again, so that a folder
    made a link to elsewhere since is held to where it now leads."""
    from snipcheck.sources import snippets as snippets_mod

    folder = tmp_path / "snippets"
    (folder / "a").mkdir(parents=True)
    for n in range(5):
        (folder / "a" / f"s{n}.py").write_text(f"print({n})\n", encoding="utf-8")
    now = [1000.0]
    monkeypatch.setattr(snippets_mod.time, "monotonic", lambda: now[0])
    resolved: list[Path] = []
    real_resolve = Path.resolve

    def spy(self: Path, strict: bool = False) -> Path:
        if self == folder:
            resolved.append(self)
        return real_resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", spy)
    for n in range(5):
        assert snippets_mod.load(f"a/s{n}", folder, tmp_path).source == f"print({n})\n"
    assert len(resolved) == 1
    # the folder becomes a link to another one whose snippet leads out of it
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "a").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("print('out')\n", encoding="utf-8")
    (elsewhere / "a" / "s0.py").symlink_to(tmp_path / "outside.py")
    (tmp_path / "old").mkdir()
    folder.rename(tmp_path / "old" / "snippets")
    folder.symlink_to(elsewhere)
    now[0] += 1.0
    with pytest.raises(snippets_mod.SnippetError, match="outside"):
        snippets_mod.load("a/s0", folder, tmp_path)
    assert len(resolved) == 2
