"""Figures on the page, and the build's check of them against their stated files.

A run's figures (see :mod:`snipcheck.judge.figures`) are written into the HTML
build's image folder (``_images``) by the HTML writer, each named by the
SHA-256 of its bytes (``snipcheck-<sha256>.png``): the same figure is one file
however often it is shown, and a changed one never reuses a name.  In the
output panel, a :class:`snippet_figure` node shows it as ``<img>`` with
translated alt text, where its placeholder line stands in the text output;
other builders (LaTeX, text, man, Texinfo) show the placeholder line the node
holds.

:func:`judge` words what the check step found of the figures against their
stated files (:func:`snipcheck.judge.verdict.check`), and says what drifted; the stated and the new image of each drifted figure are saved in the
report folder for the warning to name.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes

from snipcheck.files import write_atomic
from snipcheck.judge import figures as core
from snipcheck.model import Figure
from snipcheck.report.display import visible
from snipcheck.sphinxext import notebook_tags
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.i18n import _
from snipcheck.sphinxext.paths import shown

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.writers.html5 import HTML5Translator

    from snipcheck.sphinxext.collector import SnippetRecord


class snippet_figure(nodes.General, nodes.Element):
    """A figure in an output panel: ``figure`` (the :class:`~snipcheck.model.Figure`)
    and ``alt``; its child is the placeholder line, for builders without images."""


def image_name(figure: Figure) -> str:
    """The figure's file name in the build's image folder: ``snipcheck-<sha256>.<format>``."""
    return f"snipcheck-{figure.sha256}.{figure.format}"


def figure_node(figure: Figure, number: int, snippet_id: str) -> nodes.Element | None:
    """The node that shows ``figure`` (figure ``number`` of ``snippet_id``);
    ``None`` for a figure that was not kept."""
    if figure.dropped:
        return None
    if figure.name:
        alt = _("Figure {number} of snippet {id}, saved as {name}").format(
            number=number, id=snippet_id, name=visible(figure.name)  # a file name the run chose
        )
    else:
        alt = _("Figure {number} of snippet {id}").format(number=number, id=snippet_id)
    return snippet_figure(figure=figure, alt=alt)


def visit_html(self: HTML5Translator, node: snippet_figure) -> None:
    """Write the image into the image folder (once: it is named by its
    content), and show it instead of the placeholder line."""
    figure: Figure = node["figure"]
    name = image_name(figure)
    path = Path(self.builder.outdir) / self.builder.imagedir / name
    if not path.exists():
        write_atomic(path, figure.data)
    src = posixpath.join(self.builder.imgpath, name)
    size = f' width="{figure.width}" height="{figure.height}"' if figure.width and figure.height else ""
    self.body.append(
        f'<div class="snipcheck-image"><img src="{escape(src)}" alt="{escape(node["alt"])}"{size} /></div>\n'
    )
    raise nodes.SkipNode


def judge(
    app: Sphinx, rec: SnippetRecord, checks: Sequence[core.FigureCheck], figures: Sequence[Figure]
) -> tuple[str, ...]:
    """Word the check step's figure checks (:func:`snipcheck.judge.verdict.check`)
    for the build: one sentence per figure that drifted or has no stated
    file, each naming the figure and where its images were saved, and saying
    how to record it.

    The stated files are dependencies of the page: a changed one makes
    Sphinx read the page, so judge it, again.

    :param checks: one check per figure of the run, in order.
    :param figures: the run's figures.
    """
    if not figures:
        return ()
    state = state_mod.get(app)
    command = state.settings.record_command.format(id=rec.snippet_id)
    out = []
    for found, figure in zip(checks, figures, strict=True):
        app.env.note_dependency(found.stated, docname=rec.docname)
        if found.ok:
            continue
        where = notebook_tags.stored_figure(app, rec, found.number) or shown(found.stated, state.root)
        try:
            stated, actual = core.report_images(state.settings.report_dir, rec.snippet_id, found, figure)
        except OSError:
            saved = ""
        else:
            saved = "; " + (f"stated image: {shown(stated, state.root)}, " if stated else "") + (
                f"new image: {shown(actual, state.root)}"
            )
        stored = notebook_tags.stored_figure(app, rec, found.number)
        if stored:  # record cannot draw into a notebook: say what does
            out.append(
                f"{core.sentence(found, where)}{saved}; if the new figure is right, run the cell in Jupyter and save "
                "the notebook (record does not draw figures into a notebook)"
            )
            continue
        hint = "record it" if found.status == "missing" else "if the new figure is right, record it"
        out.append(f"{core.sentence(found, where)}{saved}; {hint}: {command}")
    return tuple(out)


def _placeholder(self: Any, node: nodes.Element) -> None:
    """Builders without images: the placeholder line the node holds is written as usual."""


def register(app: Sphinx) -> None:
    plain = (_placeholder, _placeholder)
    app.add_node(snippet_figure, html=(visit_html, None), latex=plain, text=plain, man=plain, texinfo=plain)
