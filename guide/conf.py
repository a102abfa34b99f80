"""Sphinx configuration of snipcheck's English guide (pages in guide/, snippets in guide/snippets/).

A project of its own, built by the same tool it documents: every example on
these pages that shows an output is a snippet, run at build time, and the
build fails when a stated output no longer holds.  It loads only what an
outside project loads (myst-parser and snipcheck, no chapter sub-extension)
and needs no torch.

    sphinx-build -W -b html -d _build/guide-doctrees guide _build/guide   (or: nox -s guide)
    python -m snipcheck -c guide record [ID...]                           fill stated outputs
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx

project = "snipcheck"
author = "snipcheck"
copyright = "2026, snipcheck"
language = "en"

extensions = ["myst_parser", "snipcheck"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "snippets"]
root_doc = "index"

html_theme = "alabaster"
html_title = "snipcheck guide"
html_theme_options = {
    "description": "Every output on the page is real.",
    "fixed_sidebar": True,
    "page_width": "1160px",  # command transcripts and JSON reports are wide
    "sidebar_width": "230px",
}
html_last_updated_fmt = None
# One language per site: English here (the Chinese chapter is the other project).
html_search_language = "en"

# --- snipcheck -------------------------------------------------------------
snipcheck_snippets_dir = "snippets"
# The guide's examples are plain Python: the fork runner's server has nothing
# heavy to import first (the default preloads torch).
snipcheck_preload = []
snipcheck_timeout = 120.0
# Hints in warnings say how this repository records the guide's outputs.
snipcheck_record_command = "python -m snipcheck -c guide record {id}"

# myst-parser logs its whole parser configuration at the default verbosity;
# that is not build output (`sphinx-build -v` shows it again).
_CHATTY_LOGGERS = ["sphinx.myst_parser.sphinx_ext.main", "sphinx.sphinx.util.fileutil"]


def setup(app: Sphinx) -> None:
    """Object types of the reference page: a tag key, a warning subtype, a CLI
    command and a normalizer each get an anchor, an index entry and a role
    (``:tagkey:`expect```) to link to them."""
    app.add_object_type("tagkey", "tagkey", indextemplate="pair: %s; tag key")
    app.add_object_type("subtype", "subtype", indextemplate="pair: %s; warning subtype")
    app.add_object_type("command", "command", indextemplate="pair: snipcheck %s; command")
    app.add_object_type("normalizer", "normalizer", indextemplate="pair: %s; normalizer")
    if app.verbosity == 0:
        for name in _CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
