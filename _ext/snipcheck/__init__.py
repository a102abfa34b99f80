"""snipcheck: executable snippets for Sphinx chapters.

Every code block of a chapter is a snippet file; the ``snippet`` directive runs
it at build time, shows its real output and fails the build when the output
stated in the chapter source drifts from the actual one.

Layout: a pure core (:mod:`~snipcheck.model`, :mod:`~snipcheck.tags`,
:mod:`~snipcheck.snippets`, :mod:`~snipcheck.runner`, :mod:`~snipcheck.cache`,
:mod:`~snipcheck.normalize`, :mod:`~snipcheck.compare`,
:mod:`~snipcheck.placement`, :mod:`~snipcheck.rewrite`, :mod:`~snipcheck.execute`, :mod:`~snipcheck.cli`)
that imports no Sphinx, and a thin Sphinx layer in :mod:`snipcheck.sphinxext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    """Sphinx entry point; see :func:`snipcheck.sphinxext.setup`."""
    from .sphinxext import setup as _setup

    return _setup(app)
