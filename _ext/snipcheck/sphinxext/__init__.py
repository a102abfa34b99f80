"""The thin Sphinx layer of snipcheck: config, directives, nodes, collector, output.

Everything here may import Sphinx and docutils; nothing in the core may import
this package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import claims, collector, config, directive, environment_box, state, summary, versions

if TYPE_CHECKING:
    from sphinx.application import Sphinx

STATIC = Path(__file__).parent.parent / "static"


def setup(app: Sphinx) -> dict[str, Any]:
    """Register snipcheck with Sphinx (``extensions = ["snipcheck"]``)."""
    config.register(app)
    state.register(app)
    collector.register(app)
    directive.register(app)
    environment_box.register(app)
    summary.register(app)
    versions.register(app)
    claims.register(app)
    app.connect("builder-inited", _add_static)
    from .. import __version__

    return {
        "version": __version__,
        "env_version": 2,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }


def _add_static(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.config.html_static_path.append(str(STATIC))
        app.add_css_file("snipcheck.css")
