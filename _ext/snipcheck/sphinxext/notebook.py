"""Notebook pages: a ``.ipynb`` page that myst-nb renders, run and checked as one chain.

myst-nb (with its own execution off) reads the notebook and renders its cells
with their stored outputs.  Once it has (``doctree-read``), snipcheck reads
the same file with :mod:`snipcheck.sources.notebook`, places each code cell
that runs as a cell of chain ``notebook`` of the page (snippet id
``<docname>/<cell id>``), states its stored outputs, starts the chain's run,
and puts the output panel of the real run where myst-nb put the stored
outputs; the comparison, warnings, stamp and panel are those of any snippet
(:mod:`.results`, :mod:`.fill`).  A cell marked to skip keeps what myst-nb
shows.  The notebook is never written (its placements say why).

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes

from snipcheck.sources import notebook as nb
from snipcheck.sources import notebook_cells as cells
from snipcheck.sources.chains import Broken
from snipcheck.sources.placement import CodeBlock, Placement
from snipcheck.sources.snippets import SnippetError
from snipcheck.sphinxext import chain, index, render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import SnippetRecord, add
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from snipcheck.model import RunResult

#: The chain name of a notebook page's cells.
CHAIN = "notebook"
_IGNORED = "snipcheck_notebook_ignored"
_UNREADABLE = "snipcheck_notebook_unreadable"
_EMPTY = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
_NOT_WRITABLE = "a notebook cell: snipcheck does not write notebooks yet; run the notebook in Jupyter and save it"


def read_notebook(app: Sphinx, doctree: nodes.document) -> None:
    """Place the code cells of a notebook page as one chain (``doctree-read``)."""
    env = app.env
    docname = env.docname
    path = Path(env.doc2path(docname))
    if path.suffix != ".ipynb":
        return
    shown = _shown(path, Path(env.srcdir))
    unreadable = env.temp_data.pop(_UNREADABLE, None)
    if unreadable is not None:
        message = f"notebook {shown}: {unreadable}; its cells are not run"
        warn("tag", message, (docname, 0))
        add(env, SnippetRecord(docname, 0, docname, "error", "none", problems=(message,), where=shown))
        doctree += render.error_box(message)
        return
    try:
        notebook = nb.read(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, nb.NotebookError):
        return  # the notebook changed since it was read: the next build reads it again
    if not notebook.runnable:
        warn("missing", f"notebook {shown}: its kernel's language is {notebook.language!r}, not Python; "
             "snipcheck runs Python notebooks only, so its stored outputs are shown unchecked", (docname, 0))  # fmt: skip
        return
    containers = {n.get("cell_index"): n for n in doctree.findall(nodes.container) if n.get("nb_element") == "cell_code"}
    for cell in notebook.cells:
        if not cell.run:
            continue
        if cell.source.strip() == "":
            continue
        _place(app, docname, path, shown, cell, containers.get(cell.number - 1))


def check_source(app: Sphinx, docname: str, source: list[str]) -> None:
    """Give myst-nb an empty notebook in place of one that cannot be read
    (``source-read``), so that the build goes on; :func:`read_notebook` then
    warns, naming the file, and the page shows why it holds no cell."""
    if Path(app.env.doc2path(docname)).suffix != ".ipynb":
        return
    try:
        nb.read(source[0])
    except nb.NotebookError as exc:
        app.env.temp_data[_UNREADABLE] = str(exc)
        source[0] = _EMPTY


def _place(app: Sphinx, docname: str, path: Path, shown: str, cell: nb.Cell, container: nodes.Element | None) -> None:
    """Place ``cell`` as the next cell of the page's chain, and its output panel in ``container``."""
    env = app.env
    state = state_mod.for_env(env)
    snippet_id = f"{docname}/{cell.cell_id}"
    where = f"{shown}, cell {cell.number} (id {cell.cell_id})"
    text = _tag_block(cell.expect) + nb.run_text(cell.source)
    block = CodeBlock(snippet_id, docname, str(path.resolve()), 0, 1, "python", text)
    placed = index.placements(env).setdefault(docname, [])
    placement = Placement(snippet_id, cells.DIRECTIVE, docname, str(path), cell.number, "notebook", "", "", 0, 0, False, "",
                          cells.options(cell.compared), cell.stated, writable=_NOT_WRITABLE, chain=CHAIN)  # fmt: skip
    placed.append(placement)
    serial = len(placed) - 1
    index.code_blocks(env).setdefault(docname, []).append(block)
    base = SnippetRecord(docname, 0, snippet_id, "pending", "none", serial=serial, where=where, stated=cell.stated)
    if not cell.compared:
        env.__dict__.setdefault(_IGNORED, set()).add((docname, serial))
    try:
        snippet = state.load(snippet_id, block)
    except SnippetError as exc:
        message = f"notebook {where}: {exc.message}"
        warn("tag", message, (docname, 0))
        add(env, dataclasses.replace(base, status="error", problems=(exc.message,)))
        return
    linked = chain.link(env, docname, serial, snippet)
    if isinstance(linked, Broken):
        warn("exec", f"notebook {where} is not run: {linked.message}", (docname, 0))
        add(env, dataclasses.replace(base, status="error", problems=(linked.message,)))
        return
    add(env, dataclasses.replace(base, snippet=linked))
    if container is not None:
        node = render.snippet_node(None, snippet_id)
        node += render.pending_output(serial)
        outputs = [c for c in container.children if isinstance(c, nodes.Element) and c.get("nb_element") == "cell_code_output"]
        if outputs:
            outputs[0].replace_self(node)
            for extra in outputs[1:]:
                extra.parent.remove(extra)
        elif not {"remove-output", "remove_output"} & set(cell.tags):
            container += node  # a cell that stored no output
    if state.execute and state.in_main_process and state.planned:
        state.executor.submit(linked)


def _tag_block(expect: str) -> str:
    """The tag block that makes the run expect ``expect`` (none for ``""``);
    it precedes the code, so the run's tracebacks number lines 3 more."""
    return f'# /// snipcheck\n# expect = "{expect}"\n# ///\n' if expect else ""


def output_ignored(env: Any, rec: SnippetRecord) -> bool:
    """Whether ``rec`` is a notebook cell whose output is not compared (nbval's ``NBVAL_IGNORE_OUTPUT``)."""
    return (rec.docname, rec.serial) in env.__dict__.get(_IGNORED, set())


def stated_when_ignored(env: Any, rec: SnippetRecord, result: RunResult, normalizers: Any) -> SnippetRecord:
    """``rec`` itself, or for a cell whose output is not compared, ``rec``
    stating what its run printed: only how it ended is judged."""
    if not output_ignored(env, rec):
        return rec
    from snipcheck.judge.compare import terminal_text

    return dataclasses.replace(rec, stated=terminal_text(result, normalizers))


def _forget(app: Sphinx, env: Any, docname: str) -> None:
    """Drop a page's ignored-output cells when Sphinx reads it again (``env-purge-doc``)."""
    ignored = env.__dict__.get(_IGNORED)
    if ignored:
        env.__dict__[_IGNORED] = {k for k in ignored if k[0] != docname}


def _shown(path: Path, srcdir: Path) -> str:
    try:
        return path.resolve().relative_to(srcdir.resolve()).as_posix()
    except ValueError:
        return str(path)


def register(app: Sphinx) -> None:
    app.connect("source-read", check_source)
    app.connect("doctree-read", read_notebook)
    app.connect("env-purge-doc", _forget)
