"""Notebook pages: a ``.ipynb`` page that myst-nb renders, run and checked as one chain.

myst-nb (with its own execution off) reads the notebook and renders its cells
with their stored outputs.  Once it has (``doctree-read``), snipcheck reads
the same file with :mod:`snipcheck.sources.notebook`, places each code cell
that runs as a cell of chain ``notebook`` of the page (snippet id
``<docname>/<cell id>``), states its stored outputs, starts the chain's run,
and puts the output panel of the real run where myst-nb put the stored
outputs; the comparison, warnings, stamp and panel are those of any snippet
(:mod:`.results`, :mod:`.fill`).  A cell marked to skip keeps what myst-nb
shows.  The build never writes the notebook; its placements (the cell's
number as ``line``, the digest of the bytes read) let ``record``, ``accept``
and ``review`` write a cell's outputs (:mod:`snipcheck.pending.notebook_write`).

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes

from snipcheck.pending import notebook_write
from snipcheck.sources import notebook as nb
from snipcheck.sources import notebook_cells as cells
from snipcheck.sources.chains import Broken
from snipcheck.sources.placement import CodeBlock, Placement
from snipcheck.sources.snippets import SnippetError
from snipcheck.sphinxext import chain, index, notebook_tags, render
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
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        notebook = nb.read(text)
    except (OSError, UnicodeDecodeError, nb.NotebookError):
        return  # the notebook changed since it was read: the next build reads it again
    # record/accept write the outputs into these very bytes, or refuse (notebook_write)
    written = (hashlib.sha256(raw).hexdigest(), notebook_write.unwritable(text))
    if not notebook.runnable:
        warn("missing", f"notebook {shown}: its kernel's language is {notebook.language!r}, not Python; "
             "snipcheck runs Python notebooks only, so its stored outputs are shown unchecked", (docname, 0))  # fmt: skip
        return
    notebook_tags.note_sanitizers(app, env)
    table, bad = notebook_tags.notebook_table(notebook, shown, docname)
    if bad:
        message = f"notebook {shown}: {bad}; its cells are not run"
        warn("tag", message, (docname, 0))
        add(env, SnippetRecord(docname, 0, docname, "error", "none", problems=(message,), where=shown))
        return
    containers = {n.get("cell_index"): n for n in doctree.findall(nodes.container) if n.get("nb_element") == "cell_code"}
    first = True
    for cell in notebook.cells:
        if not cell.run:
            continue
        if cell.source.strip() == "":
            if cell.stated:
                _no_source(app, docname, shown, cell)
            continue
        _place(app, docname, path, shown, cell, containers.get(cell.number - 1), written, table, first)
        first = False


def check_source(app: Sphinx, docname: str, source: list[str]) -> None:
    """Give myst-nb an empty notebook in place of one that cannot be read
    (``source-read``), so that the build goes on; :func:`read_notebook` then
    warns, naming the file, and the page shows why it holds no cell."""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        return
    limit = state_mod.get(app).settings.notebook_limit
    try:
        size = path.stat().st_size  # not the text's encoding: a copy of what may be large
    except OSError:
        size = len(source[0])
    if limit and size > limit:
        app.env.temp_data[_UNREADABLE] = (
            f"{size:,} bytes, more than snipcheck_notebook_limit ({limit:,} bytes); clear its outputs in Jupyter "
            "(large images or tables make most of a notebook's size), split it, or raise the limit in conf.py"
        )
        source[0] = _EMPTY
        return
    try:
        nb.read(source[0])
    except nb.NotebookError as exc:
        app.env.temp_data[_UNREADABLE] = str(exc)
        source[0] = _EMPTY


def _no_source(app: Sphinx, docname: str, shown: str, cell: nb.Cell) -> None:
    """Fail a cell that stores outputs under no code: nothing can print them, so nothing checks them."""
    where = f"{shown}, {notebook_write.cell_label(cell.number, cell.cell_id)}"
    message = (
        f"notebook {where}: the cell stores outputs but has no code, so no run can check them; "
        "put its code back, or clear its outputs in Jupyter (Edit > Clear Output)"
    )
    warn("tag", message, (docname, 0))
    snippet_id = f"{docname}/{cell.cell_id}"
    add(app.env, SnippetRecord(docname, 0, snippet_id, "error", "none", problems=(message,), where=where, stated=cell.stated))


def _place(
    app: Sphinx, docname: str, path: Path, shown: str, cell: nb.Cell, container: nodes.Element | None,
    written: tuple[str, str], table: dict[str, Any], first: bool,
) -> None:  # fmt: skip
    """Place ``cell`` as the next cell of the page's chain, and its output panel in ``container``.

    :param written: the SHA-256 of the notebook's bytes as read, and why
        ``record`` cannot write its outputs (``""``: it can).
    :param table: the notebook's metadata tags (:func:`.notebook_tags.notebook_table`).
    :param first: whether it is the first cell of the chain.
    """
    env = app.env
    state = state_mod.for_env(env)
    snippet_id = f"{docname}/{cell.cell_id}"
    where = f"{shown}, cell {cell.number} (id {cell.cell_id})"
    bad = ""
    code = nb.runnable(cell.source)
    try:
        text = notebook_tags.cell_text(cell, table, code, where, docname, first=first)
    except ValueError as exc:  # a metadata value no tag block can hold: the cell is placed, not loaded
        text, bad = code, f"its metadata 'snipcheck': {exc}"
    magic = nb.ipython_only(code) if cell.run else None
    if magic is not None and not bad:
        bad = (
            f"its line {magic[0]} ({magic[1]!r}) is IPython syntax (a magic or a shell escape), which snipcheck "
            "cannot run: a cell runs as plain python, as a script would; write it in Python (subprocess.run for a "
            "shell command, time.perf_counter for %time), or tag the cell skip-execution to show it unrun"
        )
    notebook_tags.warn_unchecked(cell, where, docname)
    mode = (*notebook_tags.SCRIPT_CELL, "repr") if nb.shows_last(code) else notebook_tags.SCRIPT_CELL
    block = CodeBlock(snippet_id, docname, str(path.resolve()), 0, 1, "python", text, mode)
    notebook_tags.state_figures(app, snippet_id, cell.figures)
    placed = index.placements(env).setdefault(docname, [])
    # line: the cell's number (what a notebook cell's location names, see Placement)
    placement = Placement(snippet_id, cells.DIRECTIVE, docname, str(path), cell.number, notebook_write.MARKUP, "", "",
                          0, 0, False, "", cells.options(cell.compared, cell.literal, cell.stderr, cell.rest), cell.stated, writable=written[1], chain=CHAIN,
                          digest=written[0], figures_dir=str(Path(app.doctreedir) / notebook_tags.FIGURES))  # fmt: skip
    placed.append(placement)
    serial = len(placed) - 1
    index.code_blocks(env).setdefault(docname, []).append(block)
    base = SnippetRecord(docname, 0, snippet_id, "pending", "none", serial=serial, where=where, stated=cell.stated)
    if not cell.compared:
        env.__dict__.setdefault(_IGNORED, set()).add((docname, serial))
    try:
        if bad:
            raise SnippetError(bad)
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
        # as myst-nb marks a cell's output: its hide-output/hide-cell toggle (HideInputCells) then wraps the panel
        node["nb_element"] = "cell_code_output"
        outputs = [c for c in container.children if isinstance(c, nodes.Element) and c.get("nb_element") == "cell_code_output"]
        if outputs:
            outputs[0].replace_self(node)
            for extra in outputs[1:]:
                extra.parent.remove(extra)
        elif not {"remove-output", "remove_output"} & set(cell.tags):
            container += node  # a cell that stored no output
    if state.execute and state.in_main_process and state.planned:
        state.executor.submit(linked)


def output_ignored(env: Any, rec: SnippetRecord) -> bool:
    """Whether ``rec`` is a notebook cell whose output is not compared (nbval's ``NBVAL_IGNORE_OUTPUT``)."""
    return (rec.docname, rec.serial) in env.__dict__.get(_IGNORED, set())


def stored_mode(env: Any, rec: SnippetRecord) -> tuple[str, str | None, str | None]:
    """How ``rec``'s stated output is compared, what its stored stderr holds
    and what its other outputs state (:func:`snipcheck.sources.notebook_cells.stored`,
    :func:`~snipcheck.sources.notebook_cells.stated_stderr`, :func:`~snipcheck.sources.notebook_cells.stated_rest`):
    ``("", None, None)`` but for an ``.ipynb`` cell, whose stated output is its stored outputs."""
    placed = index.placements(env).get(rec.docname, ())
    if not 0 <= rec.serial < len(placed):
        return "", None, None
    p = placed[rec.serial]
    return cells.stored(p), cells.stated_stderr(p), cells.stated_rest(p)


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
    notebook_tags.register(app)
