"""The kind of ``shared/cases/sources.md``: record writes the bodies it means to, and no other byte.

Walked again after the layered layout: case 1's second half (a lone carriage
return shifting the rewrite onto a line that opens no directive, once another
page was already written), and new examples of the kind that the file does
not list: outputs that hold the fence's own closing line (a backtick, tilde
or colon fence, at the top level and in an indented list item), and an
output with blank lines recorded into a directive nested in ``.. note::``.
Each runs the real ``snipcheck record`` on a small project, then ``verify``
must call every output unchanged (record and build agree), and every byte
outside the bodies is as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import placements_in, snipcheck_cli, write_project

CONF = """\
extensions = ["myst_parser", "snipcheck"]
myst_enable_extensions = ["colon_fence"]
snipcheck_source_dir = "docs"
snipcheck_runner = "subprocess"
snipcheck_preload = []
"""


def make(root: Path, pages: dict[str, str | bytes], snippets: dict[str, str]) -> Path:
    pages = {"index.md": "# Index\n", **pages}
    return write_project(root, CONF, {f"docs/{name}": text for name, text in pages.items()}, snippets)


def cli(root: Path, *args: str):
    return snipcheck_cli(root, *args, cache=root.parent / "cache")


def test_1_a_lone_carriage_return_before_a_directive_on_a_later_page_writes_both_pages(tmp_path: Path) -> None:
    # Was: "KeyError: '…md:9: no snippet directive opens on this line'" after
    # other files were already written (the scan counted a lone \r as a line end).
    first = b"# A\n\n```{snippet} f/a\n```\n"
    second = b"# B\n\none\rtwo\rthree\n\n```{snippet} f/b\n```\n\nplain\n\ntext\n\n```{snippet} f/c\n```\n"
    root = make(tmp_path / "p", {"a.md": first, "b.md": second},
                {"f/a": 'print("A")\n', "f/b": 'print("B")\n', "f/c": 'print("C")\n'})  # fmt: skip
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert (root / "docs" / "a.md").read_bytes() == first.replace(b"f/a\n```", b"f/a\nA\n```")
    assert (root / "docs" / "b.md").read_bytes() == second.replace(b"f/b\n```", b"f/b\nB\n```").replace(
        b"f/c\n```", b"f/c\nC\n```"
    )
    assert [p.stated for p in placements_in(root / "docs" / "b.md")] == ["B", "C"]


OUTPUTS = {
    "backtick fence": 'print("x\\n```\\ny")',
    "every fence": 'print("```\\n~~~\\n````\\n:::")',
}
PAGES = {
    "top level": "# T\n\n```{snippet} f/a\n```\n\nafter\n",
    "colon fence": "# T\n\n:::{snippet} f/a\n:::\n\nafter\n",
    "list item": "# T\n\n- an item\n\n  ```{snippet} f/a\n  ```\n\nafter\n",
}


@pytest.mark.parametrize("printed", OUTPUTS.values(), ids=OUTPUTS)
@pytest.mark.parametrize("page", PAGES.values(), ids=PAGES)
def test_an_output_holding_a_fence_line_is_recorded_whole_and_then_holds(tmp_path: Path, page: str, printed: str) -> None:
    # New example: a line of the output equal to the fence would close it
    # early, and the rest of the output would become prose on the page.
    root = make(tmp_path / "p", {"t.md": page}, {"f/a": printed + "\n"})
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    text = (root / "docs" / "t.md").read_text()
    expected = eval(printed[len("print(") : -1])  # the literal the snippet prints
    assert [p.stated for p in placements_in(root / "docs" / "t.md")] == [expected]
    assert text.startswith("# T\n\n") and text.endswith("\n\nafter\n")
    check = cli(root, "verify")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "1 unchanged, 0 drifted" in check.stdout


def test_an_output_with_blank_lines_in_a_directive_nested_in_a_note_holds(tmp_path: Path) -> None:
    # New example: a body indented under two directives, with blank lines the
    # docutils block must keep, and the prose after the note untouched.
    page = "T\n=\n\n.. note::\n\n   Before.\n\n   .. snippet:: f/a\n\n   Inside the note.\n\nafter\n"
    root = make(tmp_path / "p", {"t.rst": page}, {"f/a": 'print("x\\n\\n\\n  y")\n'})
    out = cli(root, "record")
    assert out.returncode == 0, out.stderr
    assert (root / "docs" / "t.rst").read_text() == page.replace(
        ".. snippet:: f/a\n\n", ".. snippet:: f/a\n\n      x\n\n\n        y\n\n"
    )
    check = cli(root, "verify")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "1 unchanged, 0 drifted" in check.stdout


#: page → the body record writes in place of its "stale" lines (the author's tab kept)
TAB_PAGES = {
    "tab": ("T\n=\n\n.. snippet:: f/a\n\n\tstale\n\tlines\n\nafter\n", "\tstale\n\tlines\n", "\tfresh\n\t  indented\n"),
    "tab in a note": (
        "T\n=\n\n.. note::\n\n\t.. snippet:: f/a\n\n\t   stale\n\nafter\n", "\t   stale\n", "\t   fresh\n\t     indented\n"
    ),
    "tab after spaces": ("T\n=\n\n.. snippet:: f/a\n\n  \tstale\n\nafter\n", "  \tstale\n", "  \tfresh\n  \t  indented\n"),
}


@pytest.mark.parametrize("page", TAB_PAGES.values(), ids=TAB_PAGES)
def test_an_rst_body_indented_with_a_tab_is_recorded_and_then_holds(tmp_path: Path, page: tuple[str, str, str]) -> None:
    # New example: docutils reads a tab as indentation up to the next multiple
    # of 8 columns, so the build read the body and reported drift, but record
    # said "not recorded: its body was not found at line 6 of its file" and
    # exited 1: the page could never be fixed by record.
    text, old_body, new_body = page
    root = make(tmp_path / "p", {"t.rst": text}, {"f/a": 'print("fresh\\n  indented")\n'})
    out = cli(root, "record")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (root / "docs" / "t.rst").read_text() == text.replace(old_body, new_body)
    assert [p.stated for p in placements_in(root / "docs" / "t.rst")] == ["fresh\n  indented"]
    check = cli(root, "verify")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "1 unchanged, 0 drifted" in check.stdout


def test_a_page_in_another_encoding_is_refused_by_name_and_never_written(tmp_path: Path) -> None:
    # New example: a project with source_encoding = "latin-1" (deprecated by
    # Sphinx 9, still read by the build): record cannot keep every other byte
    # of a page it cannot decode as UTF-8, so it says so and writes nothing.
    page = "T\n=\n\nCaf\xe9 prose.\n\n.. snippet:: f/a\n\n   stale\n".encode("latin-1")
    root = write_project(
        tmp_path / "p", CONF + 'source_encoding = "latin-1"\n', {"docs/index.rst": page}, {"f/a": 'print("fresh")\n'}
    )
    out = cli(root, "record")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert "docs/index.rst:6: f/a: not recorded: cannot read its source: " in out.stderr
    assert "index.rst is not valid UTF-8" in out.stderr
    assert "a stated output is written only into a UTF-8 page" in out.stderr and "source_encoding" in out.stderr
    assert (root / "docs" / "index.rst").read_bytes() == page


def test_a_file_included_by_two_pages_is_recorded_once(tmp_path: Path) -> None:
    # New example: two pages include one part holding a snippet; the build
    # judges the directive once per including page.  Was: "error: …_part.md:3:
    # two new outputs for one directive; nothing was recorded", exit 1, though
    # both outputs were the same, and nothing else in the project was recorded
    # either.  The build warns that f/a "is placed more than once", and so
    # -W fails: record writes the part once, and then says so and exits 1, and
    # verify refuses (it passed where the -W build failed).
    part = "Part.\n\n```{snippet} f/a\nstale\n```\n"
    pages = {"a.md": "# A\n\n```{include} _part.md\n```\n", "b.md": "# B\n\n```{include} _part.md\n```\n", "_part.md": part}
    root = write_project(
        tmp_path / "p", CONF + 'exclude_patterns = ["_part.md"]\n',
        {"docs/index.md": "# I\n\n```{toctree}\na\nb\n```\n", **{f"docs/{n}": t for n, t in pages.items()}},
        {"f/a": 'print("fresh")\n'},
    )  # fmt: skip
    out = cli(root, "record")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "docs/b.md:3: snippet 'f/a' is placed more than once" in out.stderr
    assert (root / "docs" / "_part.md").read_text() == part.replace("stale", "fresh")
    assert (root / "docs" / "a.md").read_text() == pages["a.md"]
    check = cli(root, "verify")
    assert check.returncode == 2, check.stdout + check.stderr
    assert "docs/b.md:3: snippet 'f/a' is placed more than once" in check.stderr


@pytest.mark.parametrize("option", [":start-line: 2", ":start-after: Skip me"])
def test_a_snippet_in_part_of_an_included_file_is_refused_for_what_it_is(tmp_path: Path, option: str) -> None:
    # New example: an rST include of part of a file hands docutils line
    # numbers that need not point into the file.  Was: "…_part.rst changed on disk while it
    # was read (another process wrote it meanwhile …); run the command again",
    # which no second run changes.  Nothing may be written.
    part = "Skip me\n\n.. snippet:: f/a\n\n   stale\n"
    root = write_project(
        tmp_path / "p", CONF + 'exclude_patterns = ["_part.rst"]\n',
        {"docs/index.rst": f"A\n=\n\n.. include:: _part.rst\n   {option}\n", "docs/_part.rst": part},
        {"f/a": 'print("fresh")\n'},
    )  # fmt: skip
    out = cli(root, "record")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "changed on disk" not in out.stderr, out.stderr
    assert "f/a: not recorded: it sits in a part of " in out.stderr, out.stderr
    assert "_part.rst that a page includes (:start-line:, :end-line:, :start-after: or :end-before:)" in out.stderr
    assert (root / "docs" / "_part.rst").read_text() == part
