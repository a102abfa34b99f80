"""The ``snipcheck-differences`` directive: how a run here differs from ``python file.py``.

A page's promise is "this is what ``python snippets/<id>.py`` prints".  The
few ways a run under snipcheck cannot be identical to that are listed once,
in :data:`snipcheck.run.DIFFERENCES` (``tests/run/test_parity.py`` keeps the
list true); this directive puts that list on a page, translated like every
other label, so the page states its own exceptions.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from snipcheck.run import DIFFERENCES
from snipcheck.sphinxext.i18n import _
from snipcheck.sphinxext.i18n import _ as translate  # of the texts in DIFFERENCES: the catalog lists them too

if TYPE_CHECKING:
    from sphinx.application import Sphinx


class DifferencesDirective(SphinxDirective):
    """A bullet list: each documented difference, its name in bold."""

    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        items = nodes.bullet_list(classes=["snipcheck-differences"])
        for name, text in DIFFERENCES.items():
            label = str(translate(name))
            para = nodes.paragraph()
            para += nodes.strong(label, label)
            para += nodes.Text(str(_(": ")) + str(translate(text)))
            items += nodes.list_item("", para)
        return [items]


def register(app: Sphinx) -> None:
    app.add_directive("snipcheck-differences", DifferencesDirective)
