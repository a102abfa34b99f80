"""Opt-in sub-extensions that the chapter of this repository uses.

An outside project that lists only ``"snipcheck"`` in ``extensions`` gets
none of these; each one is loaded by its own name and registers itself with
its own ``setup()`` (which loads the core ``snipcheck`` extension first):

``snipcheck.chapter.reading``
    ``{reading-time}`` and ``{resume-point}``: reading aids computed from the page.
``snipcheck.chapter.search_zh``
    Chinese full-text search that works: section entries for the chapter's
    terms, terms with symbols (形态③), one result per page, excerpts
    without line numbers, and the work-around for Sphinx 9.0's broken
    Chinese stemmer binding.
``snipcheck.chapter.versions``
    ``{snipcheck-versions}``: the page generated from ``verify`` reports.
``snipcheck.chapter.cjk``
    No stray space where a line of CJK text breaks in the source.
``snipcheck.chapter.furo``
    The Furo theme's own labels in the page's language (Furo ships no
    catalogs), and its "Back to top" pill kept off code.

Loading ``snipcheck.chapter`` itself loads all of them.

May import Sphinx and docutils (Sphinx layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx

SUB_EXTENSIONS = (
    "snipcheck.chapter.reading",
    "snipcheck.chapter.search_zh",
    "snipcheck.chapter.versions",
    "snipcheck.chapter.cjk",
    "snipcheck.chapter.furo",
)


def metadata(env_version: int | None = None) -> dict[str, Any]:
    """The ``setup()`` return value every chapter sub-extension shares.

    :param env_version: for a sub-extension that keeps data in the build
        environment: bump it when that data changes shape.
    """
    from .. import __version__

    meta: dict[str, Any] = {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
    if env_version is not None:
        meta["env_version"] = env_version
    return meta


def setup(app: Sphinx) -> dict[str, Any]:
    """Load every chapter sub-extension (``extensions = ["snipcheck.chapter"]``)."""
    for name in SUB_EXTENSIONS:
        app.setup_extension(name)
    return metadata()
