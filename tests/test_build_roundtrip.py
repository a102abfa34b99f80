"""Stated outputs written by docsource.rewrite_text, read back by a real Sphinx build.

Each snippet prints exactly the body recorded for it, so the build reports no
drift if and only if MyST hands the directive the very text that was written,
and the page keeps its structure (every paragraph after a directive is still a
paragraph).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docutils import nodes

from helpers import html, plain, snipcheck_warnings
from snipcheck.docsource import rewrite_text, scan_text
from test_docsource import BODIES

TEMPLATES = {
    "top": "```{{snippet}} rt/c{n}\n```\n",
    "colon-tab-set": "::::{{tab-set}}\n:::{{tab-item}} Tab {n}\n```{{snippet}} rt/c{n}\n```\n:::\n::::\n",
    "list-item": "- item {n}\n\n  ```{{snippet}} rt/c{n}\n  ```\n",
    "backtick-tab-set": "`````{{tab-set}}\n````{{tab-item}} Tab {n}\n```{{snippet}} rt/c{n}\n```\n````\n`````\n",
}


#: A tag block whose requirement no build meets: the snippet is not run and
#: the page shows its stated output verbatim, i.e. exactly what MyST handed over.
NOT_RUN = '# /// snipcheck\n# requires = ["torch>=99"]\n# ///\n'


def write_page(srcdir: Path, cases: list[tuple[str, str, dict[str, str]]], *, tags: str = "") -> None:
    """Place one snippet per case, each printing its body, then record the bodies."""
    blocks = ["# Round trip\n"]
    for n, (container, body, _) in enumerate(cases):
        snippet = srcdir / "snippets" / "rt" / f"c{n}.py"
        snippet.parent.mkdir(parents=True, exist_ok=True)
        # The recorded body is the terminal text without its final newline.
        snippet.write_text(f"{tags}import sys\nsys.stdout.write({body + chr(10)!r})\n", encoding="utf-8")
        blocks.append(TEMPLATES[container].format(n=n))
        blocks.append(f"Paragraph after snippet {n}.\n")
    text = "\n".join(blocks)
    page = srcdir / "index.md"
    placements = scan_text(text, page)
    assert [p.snippet_id for p in placements] == [f"rt/c{n}" for n in range(len(cases))]
    edits = {p.line: (body, options) for p, (_, body, options) in zip(placements, cases)}
    page.write_text(rewrite_text(text, edits, page), encoding="utf-8")


def check(app, cases: list[tuple[str, str, dict[str, str]]]) -> None:  # noqa: ANN001
    write_page(Path(app.srcdir), cases)
    app.build()
    assert snipcheck_warnings(app.warning.getvalue()) == []
    assert plain(app.warning.getvalue()) == ""  # nor any other warning: the page is intact
    page = html(Path(app.outdir) / "index.html")
    paragraphs = {p.get_text().strip() for p in page.find_all("p")}
    missing = [n for n in range(len(cases)) if f"Paragraph after snippet {n}." not in paragraphs]
    assert missing == []
    assert len(page.select("div.snipcheck-snippet")) == len(cases)


@pytest.mark.sphinx("html", testroot="roundtrip")
def test_recorded_outputs_are_read_back_by_the_build(app) -> None:  # noqa: ANN001
    cases = [
        (container, body, options)
        for container in ("top", "colon-tab-set", "list-item")
        for body in BODIES
        for options in ({}, {"stated-env": "torch 2.13.0+cpu · Python 3.11.7 · CPU · Linux x86_64"})
    ]
    check(app, cases)


@pytest.mark.sphinx("html", testroot="roundtrip")
def test_recorded_output_ending_in_blank_lines_is_read_back_by_the_build(app) -> None:  # noqa: ANN001
    # print("last"); print(); print()  ->  stated output "last\n\n".  Record
    # adds a stated-env option to snippets with requirements, which this
    # build cannot run: it shows the stated output as read, verbatim.
    body = "last\n\n"
    cases = [("top", body, {}), ("top", body, {"stated-env": "torch 2.13.0+cu128 · CUDA (NVIDIA H200)"})]
    write_page(Path(app.srcdir), cases, tags=NOT_RUN)
    app.build()
    assert plain(app.warning.getvalue()) == ""
    doctree = app.env.get_doctree("index")
    shown = [
        block.astext()
        for panel in doctree.findall(nodes.container)
        if "snipcheck-unverified" in panel["classes"]
        for block in panel.findall(nodes.literal_block)
    ]
    assert shown == [body, body]


@pytest.mark.sphinx("html", testroot="roundtrip")
def test_recorded_output_with_backticks_inside_a_backtick_tab_set(app) -> None:  # noqa: ANN001
    # The scan finds snippets inside ````{tab-set}```` fences; recording an
    # output that contains ``` there must not break the enclosing tabs.
    check(app, [("backtick-tab-set", "hello", {}), ("backtick-tab-set", "text\n```python\ncode\n```", {})])
