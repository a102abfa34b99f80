"""MyST-NB text notebooks: a ``.md`` page of ``{code-cell}`` directives, run and checked as one chain.

A Markdown page whose front matter says ``file_format: mystnb`` (or holds a
jupytext header with ``format_name: myst``) is a notebook to myst-nb: it
reads the page into notebook cells (``myst_nb.core.read``) and renders them
as it renders an ``.ipynb``.  Such a page stores no outputs, so its stated
outputs live on the page: the fenced block with the info string ``output``
right after a ``{code-cell}`` (the next block of the page) is that cell's
stated output, as the body of a ``snippet`` directive is a snippet's.  A
code cell without one states that it prints nothing, as a notebook cell with
no stored output does: whatever it prints is drift, never green unchecked.

Once myst-nb has rendered the page (``doctree-read``), its code cells are
read with myst-nb's own reader, each with the output block after it, and
placed as the cells of the page's chain by :mod:`snipcheck.sphinxext.notebook`
(the same markers, panel and comparison; snippet ids ``<docname>/cell-<k>``,
``k`` the cell's position among the page's code cells, which editing the
prose between them does not change).  The output
block is taken off the page: the panel of the real run stands in the cell
instead.  ``record`` and ``accept`` do not write output blocks yet (the
placement says why).

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes

from snipcheck.sources import notebook as nb
from snipcheck.sources import notebook_cells as cells
from snipcheck.sphinxext import index, notebook_tags
from snipcheck.sphinxext import notebook as ipynb
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: The info string of the fenced block that states a code cell's output.
OUTPUT_LANGUAGE = "output"


def _not_writable(snippet_id: str) -> str:
    """Why record and accept leave the output block of the text notebook cell ``snippet_id`` as it is."""
    return (
        "a cell of a text notebook: record and accept do not write its output block yet; "
        f"`snipcheck run {snippet_id}` prints the output to put in the ```output block after the cell"
    )


#: The last line of a traceback: the exception's name, then its message.
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::\s|:?$)")


def read_text_notebook(app: Sphinx, doctree: nodes.document) -> None:
    """Place the code cells of a text notebook page as one chain (``doctree-read``)."""
    env = app.env
    docname = env.docname
    path = Path(env.doc2path(docname))
    if path.suffix == ".ipynb":
        return  # an .ipynb page is :mod:`.notebook`'s
    containers = {n.get("cell_index"): n for n in doctree.findall(nodes.container) if n.get("nb_element") == "cell_code"}
    if not containers:
        return
    shown = ipynb._shown(path, Path(env.srcdir))
    try:
        notebook, lines = read(path.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        warn("tag", f"text notebook {shown}: its cells cannot be read ({exc}); they are not run", (docname, 0))
        return
    if not notebook.runnable:
        warn("missing", f"text notebook {shown}: its kernel's language is {notebook.language!r}, not Python; "
             "snipcheck runs Python notebooks only, so its cells are not run", (docname, 0))  # fmt: skip
        return
    table, bad = notebook_tags.notebook_table(notebook, shown, docname)
    if bad:
        warn("tag", f"text notebook {shown}: {bad}; its cells are not run", (docname, 0))
        return
    first = True
    for ordinal, cell in enumerate(notebook.cells, start=1):
        container = containers.get(cell.number - 1)
        block = _output_block(container)
        if not cell.run or cell.source.strip() == "":
            continue  # a skipped cell keeps its output block, shown as written (nothing checked it)
        stated = block.astext().removesuffix("\n") if block is not None else ""
        line = lines.get(cell.number, 0)
        # numbered among the code cells: myst-nb's markdown cells come and go as the prose is edited
        cell = dataclasses.replace(
            cell, number=ordinal, cell_id=f"cell-{ordinal}", stated=stated, expect=expected(cell, stated)
        )
        if block is not None and block.parent is not None:
            block.parent.remove(block)  # the panel of the real run stands in its place
        snippet_id = f"{docname}/{cell.cell_id}"
        ipynb._place(app, docname, path, f"{shown}:{line}", cell, container, ("", _not_writable(snippet_id)), table, first)
        first = False
        placed = index.placements(env)[docname]
        if placed and placed[-1].snippet_id == snippet_id:
            # a line of the page, as every MyST placement has, and the cell's number for its label;
            # its output block is the author's text, compared as a page's (not as a notebook's stored outputs)
            kept = tuple(o for o in placed[-1].options if o[0] not in (cells.STORED, cells.STDERR, cells.REST))
            placed[-1] = dataclasses.replace(
                placed[-1], line=line, options=(*kept, cells.text_cell(ordinal)), writable=_not_writable(snippet_id)
            )


def read(text: str, path: Path) -> tuple[nb.Notebook, dict[int, int]]:
    """The code cells of a text notebook, as myst-nb reads the page, without
    outputs; and the 1-based line of the page where each cell begins, by cell number.

    The cells' ids are left out (myst-nb draws them at random on every read);
    :func:`read_text_notebook` names each ``cell-<k>``, ``k`` its position
    among the page's code cells.

    :raises ValueError: if myst-nb cannot read it (bad front matter, say).
    """
    from myst_nb.core.read import read_myst_markdown_notebook

    try:
        notebook = read_myst_markdown_notebook(text, path=path, add_source_map=True)
    except Exception as exc:  # myst-nb raises its own errors (and YAML's) for a bad page
        raise ValueError(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__) from exc
    raw = json.loads(json.dumps(notebook))
    for cell in raw.get("cells", []):
        cell.pop("id", None)  # myst-nb's are drawn at random on every read
    raw["nbformat"], raw["nbformat_minor"] = 4, 4
    starts = raw.get("metadata", {}).pop("source_map", [])
    try:
        read_cells = nb.read(json.dumps(raw))
    except nb.NotebookError as exc:
        raise ValueError(str(exc)) from exc
    return read_cells, {k: int(line) for k, line in enumerate(starts, start=1)}


def expected(cell: nb.Cell, stated: str) -> str:
    """The exception a cell marked to raise must raise: the one its output
    block names on its last line (``ZeroDivisionError: division by zero``),
    else any (``Exception``); ``""`` for a cell not marked to raise."""
    if not cell.expect:
        return ""
    lines = stated.rstrip("\n").split("\n")
    m = _EXCEPTION_LINE.match(lines[-1])
    return m.group(1) if m and "Traceback (most recent call last):" in lines else "Exception"


def _output_block(container: nodes.Element | None) -> nodes.literal_block | None:
    """The ``output`` block right after ``container`` on the page, if any."""
    if container is None or container.parent is None:
        return None
    siblings = container.parent.children
    at = siblings.index(container)
    after = siblings[at + 1] if at + 1 < len(siblings) else None
    if isinstance(after, nodes.literal_block) and after.get("language") == OUTPUT_LANGUAGE:
        return after
    return None


def register(app: Sphinx) -> None:
    app.connect("doctree-read", read_text_notebook)
