"""Tutorial scripts placed whole (``snippet-script``, issue 24 §2).

A sphinx-gallery or jupytext percent script is split into prose and code
cells (:mod:`snipcheck.sources.scripts`); one directive renders the prose and runs
the code cells as a chain, each stated, compared and recorded in the page.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOTS
from helpers import html, placements_in, snipcheck_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from snipcheck.sources.scripts import Cell, ScriptError, parse
from faults_support import sphinx_build

TENSORS = [f"tutorials/tensors/{n}" for n in range(1, 10)]
PERCENT = ["tutorials/percent/setup", "tutorials/percent/reshape", "tutorials/percent/fails"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "scripts"
    shutil.copytree(ROOTS / "test-script", root)
    return root


# --- the parser ----------------------------------------------------------------------


def test_percent_cells_read_as_jupytext_reads_them() -> None:
    """A jupytext script: ``[markdown]`` cells are Markdown prose, comment
    lines in a code cell are code (as in the notebook jupytext makes)."""
    script = (
        "# %% [markdown]\n# ## Title\n#\n# Words.\n\n"
        "# %% id=\"make\"\n# A comment of the code.\n\nimport os\nx = 1\n\n"
        "# %%\n# /// snipcheck\n# seed = 3\n# ///\nprint(x)\n"
        "# %% [md]\n# Last words.\n"
    )
    assert parse(script) == [
        Cell("prose", "## Title\n\nWords.", 2, markup="md"),
        Cell("code", "# A comment of the code.\n\nimport os\nx = 1", 7, "make"),
        Cell("code", "# /// snipcheck\n# seed = 3\n# ///\nprint(x)", 13, "2"),
        Cell("prose", "Last words.", 18, markup="md"),
    ]


def test_gallery_docstring_and_hash_blocks() -> None:
    script = (
        '# a leading comment\n"""\n    Title\n    =====\n\n    Intro.\n"""\nimport torch\n\n'
        + "#" * 79 + "\n# Section\n# -------\nx = torch.ones(1)\n"
        + "# %% id=\"last\"\n# Prose after a percent marker.\n\nprint(x)\n"
    )  # fmt: skip
    assert parse(script) == [
        Cell("prose", "Title\n=====\n\nIntro.", 2, markup="rst"),
        Cell("code", "import torch", 8, "1"),
        Cell("prose", "Section\n-------", 11, markup="rst"),
        Cell("code", "x = torch.ones(1)", 13, "2"),
        Cell("prose", "Prose after a percent marker.", 15, markup="rst"),
        Cell("code", "print(x)", 17, "last"),
    ]


def test_a_script_with_a_syntax_error_still_has_its_docstring_as_prose() -> None:
    cells = parse('"""Intro."""\n# %%\nprint(1\n')
    assert cells == [Cell("prose", "Intro.", 1, markup="rst"), Cell("code", "print(1", 3, "1")]


def test_a_string_expression_first_is_code_not_a_docstring() -> None:
    assert parse('"a" + "b"\n') == [Cell("code", '"a" + "b"', 1, "1")]


@pytest.mark.parametrize(
    ("script", "message", "line"),
    [
        ("# %% id=a\nx=1\n# %% id=a\ny=2\n", "two code cells are named 'a' (lines 1 and 3)", 3),
        ("# %% [python]\n# x\n", "cell kind [python] is not known", 1),
        ("# %% id='bad name!'\nx=1\n", "cell id 'bad name!' is not a name", 1),
        ("x=1\n# %% id=empty\n\n", "cell 'empty' holds no code", 2),
        ("# %% id=2\nx=1\n# %%\ny=2\n", "two code cells are named '2'", 3),
    ],
)
def test_bad_scripts_name_the_line_and_what_to_do(script: str, message: str, line: int) -> None:
    with pytest.raises(ScriptError) as caught:
        parse(script)
    assert message in caught.value.message
    assert caught.value.line == line


_WORD = st.text(alphabet="abcdefghij XYZ.,", min_size=1, max_size=12).map(str.strip).filter(bool)
_CODE = st.lists(
    st.builds(lambda name, n: f"{name} = {n}", st.sampled_from(["a", "b", "value"]), st.integers(0, 99)),
    min_size=1, max_size=4,
)  # fmt: skip
_CELL = st.one_of(
    st.tuples(st.just("prose"), st.lists(_WORD, min_size=1, max_size=3)),
    st.tuples(st.just("code"), _CODE),
    st.tuples(st.just("both"), st.tuples(st.lists(_WORD, min_size=1, max_size=3), _CODE)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_CELL, min_size=1, max_size=8), st.booleans())
def test_a_written_script_reads_back_as_the_cells_it_was_written_from(cells: list, gallery: bool) -> None:
    """Property: cells written in either format (one marker each) parse back
    to the same prose and code, in order, with their lines: sphinx-gallery's
    text blocks as reStructuredText, jupytext's as Markdown cells."""
    lines: list[str] = []
    expected: list[Cell] = []
    ordinal = 0
    markup = "rst" if gallery else "md"
    if not gallery:
        lines.append("# %% [markdown]")  # says it is jupytext's, whatever the cells drawn
        lines.append("# Notes.")
        expected.append(Cell("prose", "Notes.", 2, markup="md"))
    for kind, body in cells:
        prose, code = (body if kind == "both" else (body, []) if kind == "prose" else ([], body))
        if prose:
            lines.append("#" * 30 if gallery else "# %% [markdown]")
            expected.append(Cell("prose", "\n".join(prose), len(lines) + 1, markup=markup))
            lines += [f"# {w}" for w in prose]
            lines.append("")
        if code:
            lines.append("#" * 30 if gallery else "# %%")
            ordinal += 1
            expected.append(Cell("code", "\n".join(code), len(lines) + 1, str(ordinal)))
            lines += code
            lines.append("")
    assert parse("\n".join(lines) + "\n") == expected


# --- the directive ---------------------------------------------------------------------


def heading(page, tag: str, text: str):
    """The ``tag`` heading whose text (its permalink aside) is ``text``."""
    (found,) = [h for h in page.find_all(tag) if h.get_text().rstrip("¶").strip() == text]
    return found


def test_a_gallery_script_and_a_percent_script_verify_cell_by_cell(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text
    report = json.loads((built.report_dir / "report.json").read_text())
    statuses = {r["snippet_id"]: r["status"] for r in report["snippets"]}
    assert statuses == dict.fromkeys(TENSORS + PERCENT, "ok")
    page = html(built.outdir / "index.html")
    # prose in the page's markup, headings nested under the docstring's title
    section = heading(page, "h2", "Tensors, step by step").find_parent("section")
    assert [h.get_text().strip("¶") for h in section.find_all("h3")] == [
        "Making tensors", "Filled by shape", "Attributes", "Indexing and joining", "Arithmetic", "In place",
        "Views share storage", "Sharing memory with NumPy",
    ]  # fmt: skip
    # each cell's code, then its output, inside the section its prose opened
    in_place = heading(page, "h3", "In place").find_parent("section")
    code = in_place.find(id="snippet-code-tutorials-tensors-7")
    output = in_place.find(id="snippet-tutorials-tensors-7")
    assert "data.add_(1)" in code.get_text()
    assert "[[2, 3], [4, 5]] version 0 -> 1" in output.get_text()
    # one environment stamp, on the chain's first cell; every stamp names the script's line
    stamps = [s.get_text() for s in page.select(".snipcheck-stamp")]
    assert len(stamps) == 9
    assert "torch" in stamps[0] and all("torch" not in s for s in stamps[1:])
    lines = (project / "snippets" / "tutorials" / "tensors.py").read_text().split("\n")
    assert stamps[0].endswith(f"tutorials/tensors.py:{lines.index('# /// snipcheck') + 1}")
    assert stamps[6].endswith(f"tutorials/tensors.py:{lines.index('before = data._version') + 1}")
    percent = html(built.outdir / "page.html")
    # a jupytext script: the comment lines of a code cell are code, as in the notebook jupytext makes
    assert "# Comment lines right after the marker are code" in percent.find(id="snippet-code-tutorials-percent-reshape").get_text()
    # in MyST too, the cells sit in the section their script's heading opened, in order
    section = heading(percent, "h2", "A percent-format script").find_parent("section")
    before = [p.get_text() for p in section.find_previous_siblings("p")]
    assert before == ["Prose before the first heading stays before it.", "Before the script."]
    order = [n["id"] for n in section.select("[id^=snippet-]")]
    assert order == [f"snippet{kind}-{i.replace('/', '-')}" for i in PERCENT for kind in ("-code", "")]
    assert "RuntimeError: shape '[4]' is invalid" in section.find(id="snippet-tutorials-percent-fails").get_text()


def test_an_edited_cell_drifts_and_a_rebuild_reads_the_script_again(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    first = sphinx_build(project, tmp_path, cache_dir)
    assert first.statuscode == 0, first.warnings_text
    script = project / "snippets" / "tutorials" / "tensors.py"
    script.write_text(script.read_text().replace("print(data * 10)", "print(data * 100)"))
    again = sphinx_build(project, tmp_path, cache_dir)
    assert again.statuscode == 1
    (drift,) = again.about("tutorials/tensors/6")
    assert "index.rst:" in drift and "[snipcheck.drift]" in drift
    assert "+tensor([[100, 200]," in drift
    assert again.about("tutorials/tensors/7") == []  # the cells after it still hold
    assert again.before == again.after  # the build wrote nothing into the project


def test_state_flows_from_cell_to_cell_and_no_further(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    """The percent script's cells see ``x`` from its first cell; the page's
    other snippets do not (a chain is one script)."""
    page = project / "page.md"
    page.write_text(page.read_text() + "\n```{snippet-code} after/x\nprint('x' in globals())\n```\n\n```{snippet} after/x\nFalse\n```\n")
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 0 and built.warnings == [], built.warnings_text


@pytest.mark.parametrize("markup", ["rst", "myst"])
def test_a_body_without_its_cells_runs_nothing_and_says_what_to_write(
    project: Path, tmp_path: Path, cache_dir: Path, markup: str
) -> None:
    if markup == "rst":
        (project / "index.rst").write_text("Scripts\n=======\n\n.. toctree::\n\n   page\n\n.. snippet-script:: tutorials/tensors\n")
        where = "index.rst:8"
        paste = ".. snippet-script:: tutorials/tensors\n\n   .. snippet:: tutorials/tensors/1\n\n   .. snippet:: tutorials/tensors/2\n"
        script, ids = "tutorials/tensors", TENSORS
    else:
        (project / "page.md").write_text("# P\n\n```{snippet-script} tutorials/percent\n```\n")
        where = "page.md:3"
        paste = (
            "````{snippet-script} tutorials/percent\n```{snippet} tutorials/percent/setup\n```\n"
            "```{snippet} tutorials/percent/reshape\n```\n```{snippet} tutorials/percent/fails\n```\n````\n"
        )
        script, ids = "tutorials/percent", PERCENT
    built = sphinx_build(project, tmp_path, cache_dir)
    assert built.statuscode == 1
    (warning,) = [w for w in built.warnings if script in w]
    assert where in warning and "write it as:" in warning and paste in warning
    assert "snipcheck record" in warning
    report = json.loads((built.report_dir / "report.json").read_text())
    assert not {r["snippet_id"] for r in report["snippets"]} & set(ids)  # nothing of the script ran
    assert {r["snippet_id"]: r["status"] for r in report["snippets"]}[script] == "error"  # and the build fails
    # the command line does not take "no cells" for "nothing to check" either
    verified = snipcheck_cli(project, "verify", cache=cache_dir)
    assert verified.returncode == 2  # as for a page it cannot read: input to fix, not a drift
    assert f"error: {where}: snippet-script {script!r}: its body must place" in verified.stderr
    assert "verify reads every page, so it did nothing" in verified.stderr
    # what the warning says to write, written, then recorded: a green build
    written = warning.split("write it as:\n", 1)[1].split("\nthen run", 1)[0]
    page = project / ("index.rst" if markup == "rst" else "page.md")
    head = page.read_text().split(".. snippet-script::" if markup == "rst" else "```{snippet-script}")[0]
    page.write_text(head + written + "\n")
    assert snipcheck_cli(project, "record", cache=cache_dir).returncode == 0
    again = sphinx_build(project, tmp_path / "again", cache_dir)
    assert again.statuscode == 0 and again.warnings == [], again.warnings_text


def test_a_missing_an_extra_and_a_misordered_cell_are_each_named(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    index = project / "index.rst"
    text = index.read_text()
    dropped = text.replace("   .. snippet:: tutorials/tensors/4\n\n      shape (2, 2), dtype torch.int64, device cpu\n\n", "")
    index.write_text(dropped.replace("tutorials/tensors/9", "tutorials/tensors/10"))
    built = sphinx_build(project, tmp_path, cache_dir)
    (warning,) = [w for w in built.warnings if "snippet-script" in w]
    assert "add '.. snippet:: tutorials/tensors/4' (after 'tutorials/tensors/3')" in warning
    assert "add '.. snippet:: tutorials/tensors/9' (after 'tutorials/tensors/8')" in warning
    assert "remove 'tutorials/tensors/10' (snippets/tutorials/tensors.py has no such cell)" in warning
    two, three = "   .. snippet:: tutorials/tensors/2\n", "   .. snippet:: tutorials/tensors/3\n"
    index.write_text(text.replace(two, "   .. snippet:: tutorials/tensors/X\n").replace(three, two).replace(
        "tutorials/tensors/X", "tutorials/tensors/3"))  # fmt: skip
    built = sphinx_build(project, tmp_path, cache_dir)
    (warning,) = [w for w in built.warnings if "snippet-script" in w]
    assert "put the directives in the script's order: tutorials/tensors/1, tutorials/tensors/2" in warning


def test_a_missing_script_and_a_bad_script_are_located(project: Path, tmp_path: Path, cache_dir: Path) -> None:
    (project / "snippets" / "tutorials" / "percent.py").write_text("# %% id=a\nx=1\n# %% id=a\ny=2\n")
    index = project / "index.rst"
    index.write_text(index.read_text().replace(".. snippet-script:: tutorials/tensors", ".. snippet-script:: tutorials/nope"))
    built = sphinx_build(project, tmp_path, cache_dir)
    messages = [w for w in built.warnings if "snippet-script" in w]
    assert any("index.rst:8" in w and "no script snippets/tutorials/nope.py; create it, or fix the id" in w for w in messages)
    assert any(
        "page.md:5" in w and "(snippets/tutorials/percent.py:3): two code cells are named 'a'" in w for w in messages
    ), messages


def test_record_fills_the_cells_and_verify_agrees(project: Path, cache_dir: Path) -> None:
    for page in ("index.rst", "page.md"):
        text = (project / page).read_text()
        emptied = [p for p in placements_in(project / page)]
        for p in emptied:
            if p.stated:
                body = "\n".join(("      " if page == "index.rst" else "") + line for line in p.stated.split("\n")) + "\n"
                text = text.replace(body, "", 1)
        (project / page).write_text(text)
    assert all(not p.stated for p in placements_in(project / "index.rst"))
    done = snipcheck_cli(project, "record", cache=cache_dir)
    assert done.returncode == 0, done.stderr
    assert (project / "index.rst").read_text() == (ROOTS / "test-script" / "index.rst").read_text()
    assert (project / "page.md").read_text() == (ROOTS / "test-script" / "page.md").read_text()
    verified = snipcheck_cli(project, "verify", cache=cache_dir)
    assert verified.returncode == 0, verified.stdout + verified.stderr


# --- sphinx-gallery's configuration comments, jupytext's header and cells (issue 36 §2, §4) ------------


def test_gallery_configuration_comments_set_what_a_block_shows() -> None:
    from snipcheck.sources.gallery_comments import hide_in_code
    from snipcheck.sources.scripts import read

    script = read(
        '"""Doc."""\n# sphinx_gallery_capture_repr = ()\nx = 1\nx\n'
        "# %%\n# Text.\n\n# sphinx_gallery_capture_repr_block = ('__repr__',)\nx\n"
        "# %%\n\n# sphinx_gallery_defer_figures\nx\n"
        "# %%\n# sphinx_gallery_colour = 'red'\nx\n"
    )
    displays = [c.display for c in script.code]
    assert displays == [("figures",), ("repr", "figures"), (), ("figures",)]
    assert script.notes == ((15, "'# sphinx_gallery_colour' is not a sphinx-gallery setting snipcheck knows: it is "
                                 "hidden and has no effect here; remove it, or fix its name"),)  # fmt: skip
    shown, flags = hide_in_code("a = 1\n# sphinx_gallery_start_ignore\nb = 2\n# sphinx_gallery_end_ignore\nc = 3")
    assert shown == "a = 1\nc = 3" and set(flags) == {"start_ignore", "end_ignore"}


def test_a_jupytext_header_is_metadata_and_a_kernel_of_another_language_is_refused() -> None:
    from snipcheck.sources.scripts import read

    header = "# ---\n# jupyter:\n#   kernelspec:\n#     language: {lang}\n#     name: k\n# ---\n\n"
    script = read(header.format(lang="python") + "# %%\nx = 1\n")
    assert script.flavor == "percent" and script.header is not None and script.header.language == "python"
    assert [(c.kind, c.text, c.line) for c in script.cells] == [("code", "x = 1", 9)]
    with pytest.raises(ScriptError) as caught:
        read(header.format(lang="R") + "# %%\nx <- 1\n")
    assert caught.value.line == 1 and "'R' kernel" in caught.value.message


def test_raw_cells_are_never_an_error_and_their_mimetype_says_how_they_show() -> None:
    from snipcheck.sources.scripts import read

    script = read(
        '# %% [raw]\n# plain raw\n\n# %% [raw] raw_mimetype="text/restructuredtext"\n# **rst**\n\n'
        '# %% [markdown] tags=["a", "b"]\n# Words.\n\n# %% tags=["raises-exception"] id="boom"\n1/0\n'
    )
    assert [(c.kind, c.markup, c.tags) for c in script.cells] == [
        ("raw", "", ()), ("raw", "rst", ()), ("prose", "md", ("a", "b")), ("code", "", ("raises-exception",)),
    ]  # fmt: skip
    assert script.code[0].name == "boom"


def test_a_light_script_is_read_by_jupytext_with_its_lines() -> None:
    from snipcheck.sources.scripts import read

    script = read(
        "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: light\n# ---\n\n"
        "# Some prose.\n\nx = 1\nx\n\n# +\ny = 2\n\nprint(y)\n# -\n"
    )
    assert script.flavor == "light"
    assert [(c.kind, c.text, c.line, c.display) for c in script.cells] == [
        ("prose", "Some prose.", 8, ()),
        ("code", "x = 1\nx", 10, ("repr", "figures")),
        ("code", "y = 2\n\nprint(y)", 14, ("repr", "figures")),
    ]


_PERCENT_CELL = st.one_of(
    st.tuples(st.just("markdown"), st.lists(_WORD, min_size=1, max_size=3)),
    st.tuples(st.just("raw"), st.lists(_WORD, min_size=1, max_size=2)),
    st.tuples(st.just("code"), _CODE),
    st.tuples(st.just("tagged"), _CODE),
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(_PERCENT_CELL, min_size=1, max_size=7))
def test_percent_scripts_read_as_jupytext_reads_them(cells: list) -> None:
    """Property: a generated percent script (markdown, raw, code and tagged
    cells) gives the cells jupytext's own reader gives, kind, text and tags."""
    import jupytext

    lines = ["# %% [markdown]", "# Start."]
    for kind, body in cells:
        head = {"markdown": "# %% [markdown]", "raw": "# %% [raw]", "code": "# %%",
                "tagged": '# %% tags=["raises-exception"]'}[kind]  # fmt: skip
        lines += ["", head, *([f"# {w}" for w in body] if kind in ("markdown", "raw") else body)]
    text = "\n".join(lines) + "\n"
    ours = [(c.kind, c.text, c.tags) for c in parse(text)]
    notebook = jupytext.reads(text, fmt="py:percent")
    kinds = {"markdown": "prose", "raw": "raw", "code": "code"}
    theirs = [(kinds[c.cell_type], c.source, tuple(c.metadata.get("tags", ()))) for c in notebook.cells]
    assert ours == theirs
