"""The ``snippet-chain`` directive, and the cells of a chain as the page is read.

MyST::

    ```{snippet-chain} tensors
    ```

reStructuredText::

    .. snippet-chain:: tensors

The snippets placed after it on the page, in page order, are the cells of
chain ``tensors``: they run one after the other in one process, sharing their
state, like a notebook's cells (see :mod:`snipcheck.sources.chains`).  The chain runs
until the next ``snippet-chain`` (without an argument: the snippets after it
run on their own again), like ``highlight`` or ``currentmodule`` do for what
follows them.  A ``snippet`` directive's own ``chain`` option overrides it
for that snippet.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from snipcheck.model import Snippet
from snipcheck.sources.chains import Broken, attach
from snipcheck.sphinxext import index
from snipcheck.sphinxext.collector import records

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

class ChainDirective(SphinxDirective):
    """Set the chain of the snippets that follow on this page (none without an argument)."""

    required_arguments = 0
    optional_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        self.env.temp_data[index.CHAIN] = self.arguments[0] if self.arguments else ""
        return []


def link(env: BuildEnvironment, docname: str, serial: int, snippet: Snippet) -> Snippet | Broken:
    """``snippet`` (the ``serial``-th placement of ``docname``) with the cells
    of its chain read so far on the page before it."""
    placed = index.placements(env).get(docname, [])
    if serial >= len(placed) or not placed[serial].chain:
        return snippet
    loaded = {r.serial: r.snippet for r in records(env).get(docname, [])}
    items = [(docname, p.chain, loaded.get(i)) for i, p in enumerate(placed[:serial])]
    items.append((docname, placed[serial].chain, snippet))
    linked = attach(items)[-1]
    assert linked is not None
    return linked


def register(app: Sphinx) -> None:
    app.add_directive("snippet-chain", ChainDirective)
