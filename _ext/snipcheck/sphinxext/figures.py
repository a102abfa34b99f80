"""Figures on the page, and the build's check of them against their stated files.

A run's figures (see :mod:`snipcheck.figures`) are written into the HTML
build's image folder (``_images``), each named by the SHA-256 of its bytes
(``snipcheck-<sha256>.png``): the same figure is one file however often it is
shown, and a changed one never reuses a name.  In the output panel, a
:class:`snippet_figure` node shows it as ``<img>`` with translated alt text,
where its placeholder line stands in the text output; builders other than
HTML show the placeholder line.

:func:`judge` compares the figures with their stated files
(:func:`snipcheck.figures.check`) once the text is judged, and says what
drifted; the stated and the new image of each drifted figure are saved in the
report folder for the warning to name.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import posixpath
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes

from .. import figures as core
from ..files import write_atomic
from ..model import Figure, RunResult
from . import state as state_mod
from .i18n import _

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.builders import Builder
    from sphinx.writers.html5 import HTML5Translator

    from .collector import SnippetRecord


class snippet_figure(nodes.General, nodes.Element):
    """A figure in an output panel: ``filename`` (in the image folder), ``alt``,
    ``width`` and ``height`` (pixels, 0 when unknown)."""


def image_name(figure: Figure) -> str:
    """The figure's file name in the build's image folder: ``snipcheck-<sha256>.<format>``."""
    return f"snipcheck-{figure.sha256}.{figure.format}"


def shows_images(builder: Builder) -> bool:
    """Whether ``builder`` writes HTML with an image folder (html, dirhtml, singlehtml, epub)."""
    return builder.format == "html" and bool(getattr(builder, "imagedir", ""))


def figure_node(builder: Builder, figure: Figure, number: int, snippet_id: str) -> nodes.Element | None:
    """The node that shows ``figure`` (figure ``number`` of ``snippet_id``),
    its file written into the image folder if it is not there yet; ``None``
    where the builder shows no images or the figure was not kept."""
    if not shows_images(builder) or figure.dropped:
        return None
    name = image_name(figure)
    path = Path(builder.outdir) / builder.imagedir / name  # type: ignore[attr-defined]
    if not path.exists():
        write_atomic(path, figure.data)
    if figure.name:
        alt = _("Figure {number} of snippet {id}, saved as {name}").format(number=number, id=snippet_id, name=figure.name)
    else:
        alt = _("Figure {number} of snippet {id}").format(number=number, id=snippet_id)
    return snippet_figure(filename=name, alt=alt, width=figure.width or 0, height=figure.height or 0)


def visit_html(self: HTML5Translator, node: snippet_figure) -> None:
    src = posixpath.join(self.builder.imgpath, node["filename"])  # type: ignore[attr-defined]
    size = f' width="{node["width"]}" height="{node["height"]}"' if node["width"] and node["height"] else ""
    self.body.append(
        f'<div class="snipcheck-image"><img src="{escape(src)}" alt="{escape(node["alt"])}"{size} /></div>\n'
    )
    raise nodes.SkipNode


def judge(app: Sphinx, rec: SnippetRecord, result: RunResult) -> tuple[str, ...]:
    """Compare ``result``'s figures with their stated files; one sentence per
    figure that drifted or has no stated file, each naming the figure and
    where its images were saved, and saying how to record it.

    The stated files are dependencies of the page: a changed one makes
    Sphinx read the page, so judge it, again.
    """
    if not result.figures:
        return ()
    state = state_mod.get(app)
    srcdir = Path(app.srcdir)
    command = state.settings.record_command.format(id=rec.snippet_id)
    out = []
    for found, figure in zip(core.check(rec.snippet_id, result.figures, srcdir), result.figures, strict=True):
        app.env.note_dependency(found.stated, docname=rec.docname)
        if found.ok:
            continue
        from .results import _shown  # the one helper for a path shown in a message

        shown = _shown(found.stated, state.root)
        try:
            stated, actual = core.report_images(state.settings.report_dir, rec.snippet_id, found, figure)
        except OSError:
            saved = ""
        else:
            saved = "; " + (f"stated image: {_shown(stated, state.root)}, " if stated else "") + (
                f"new image: {_shown(actual, state.root)}"
            )
        hint = "record it" if found.status == "missing" else "if the new figure is right, record it"
        out.append(f"{core.sentence(found, shown)}{saved}; {hint}: {command}")
    return tuple(out)


def _skip(self: Any, node: nodes.Element) -> None:
    raise nodes.SkipNode


def register(app: Sphinx) -> None:
    # Only HTML builders get the node (figure_node); the others are listed so
    # that a doctree holding one never breaks their writer.
    app.add_node(
        snippet_figure,
        html=(visit_html, None),
        latex=(_skip, None),
        text=(_skip, None),
        man=(_skip, None),
        texinfo=(_skip, None),
    )
