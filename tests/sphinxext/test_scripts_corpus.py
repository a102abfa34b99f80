"""The script corpus (issue 36 §8): every shape of script a docs team brings, built in both markups.

``tests/corpus/scripts`` holds one script per shape, written for this
project: a sphinx-gallery script with reStructuredText prose and headings
(tilde underlines, links, a ``:ref:``, a note), figures drawn without
``plt.show()``, bare expressions, modules beside the script, jupytext percent
and light scripts with their YAML headers, raw, ``[md]`` and tagged cells,
and outputs no directive body holds as they are.  ``tests/corpus/rst``
places them all in a reStructuredText page (without myst-parser among its
extensions), ``tests/corpus/myst`` in a MyST page; their stated outputs were
recorded by ``snipcheck record``.

Both must build green, and each page must show every cell of every script,
as the script's own tool reads it: sphinx-gallery's parser for its scripts,
jupytext's for the notebooks (not snipcheck's reader: an independent
oracle), with no internal marker of the directive anywhere.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag
from docutils import nodes
from helpers import html
from faults_support import sphinx_build

CORPUS = Path(__file__).parents[1] / "corpus"
SCRIPTS = sorted(p.stem for p in (CORPUS / "scripts").glob("*.py") if not p.stem.startswith("corpus_"))
JUPYTEXT = {"jupytext_percent": "py:percent", "jupytext_light": "py:light"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, BeautifulSoup]]:
    """Both corpus projects, built once for this module's tests."""
    root = tmp_path_factory.mktemp("corpus")
    shutil.copytree(CORPUS, root / "corpus", ignore=shutil.ignore_patterns("_build"))
    out = {}
    for markup in ("rst", "myst"):
        build = sphinx_build(root / "corpus" / markup, root / markup, root / "cache")
        out[markup] = (build, html(build.outdir / "index.html"))
    return out


# --- what each script's own tool says its cells are ----------------------------------------


def oracle(script: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of the cells of ``script``, as its own tool reads it:
    ``("code", code)`` and ``("text", prose)``; raw cells and the header left out."""
    path = CORPUS / "scripts" / f"{script}.py"
    if script in JUPYTEXT:
        import jupytext

        notebook = jupytext.reads(path.read_text(), fmt=JUPYTEXT[script])
        return [("code" if c.cell_type == "code" else "text", c.source) for c in notebook.cells
                if c.cell_type != "raw" and c.source.strip()]  # fmt: skip
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(str(path))
    return [(b.type, b.content) for b in blocks if b.content.strip()]


def words(text: str) -> str:
    """The first plain words of a prose cell, as the page shows them (markup aside)."""
    for line in text.split("\n"):
        line = re.sub(r"[#*`=~\-]+", " ", line).strip()
        if line.startswith((".. ", "_")) or not line:
            continue
        line = re.sub(r"<[^>]*>`_|:ref:`|`", "", line)
        return " ".join(line.split()[:3])
    return ""


def rendered(page: BeautifulSoup, script: str) -> list[tuple[str, Tag]]:
    """The page's cells of ``script`` in page order: ``("code", container)``;
    and between them, its text, as ``("text", element)`` for each heading and paragraph."""
    prefix = nodes.make_id(f"snippet-code-{script}/")
    body = page.find("div", class_="body") or page
    out: list[tuple[str, Tag]] = []
    seen = False
    for element in body.find_all(True):
        if element.get("id", "").startswith(prefix):
            out.append(("code", element))
            seen = True
        elif element.name in ("h1", "h2", "h3", "h4", "p", "li") and not element.find_parent(class_="snipcheck-snippet"):
            out.append(("text", element))
    return out if seen else []


def missing_cells(page: BeautifulSoup, script: str) -> list[str]:
    """What the page lacks of ``script``'s cells, each said in a sentence: a
    code cell not shown (or shown out of order), a prose cell whose words are
    not where the script has them, a cell without its output."""
    cells = oracle(script)
    found = rendered(page, script)
    problems = []
    codes = [(i, el) for i, (kind, el) in enumerate(found) if kind == "code"]
    wanted = [text for kind, text in cells if kind == "code"]
    if len(codes) != len(wanted):
        return [f"{script}: {len(wanted)} code cells in the script, {len(codes)} on the page"]
    at = 0
    for kind, text in cells:
        if kind == "code":
            index, element = codes.pop(0)
            shown = element.get_text()
            if script not in JUPYTEXT:  # what sphinx-gallery shows of the block
                from sphinx_gallery.py_source_parser import remove_config_comments, remove_ignore_blocks

                text = remove_config_comments(remove_ignore_blocks(text))
            first = next(line for line in text.split("\n") if line.strip())
            if first.strip() not in shown:
                problems.append(f"{script}: code cell {first.strip()!r} is not where the script has it")
            output = page.find(id=element["id"].replace("snippet-code-", "snippet-", 1))
            if output is None and "skip-execution" not in shown and "time.sleep(3600)" not in shown:
                problems.append(f"{script}: the output of code cell {first.strip()!r} is missing")
            at = index + 1
            continue
        lead = words(text)
        nxt = codes[0][0] if codes else len(found)
        between = " ".join(" ".join(el.get_text().split()) for _, el in found[at:nxt] if _ == "text")
        if lead and lead not in between:
            problems.append(f"{script}: prose {lead!r} is not on the page before the next code cell")
    return problems


def test_the_checker_fails_a_page_that_lacks_a_cell_or_its_output(built) -> None:
    """The check below can fail: a page with one code cell taken out, or one
    output, or one prose block, is named."""
    _, page = built["rst"]
    broken = BeautifulSoup(str(page), "html.parser")
    broken.find(id=nodes.make_id("snippet-code-bare_values/3")).decompose()
    assert missing_cells(broken, "bare_values") == ["bare_values: 5 code cells in the script, 4 on the page"]
    broken = BeautifulSoup(str(page), "html.parser")
    broken.find(id=nodes.make_id("snippet-bare_values/2")).decompose()
    assert missing_cells(broken, "bare_values") == ["bare_values: the output of code cell 'print(\"building a list\")' is missing"]
    broken = BeautifulSoup(str(page), "html.parser")
    next(p for p in broken.find_all("p") if "Only the last statement" in p.get_text()).decompose()
    assert missing_cells(broken, "bare_values") == ["bare_values: prose 'Only the last' is not on the page before the next code cell"]


@pytest.mark.parametrize("markup", ["rst", "myst"])
def test_every_page_shows_every_cell_of_every_script_and_no_marker(built, markup: str) -> None:
    build, page = built[markup]
    assert build.statuscode == 0 and build.warnings == [], build.warnings_text
    report = json.loads((build.report_dir / "report.json").read_text())
    assert {r["status"] for r in report["snippets"]} == {"ok"}
    problems = [p for script in SCRIPTS for p in missing_cells(page, script)]
    assert problems == []
    text = str(page)
    assert "snipcheck-script-cell" not in text and "snipcheck-script" not in page.get_text()


@pytest.mark.parametrize("markup", ["rst", "myst"])
def test_gallery_prose_is_restructuredtext_in_either_page(built, markup: str) -> None:
    """§1: sphinx-gallery's prose is reStructuredText whatever the page's
    markup: tilde underlines are headings, links are links, a note is a note."""
    _, page = built[markup]
    headings = [h.get_text().rstrip("¶").strip() for h in page.find_all(["h2", "h3"])]
    assert {"Reading a sphinx-gallery script", "Sorting", "Counting letters"} <= set(headings)
    assert page.find("a", href="https://www.python.org").get_text() == "to the Python site"
    assert page.find("a", href="#corpus-counting") is not None  # the :ref: resolved
    assert "never the start of a code fence" in page.find(class_="admonition note").find_next("p").get_text() or \
        page.find(class_="admonition note") is not None
    # configuration comments and ignored lines are hidden, and ran
    assert "sphinx_gallery_" not in page.get_text() and "hidden_total" not in page.get_text()


@pytest.mark.parametrize("markup", ["rst", "myst"])
def test_jupytext_prose_is_markdown_in_either_page(built, markup: str) -> None:
    """§1, §4: a [markdown] or [md] cell is Markdown whatever the page's
    markup; the YAML header is metadata, the raw cell not shown."""
    _, page = built[markup]
    headings = [h.get_text().rstrip("¶").strip() for h in page.find_all(["h2", "h3", "h4"])]
    assert {"A notebook kept as a percent script", "A failing cell the notebook expects", "After the skipped cell",
            "A notebook kept in the light format", "The last cell"} <= set(headings)  # fmt: skip
    assert page.find("strong", string="Markdown") is not None
    assert page.find("a", href="https://jupytext.readthedocs.io") is not None
    text = page.get_text()
    assert "jupytext_version" not in text and "kernelspec" not in text and "A raw cell" not in text


@pytest.mark.parametrize("markup", ["rst", "myst"])
def test_figures_values_and_modules_are_shown_and_stated(built, markup: str) -> None:
    """§2, §3: open figures at a block's end, the last bare expression's
    value, and what the modules beside the script give."""
    _, page = built[markup]

    def output(cell: str) -> Tag:
        return page.find(id=nodes.make_id(f"snippet-{cell}"))

    def lines(cell: str) -> list[str]:
        return [line.strip() for line in output(cell).find("pre").get_text().split("\n") if line.strip()]

    images = [len(output(f"gallery_figures/{n}").find_all("img")) for n in (1, 2, 3, 4)]
    assert images == [1, 2, 0, 1]  # the deferred figure shows with the next block
    assert lines("bare_values/1") == ["3"]
    assert lines("bare_values/2") == ["building a list", "[0, 1, 4, 9]"]
    assert output("bare_values/3").find("pre") is None  # None shows nothing
    assert lines("bare_values/4") == ["Table(rows=1)"]
    assert lines("bare_values/5") == ["'shown'"]
    assert lines("local_import/1") == ["3 apples"] and lines("local_import/2") == ["10"]
    assert "KeyError: 'missing'" in output("jupytext_percent/2").get_text()
    assert "still here, total is 45" in output("jupytext_percent/4").get_text()
    skipped = page.find(id=nodes.make_id("snippet-code-jupytext_percent/3"))
    assert "time.sleep(3600)" in skipped.get_text() and output("jupytext_percent/3") is None


@pytest.mark.parametrize("script", [s for s in SCRIPTS])
def test_snipcheck_reads_each_script_as_its_tool_does(script: str) -> None:
    """The cells snipcheck reads are the cells sphinx-gallery or jupytext read."""
    from snipcheck.sources.scripts import read

    ours = [(c.kind, c.text) for c in read((CORPUS / "scripts" / f"{script}.py").read_text()).cells if c.kind != "raw"]
    theirs = oracle(script)
    assert [k for k, _ in ours] == [("code" if k == "code" else "prose") for k, _ in theirs]
    for (kind, mine), (_, their) in zip(ours, theirs, strict=True):
        if kind == "code":
            assert mine.strip() == their.strip()
        else:  # sphinx-gallery keeps its comment lines in a text block; they are hidden here
            assert mine.strip() == "\n".join(
                line for line in their.strip().split("\n") if "sphinx_gallery_" not in line
            ).strip()
