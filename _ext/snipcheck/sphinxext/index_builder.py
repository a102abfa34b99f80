"""The ``snipcheck-index`` builder: a Sphinx read that writes nothing.

The command line, the lint and the pytest plugin read a project's
placements with this builder (see :mod:`snipcheck.app.index_reader`): the
pages are read as a build reads them, with execution off, and the
placement index (:mod:`snipcheck.sphinxext.index`) kept in its own
environment, so a second read only re-reads changed pages.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from sphinx.builders.html import StandaloneHTMLBuilder

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx


class IndexBuilder(StandaloneHTMLBuilder):
    """``snipcheck-index``: reads every page (execution off) and writes nothing.

    An HTML builder that never writes: the project's extensions and theme see
    the builder they see in a real build (furo, for one, refuses any other),
    so the pages are read exactly as the build reads them.
    """

    name = "snipcheck-index"
    epilog = ""
    allow_parallel = True

    def get_outdated_docs(self) -> Iterator[str]:
        yield from ()

    def get_target_uri(self, docname: str, typ: str | None = None) -> str:
        return ""

    def write_documents(self, docnames: AbstractSet[str]) -> None:
        pass

    def write_doc(self, docname: str, doctree: nodes.document) -> None:
        pass

    def finish(self) -> None:
        pass


def register(app: Sphinx) -> None:
    app.add_builder(IndexBuilder)
