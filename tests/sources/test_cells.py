"""Cells (issue 24): a ``snippet-code`` directive that states its output after
the line ``--- output ---``, one directive a cell, in MyST and
reStructuredText: shown as the code/output pair is, checked, recorded and
accepted after the separator, and the code never touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import html, placements_in, snipcheck_cli, write_project
from snipcheck.sources.rewrite import Edit, apply
from snipcheck.sources.sourcetext import SourceText
from faults_support import sphinx_build

CONF = 'extensions = ["myst_parser", "snipcheck"]\nexclude_patterns = ["_build"]\n'

MYST = """\
# Cells

```{toctree}
other
```

```{snippet-chain} nb
```

```{snippet-code} nb/one
x = 2
print("x =", x)
--- output ---
x = 2
```

Prose between the cells.

```{snippet-code} nb/two
print("twice:", x * 2)
--- output ---
```
"""

RST = """\
Other
=====

.. snippet-code:: rs/one

   print("  indented")
   print()
   print("end")
   --- output ---

Done.
"""


@pytest.fixture
def cells(tmp_path: Path) -> Path:
    return write_project(tmp_path / "cells", CONF, {"index.md": MYST, "other.rst": RST})


def _code_part(text: str, snippet_id: str) -> str:
    """The lines of a page from a cell's opening line through its separator."""
    start = next(i for i, line in enumerate(text.splitlines()) if line.rstrip().endswith(snippet_id))
    lines = text.splitlines()[start:]
    return "\n".join(lines[: next(i for i, line in enumerate(lines) if line.strip() == "--- output ---") + 1])


def test_a_cell_is_shown_as_code_then_its_output_and_checked(cells: Path, tmp_path: Path, cache_dir: Path) -> None:
    built = sphinx_build(cells, tmp_path / "build", cache_dir)
    assert built.statuscode == 1
    assert [w for w in built.warnings if "nb/one" in w] == []  # its stated output holds
    (two,) = built.about("nb/two")
    assert "index.md:19" in two and "+twice: 4" in two  # x came from the cell before: one chain
    (one,) = built.about("rs/one")
    assert "other.rst:4" in one and "+  indented" in one
    page = html(built.outdir / "index.html")
    code = page.find(id="snippet-code-nb-one")
    assert "print(\"x =\", x)" in code.get_text() and "--- output ---" not in code.get_text()
    assert [n.get_text() for n in code.select(".linenos")] == ["1", "2"]  # the stated output is not code
    output = page.find(id="snippet-nb-one")
    assert output.find_previous(id="snippet-code-nb-one") is code  # the output panel follows its code
    assert output.select_one("div.snipcheck-output").get_text().strip().endswith("x = 2")
    (p1, p2) = placements_in(cells / "index.md")
    assert (p1.stated, p1.code_lines, p2.stated, p2.code_lines) == ("x = 2", 3, "", 2)


def test_record_writes_after_the_separator_and_never_the_code(cells: Path, tmp_path: Path, cache_dir: Path) -> None:
    before = {name: (cells / name).read_text() for name in ("index.md", "other.rst")}
    done = snipcheck_cli(cells, "record", cache=cache_dir)
    assert done.returncode == 0, done.stderr
    assert "index.md:19: nb/two: recorded" in done.stdout and "other.rst:4: rs/one: recorded" in done.stdout
    md, rst = (cells / "index.md").read_text(), (cells / "other.rst").read_text()
    assert md == before["index.md"].replace("--- output ---\n```\n", "--- output ---\ntwice: 4\n```\n")
    # reStructuredText: indentation and the blank line inside the output kept, after the code's indentation
    assert rst == before["other.rst"].replace("   --- output ---\n", "   --- output ---\n     indented\n\n   end\n")
    for sid in ("nb/one", "nb/two"):
        assert _code_part(md, sid) == _code_part(before["index.md"], sid)
    built = sphinx_build(cells, tmp_path / "build", cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


def test_an_option_set_on_a_cell_goes_before_its_code(cells: Path) -> None:
    """record --from-shard (and accept) set ``stated-env``: the option block is
    the cell's head, above the code; the code lines stay as written."""
    page = cells / "index.md"
    (_, two) = placements_in(page)
    text = SourceText.read(page, "myst")
    apply(text, [Edit(two, "twice: 4\n```python\nnot a fence closing", {"stated-env": "torch 9 · CUDA"})])
    page.write_bytes(text.to_bytes())
    (_, again) = placements_in(page)
    assert again.stated == "twice: 4\n```python\nnot a fence closing"  # another fence around a fence-like line
    assert again.option("stated-env") == "torch 9 · CUDA"
    written = page.read_text()
    assert 'print("twice:", x * 2)\n--- output ---\n' in written
    assert '~~~{snippet-code} nb/two\n:stated-env: torch 9 · CUDA\n\nprint("twice:", x * 2)\n' in written
    assert written.endswith("not a fence closing\n~~~\n") and written.count("print(") == 2


def test_a_cell_output_the_markup_cannot_hold_as_it_is_is_written_escaped(cells: Path) -> None:
    """Issue 36 §5: a cell's output ending with a blank line, which an rST
    body cannot hold as it is, is written in the escaped form and reads back."""
    page = cells / "other.rst"
    (one,) = placements_in(page)
    text = SourceText.read(page, "rst")
    apply(text, [Edit(one, "end\n")])
    page.write_bytes(text.to_bytes())
    (again,) = placements_in(page)
    assert again.stated == "end\n" and again.option("escapes") == ""


def test_a_cell_with_a_broken_tag_block_warns_once(tmp_path: Path, cache_dir: Path) -> None:
    page = '# P\n\n```{snippet-code} p/bad\nprint(1)\n# /// snipcheck\n# timeout = "soon"\n# ///\n--- output ---\n1\n```\n'
    root = write_project(tmp_path / "bad", CONF, {"index.md": page})
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    mine = [w for w in built.warnings if "p/bad" in w]
    assert len(mine) == 1 and "timeout" in mine[0], built.warnings_text
    assert "no snippet directive" not in built.warnings_text


def test_an_output_option_on_code_without_a_separator_says_what_to_do(tmp_path: Path, cache_dir: Path) -> None:
    page = "# P\n\n```{snippet-code} p/code\n:stated-env: torch 9\nprint(1)\n```\n\n```{snippet} p/code\n1\n```\n"
    root = write_project(tmp_path / "opt", CONF, {"index.md": page})
    built = sphinx_build(root, tmp_path / "build", cache_dir)
    (warning,) = built.warnings
    assert "index.md:3" in warning and "option 'stated-env' belongs to its output" in warning
    assert "add a line '--- output ---' after the code" in warning


@pytest.mark.parametrize("page", ["index.md", "other.rst"])
def test_new_cell_prints_a_cell_that_records_and_builds(cells: Path, tmp_path: Path, cache_dir: Path, page: str) -> None:
    """``snipcheck new ID --cell``: nothing written, a cell in the project's
    markup printed; pasted into a page, it records and builds clean."""
    if page == "other.rst":
        (cells / "index.md").rename(cells / "first.md")
        (cells / "index.rst").write_text("Index\n=====\n\n.. toctree::\n\n   other\n   first\n")
    made = snipcheck_cli(cells, "new", "scaffold/cell", "--cell", "--expect", "ZeroDivisionError", cache=cache_dir)
    assert made.returncode == 0, made.stderr
    assert not (cells / "snippets").exists()
    pasted = made.stdout.split(":\n\n", 1)[1].split("\n\nthen fill in", 1)[0]
    assert pasted.splitlines()[0] == ("```{snippet-code} scaffold/cell" if page == "index.md" else ".. snippet-code:: scaffold/cell")
    assert "record it" not in made.stdout and "snipcheck record scaffold/cell" in made.stdout
    target = cells / page
    indent = "" if page == "index.md" else "   "
    target.write_text(target.read_text() + "\n" + pasted.replace(f'{indent}print("sum:"', f'{indent}1 / 0\n{indent}print("sum:"') + "\n")
    done = snipcheck_cli(cells, "record", cache=cache_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ZeroDivisionError: division by zero" in target.read_text().split("--- output ---")[-1]
    built = sphinx_build(cells, tmp_path / "build", cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
