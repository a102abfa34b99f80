"""snipcheck: executable snippets for Sphinx chapters.

Every code block of a chapter is a snippet file; the ``snippet`` directive runs
it at build time, shows its real output and fails the build when the output
stated in the chapter source drifts from the actual one.

Layout: a pure core (:mod:`~snipcheck.model`, :mod:`~snipcheck.sources.tags`,
:mod:`~snipcheck.sources.snippets`, :mod:`~snipcheck.run`, :mod:`~snipcheck.engine.cache`,
:mod:`~snipcheck.judge.normalize`, :mod:`~snipcheck.judge.compare`,
:mod:`~snipcheck.sources.placement`, :mod:`~snipcheck.sources.rewrite`, :mod:`~snipcheck.engine.execute`, :mod:`~snipcheck.app.cli`)
that imports no Sphinx, and a thin Sphinx layer in :mod:`snipcheck.sphinxext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from snipcheck.version import __version__

__all__ = ["__version__", "setup"]

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    """Sphinx entry point; see :func:`snipcheck.sphinxext.setup`."""
    from snipcheck.sphinxext import setup as _setup

    return _setup(app)
