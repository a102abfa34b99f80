"""A notebook page's configuration: its metadata tags, nbval sanitizer files, stored figures, what it leaves unchecked.

:mod:`.notebook` places a notebook's cells; this module says, for it, what
the notebook's and each cell's ``snipcheck`` metadata make of a cell's tag
block (:mod:`snipcheck.sources.notebook_meta`), warns about unknown keys,
bad values and outputs that are not compared
(:mod:`snipcheck.sources.notebook_outputs`), and warns, once per build,
about the nbval sanitizer files of :confval:`snipcheck_nbval_sanitize`
that cannot be read (:mod:`snipcheck.judge.nbval_sanitize`).

A cell's stored figures are its figures' stated images: they are written,
as the figure check reads stated images
(:func:`snipcheck.judge.figures.stated_path`), under
``<doctree dir>/snipcheck-notebook-figures`` (the build's own folder: the
notebook is never written), and :func:`figures_dir` gives the judge that
folder for a notebook cell.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from snipcheck.files import write_atomic
from snipcheck.judge import nbval_sanitize
from snipcheck.judge.figures import stated_path
from snipcheck.sources import notebook_meta as meta
from snipcheck.sources import tags
from snipcheck.sphinxext import index
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

    from snipcheck.model import Figure
    from snipcheck.sources.notebook import Cell, Notebook
    from snipcheck.sphinxext.collector import SnippetRecord

__all__ = ["cell_text", "figures_dir", "notebook_table", "register", "state_figures", "warn_unchecked"]

#: The folder, in the doctree directory, of the stored figures of the notebooks.
FIGURES = "snipcheck-notebook-figures"
#: How a notebook cell runs (:attr:`snipcheck.model.Tags.script_cell`): the
#: figures still open at its end are shown, drawn as the inline backend draws them.
SCRIPT_CELL = ("figures", "inline")


def notebook_table(notebook: Notebook, shown: str, docname: str) -> tuple[dict[str, Any], str]:
    """The notebook's own tags, and why they cannot be used (``""`` when they can).

    Unknown keys are left out with a ``snipcheck.tag`` warning; a bad value
    makes the whole notebook unusable (its cells would run without what it
    asks for, such as a requirement), which the caller reports.
    """
    table, problems = meta.known(notebook.meta, meta.NOTEBOOK_KEYS)
    for problem in problems:
        warn("tag", f"notebook {shown}: {problem}", (docname, 0))
    try:
        tags.parse(meta.tag_block(table))
    except (tags.TagError, ValueError) as exc:
        return {}, f"its metadata {meta.KEY!r}: {getattr(exc, 'message', str(exc))}"
    return table, ""


def cell_text(cell: Cell, table: dict[str, Any], code: str, where: str, docname: str, *, first: bool) -> str:
    """The text a cell runs: ``code`` and, after it, the tag block of its tags
    (the notebook's ``table``, its own metadata's over it, and the exception
    its raises marker expects unless its metadata names one).

    :raises ValueError: for a value that no tag block can hold; the message names the key.
    """
    own, problems = meta.known(cell.meta, meta.CELL_KEYS)
    for problem in problems:
        warn("tag", f"notebook {where}: {problem}", (docname, 0))
    merged = meta.cell_table(table, own, first=first)
    if cell.expect and "expect" not in own:
        merged["expect"] = cell.expect
    block = meta.tag_block(merged)
    # after the code: the run numbers the code's lines as the cell shows them
    return f"{code}\n{block}\n" if block else code


def warn_unchecked(cell: Cell, where: str, docname: str) -> None:
    """Say which of a cell's stored outputs are not compared (``snipcheck.unchecked``)."""
    if not cell.unchecked or not cell.compared:
        return
    kinds = ", ".join(cell.unchecked)
    warn("unchecked", f"notebook {where}: its stored {kinds} output is not compared (snipcheck compares a notebook's "
         "stream, error and text/plain outputs and its figures, not an image in an execute_result, nor a rich output "
         "without text/plain)", (docname, 0))  # fmt: skip


def sanitizer_problems(app: Sphinx, config: Config) -> None:
    """Warn about each sanitizer file, section or line that cannot be read (``config-inited``)."""
    names = getattr(config, "snipcheck_nbval_sanitize", None)
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        return  # the value itself is warned about by the config check
    for problem in nbval_sanitize.load(names, Path(app.confdir)).problems:
        warn("config", problem, None)


def note_sanitizers(app: Sphinx, env: Any) -> None:
    """Make a notebook page depend on the sanitizer files, so that a change to one re-reads it."""
    for name in getattr(app.config, "snipcheck_nbval_sanitize", None) or ():
        if isinstance(name, str):
            env.note_dependency(str(Path(app.confdir) / name))


def register(app: Sphinx) -> None:
    app.connect("config-inited", sanitizer_problems, priority=600)  # after the config check (500)


def state_figures(app: Sphinx, snippet_id: str, figures: tuple[Figure, ...]) -> None:
    """Write a cell's stored figures where the figure check reads its stated images (see the module docstring)."""
    root = Path(app.doctreedir) / FIGURES
    for number, figure in enumerate(figures, start=1):
        path = stated_path(root, snippet_id, number, "png")
        try:
            if not path.is_file() or path.read_bytes() != figure.data:
                write_atomic(path, figure.data)
        except OSError as exc:
            warn("cache", f"snippet {snippet_id!r}: cannot keep its stored figure {number} for the figure check: {exc}",
                 None)  # fmt: skip


def stored_figure(app: Sphinx, rec: SnippetRecord, number: int) -> str:
    """How a message names the stated image of figure ``number`` of a notebook
    cell: the notebook's stored output, not the build's copy; ``""`` for any other snippet."""
    if figures_dir(app, rec) == Path(app.srcdir):
        return ""
    return f"(the notebook's stored figure {number} of {rec.where})"


def figures_dir(app: Sphinx, rec: SnippetRecord, drawn: tuple[Figure, ...] | None = None) -> Path:
    """The folder of ``rec``'s stated images: for a notebook cell, that of its
    notebook's stored figures; else the pages' source folder.

    :param drawn: for a notebook cell whose output is not compared
        (``NBVAL_IGNORE_OUTPUT``), its run's figures, which then are its
        stated images too (kept in a folder of their own): only how it ended is judged.
    """
    placed = index.placements(app.env).get(rec.docname, [])
    if not (0 <= rec.serial < len(placed) and placed[rec.serial].directive == "notebook-cell"):
        return Path(app.srcdir)
    if drawn is None:
        return Path(app.doctreedir) / FIGURES
    root = Path(app.doctreedir) / FIGURES / "not-compared"
    for number, figure in enumerate(drawn, start=1):
        try:
            write_atomic(stated_path(root, rec.snippet_id, number, figure.format), figure.data, durable=False)
        except OSError:
            continue  # the figure check then says it has no stated image: a red, never a false green
    return root
