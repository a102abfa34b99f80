"""A cell's separator is never taken from inside its code (issue 33 §3).

A ``--- output ---`` line inside a string, docstring or (Rust) comment of a
cell's code is code: the build runs the whole code, ``record`` and
``accept`` write after the real separator, and a cell whose code is meant to
end inside a string names its separator with the ``separator`` option.
Whatever a bug upstream would make of a page, the shared write path refuses
a rewrite that would change a line of a cell's code.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers import placements_in, snipcheck_cli, write_project
from snipcheck.app.project import Project
from snipcheck.sources.cellsplit import CellSplit, split
from snipcheck.sources.placement import OUTPUT_SEPARATOR as SEP
from snipcheck.sources.rewrite import Edit, Unwritable
from faults_support import sphinx_build

# --- where the code ends --------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "language", "found"),
    [
        (["x = '''", SEP, "'''", "print(x)", SEP, "out"], "python", CellSplit(4, 1)),
        (['"""Doc.', "  " + SEP, '"""', SEP], "python", CellSplit(3, 1)),
        (["f = f'''{1}", SEP, "'''", SEP, SEP], "python", CellSplit(3, 1)),
        (["x = 1  # " + SEP, SEP], "python", CellSplit(1)),
        (["x = (", SEP, ")"], "python", CellSplit(1)),  # not a string: broken code, cut where written
        (["x = '''", SEP, "'''"], "python", CellSplit(None, 1)),  # the separator text is code; no output
        (["x = '''", SEP, "1"], "python", CellSplit(None, 1, 0)),  # never closed: no separator, and why
        (['let s = "', SEP, '";', SEP], "rust", CellSplit(3, 1)),
        (["/* a /* nested", "*/", SEP, "*/", SEP], "rust", CellSplit(4, 2)),
        (['let r = r#"', SEP, '"#;', SEP], "rust", CellSplit(3, 1)),
        (["let c = '\"';", SEP], "rust", CellSplit(1)),  # a character literal opens no string
        (["fn f<'a>(x: &'a str) -> &'a str { x }", SEP], "rust", CellSplit(1)),
        (["// " + SEP, 'let s = "\\"";', SEP], "rust", CellSplit(2)),
    ],
)
def test_a_separator_inside_a_string_or_comment_is_code(content: list[str], language: str, found: CellSplit) -> None:
    assert split(content, language) == found


def test_a_named_separator_is_taken_as_written() -> None:
    assert split(["x = '''", SEP, "1"], "python", SEP) == CellSplit(1)
    assert split(["x = '''", "=== out ===", SEP], "python", "=== out ===") == CellSplit(1)


# --- pages --------------------------------------------------------------------------------

CONF = 'extensions = ["myst_parser", "snipcheck"]\nexclude_patterns = ["_build"]\nsnipcheck_preload = []\n'

#: A cell's code whose string holds the separator line: (code lines, what it prints).
CODE = ["text = '''", SEP, "'''", "print(len(text.splitlines()), text.strip().upper())"]
PRINTS = "2 --- OUTPUT ---"
SYNTAX = ["# /// snipcheck", '# expect = "SyntaxError"', "# ///"]


def myst(code: list[str], stated: str) -> str:
    body = "\n".join([*code, SEP, *([stated] if stated else [])])
    return f"# Cells\n\n```{{snippet-code}} s/text\n{body}\n```\n\nAfter.\n"


def rst(code: list[str], stated: str) -> str:
    body = "\n".join("   " + line for line in [*code, SEP, *([stated] if stated else [])])
    return f"Cells\n=====\n\n.. snippet-code:: s/text\n\n{body}\n\nAfter.\n"


PAGES = {"index.md": myst, "index.rst": rst}


def code_part(text: str) -> str:
    """The page up to and including the real separator (the last separator line before the output)."""
    lines = text.split("\n")
    last = max(i for i, line in enumerate(lines) if line.strip() == SEP and i > 6)
    return "\n".join(lines[: last + 1])


@pytest.mark.parametrize("page", list(PAGES))
def test_the_build_runs_the_whole_code_of_a_cell_whose_string_holds_the_separator(
    page: str, tmp_path: Path, cache_dir: Path
) -> None:
    root = write_project(tmp_path / "p", CONF, {page: PAGES[page](CODE, PRINTS)})
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    (placed,) = placements_in(root / page)
    assert placed.code_lines == len(CODE) + 1 and placed.stated == PRINTS


@pytest.mark.parametrize("page", list(PAGES))
def test_a_cell_that_expects_a_syntax_error_is_not_cut_inside_its_string(page: str, tmp_path: Path, cache_dir: Path) -> None:
    """Cut at the first separator, the code raised the SyntaxError its tags
    expect, the -W build was green and record wrote its traceback over the
    author's last code lines.  The whole code runs: it raises nothing."""
    text = PAGES[page]([*SYNTAX, *CODE], "")
    root = write_project(tmp_path / "p", CONF, {page: text})
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    assert built.statuscode == 1
    (warning,) = built.about("s/text")
    assert "expected the snippet to end with SyntaxError, but it exited normally" in warning, warning
    for command in (["record"], ["accept", "--force"]):
        done = snipcheck_cli(root, *command, cache=cache_dir)
        assert (root / page).read_text() == text, (command, done.stdout + done.stderr)
    done = snipcheck_cli(root, "record", cache=cache_dir)
    assert done.returncode == 1 and "not recorded" in done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("page", list(PAGES))
def test_record_and_accept_write_after_the_real_separator_only(page: str, tmp_path: Path, cache_dir: Path) -> None:
    text = PAGES[page](CODE, "")
    root = write_project(tmp_path / "p", CONF, {page: text})
    done = snipcheck_cli(root, "record", cache=cache_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = (root / page).read_text()
    assert recorded == PAGES[page](CODE, PRINTS)
    assert code_part(recorded) == code_part(text)
    stale = PAGES[page](CODE, "stale")
    (root / page).write_text(stale)
    done = snipcheck_cli(root, "accept", "--force", cache=cache_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / page).read_text() == recorded
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


@pytest.mark.parametrize("page", list(PAGES))
def test_a_string_left_open_over_the_separator_says_what_to_do_and_the_option_resolves_it(
    page: str, tmp_path: Path, cache_dir: Path
) -> None:
    code = [*SYNTAX, "text = '''"]
    text = PAGES[page](code, "")
    root = write_project(tmp_path / "p", CONF, {page: text})
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    (warning,) = built.about("s/text")
    first = text.split("\n").index("text = '''" if page == "index.md" else "   text = '''") + 1
    assert f"index.{page.split('.')[1]}:" in warning
    assert f"lies inside a string or comment that the code opens at line {first} and never closes" in warning
    assert f"(:separator: {SEP})" in warning
    # the option the warning offers: the separator as written
    named = text.replace("{snippet-code} s/text\n", "{snippet-code} s/text\n:separator: --- output ---\n").replace(
        ".. snippet-code:: s/text\n", ".. snippet-code:: s/text\n   :separator: --- output ---\n"
    )
    (root / page).write_text(named)
    done = snipcheck_cli(root, "record", cache=cache_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = (root / page).read_text()
    assert code_part(recorded) == code_part(named) and "SyntaxError: unterminated triple-quoted string literal" in recorded
    built = sphinx_build(root, tmp_path / "build2", cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


# --- the shared write path's guard --------------------------------------------------------


#: A placement one line off (a bug upstream), by page: MyST's option block
#: would go over the cell's first code line, reStructuredText's option line
#: into its code.
OFF = {"index.md": {"code_lines": -1}, "index.rst": {"line": 1}}


@pytest.mark.parametrize("page", list(PAGES))
def test_a_rewrite_that_would_change_a_code_line_is_refused(page: str, tmp_path: Path) -> None:
    text = PAGES[page](["x = 1", "print(x)"], "1")
    root = write_project(tmp_path / "p", CONF, {page: text})
    project, _ = Project.load(root)
    (placed,) = [p for p in project.placements() if p.snippet_id == "s/text"]
    off = dataclasses.replace(placed, **{name: getattr(placed, name) + by for name, by in OFF[page].items()})
    with pytest.raises(Unwritable, match="the rewrite would change the cell's code at line") as refused:
        project.rewrite([Edit(off, "1", {"stated-env": "torch 9 · CPU"})])
    assert "x = 1" in str(refused.value) and "nothing was written" in str(refused.value)
    assert project.rewrite([Edit(placed, "2", {"stated-env": "torch 9 · CPU"})])  # the placement as read: fine
    assert (root / page).read_text() == text
