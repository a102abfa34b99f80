"""Opt-in sub-extensions that the chapter of this repository uses.

An outside project that lists only ``"snipcheck"`` in ``extensions`` gets
none of these; each one is loaded by its own name and registers itself with
its own ``setup()`` (which loads the core ``snipcheck`` extension first):

``snipcheck_chapter.reading``
    ``{reading-time}`` and ``{resume-point}``: reading aids computed from the page.
``snipcheck_chapter.search_zh``
    Chinese full-text search that works: section entries for the chapter's
    terms, terms with symbols (形态③), one result per page, excerpts
    without line numbers, and the work-around for Sphinx 9.0's broken
    Chinese stemmer binding.
``snipcheck_chapter.versions``
    ``{snipcheck-versions}``: the page generated from ``verify`` reports.
``snipcheck_chapter.cjk``
    No stray space where a line of CJK text breaks in the source.
``snipcheck_chapter.furo``
    The Furo theme's own labels in the page's language (Furo ships no
    catalogs), and its "Back to top" pill kept off code.

Loading ``snipcheck_chapter`` itself loads all of them.

May import Sphinx and docutils (Sphinx layer).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

SUB_EXTENSIONS = (
    "snipcheck_chapter.reading",
    "snipcheck_chapter.search_zh",
    "snipcheck_chapter.versions",
    "snipcheck_chapter.cjk",
    "snipcheck_chapter.furo",
)


#: This package's own CSS and JavaScript.
STATIC = Path(__file__).parent / "static"
#: This package's own catalogs (the Furo theme's labels).
LOCALE_DIR = Path(__file__).parent / "locale"


def add_static(app: Sphinx, *, css: str = "", js: str = "", js_defer: bool = False) -> None:
    """Serve a file of :data:`STATIC` on every page.

    The folder joins ``html_static_path`` at ``config-inited`` (before Sphinx
    compares the configuration with the pickled one, so a rebuild sees no
    change), as a new list: the option's default list is shared by every
    Sphinx app of the process.
    """

    def _add(app: Sphinx, config: Config) -> None:
        if str(STATIC) not in config.html_static_path:
            config.html_static_path = [*config.html_static_path, str(STATIC)]

    app.connect("config-inited", _add)
    if css:
        app.add_css_file(css)
    if js and js_defer:
        app.add_js_file(js, defer="defer")
    elif js:
        app.add_js_file(js)


def metadata(env_version: int | None = None) -> dict[str, Any]:
    """The ``setup()`` return value every chapter sub-extension shares.

    :param env_version: for a sub-extension that keeps data in the build
        environment: bump it when that data changes shape.
    """
    from snipcheck import __version__

    meta: dict[str, Any] = {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
    if env_version is not None:
        meta["env_version"] = env_version
    return meta


def setup(app: Sphinx) -> dict[str, Any]:
    """Load every chapter sub-extension (``extensions = ["snipcheck_chapter"]``)."""
    for name in SUB_EXTENSIONS:
        app.setup_extension(name)
    return metadata()
