"""The thin Sphinx layer of snipcheck: config, directives, nodes, collector, output.

Everything here may import Sphinx and docutils; nothing in the core may import
this package.  Features that only the chapter of this repository uses
(reading aids, the Chinese search fixes, the versions page, CJK line joining,
the theme's translations) are opt-in sub-extensions in :mod:`snipcheck_chapter`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snipcheck.shard import key as shard_key
from snipcheck.sphinxext import (
    ansi,
    build_folders,
    chain,
    code,
    collector,
    config,
    dependencies,
    differences,
    directive,
    environment_box,
    fill,
    gc_freeze,
    i18n,
    index,
    index_builder,
    notebook,
    pages,
    results,
    script,
    state,
    summary,
    text_notebook,
)
from snipcheck.sphinxext import claim_role as claims
from snipcheck.sphinxext import figure_nodes as figures

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

STATIC = Path(__file__).parent.parent / "static"


def setup(app: Sphinx) -> dict[str, Any]:
    """Register snipcheck with Sphinx (``extensions = ["snipcheck"]``)."""
    # A build never signs; one in a job that holds the shards' key runs snippets:
    # keep the key out of every process it starts (see snipcheck.shard.key).
    with contextlib.suppress(shard_key.ShardKeyError):
        shard_key.take_key()
    i18n.register(app)
    config.register(app)
    build_folders.register(app)
    state.register(app)
    gc_freeze.register(app)
    collector.register(app)
    index.register(app)
    index_builder.register(app)
    pages.register(app)
    dependencies.register(app)
    directive.register(app)
    chain.register(app)
    code.register(app)
    script.register(app)
    notebook.register(app)
    text_notebook.register(app)
    results.register(app)
    fill.register(app)
    figures.register(app)
    environment_box.register(app)
    differences.register(app)
    summary.register(app)
    claims.register(app)
    ansi.register(app)
    app.connect("config-inited", _add_static)
    from snipcheck.version import __version__

    return {
        "version": __version__,
        # 9: text notebooks place their cells, a notebook cell's line is its number;
        # 8: code blocks of script cells know what they display; 7: placements know their file's digest; 6: chains (placements and snippets know theirs);
        # 5: labels are document text (translated)
        "env_version": 9,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }


def _add_static(app: Sphinx, config: Config) -> None:
    # At config-inited, before Sphinx compares the configuration with the
    # pickled one, so a rebuild sees no change.  A new list: appending would
    # change the option's default list, shared by every Sphinx app of the
    # process (the tests run many).
    if str(STATIC) not in config.html_static_path:
        config.html_static_path = [*config.html_static_path, str(STATIC)]
    app.add_css_file("snipcheck.css")
    app.add_js_file("snipcheck.js", loading_method="defer")  # wide blocks scroll from the keyboard too
