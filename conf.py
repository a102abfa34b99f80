"""Sphinx configuration of the chapter (sources in docs/, snippets in snippets/)."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "PyTorch 就地操作与版本计数器"
author = "snipcheck"
copyright = "2026, snipcheck"
language = "zh_CN"

extensions = [
    "myst_nb",  # MyST Markdown pages (and notebooks); snipcheck runs the code, not myst-nb
    "sphinx_design",
    "sphinx_copybutton",
    "sphinx.ext.graphviz",  # diagrams drawn at build time, as local SVG files
    "snipcheck",
    # The chapter's own opt-in features (an outside project lists only "snipcheck"):
    "snipcheck_chapter.reading",  # {reading-time} and {resume-point}
    "snipcheck_chapter.search_zh",  # Chinese search: section entries, terms with symbols, one result a page
    "snipcheck_chapter.versions",  # {snipcheck-versions}: the page generated from verify reports
    "snipcheck_chapter.cjk",  # no stray space where a line of Chinese breaks in the source
    "snipcheck_chapter.furo",  # Furo's labels in Chinese; its "Back to top" pill off the code
]

exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3
nb_execution_mode = "off"

# Chinese full-text search (segmented with jieba).  The user dictionary keeps
# the chapter's terms (版本计数器, 就地操作, ...) whole, so searching for them
# finds them; it also spares Sphinx re-loading jieba's 5 MB default dictionary
# as a user dictionary on every build (about 2 s).
html_search_language = "zh"
html_search_options = {"dict": "docs/_search/userdict.txt"}
try:  # the chapter extra; `snipcheck new` and `merge` read this file without it
    import jieba
except ImportError:
    pass
else:
    jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict" chatter is not build output
# Diagrams: `dot` (Debian package graphviz) renders them to SVG files under
# _images/ at build time; the published page loads nothing from another host.
graphviz_output_format = "svg"
graphviz_dot_args = ["-Gfontname=Noto Sans CJK SC", "-Nfontname=Noto Sans CJK SC", "-Efontname=Noto Sans CJK SC"]
html_theme = "furo"
html_title = "PyTorch 就地操作与版本计数器"
html_last_updated_fmt = None

# Copy buttons on code only: never on output panels, never the line numbers.
copybutton_selector = (
    "div.snipcheck-code div.highlight pre, div.copyable div.highlight pre,"
    " div.highlight-bash div.highlight pre"  # the contributing page's commands
)
copybutton_exclude = ".linenos, .gp, .go"

# --- snipcheck -------------------------------------------------------------
snipcheck_snippets_dir = "snippets"
# The pages the command line (record, verify, accept) reads; the build is
# given them on its command line (`sphinx-build -c . docs _build/html`).
snipcheck_source_dir = "docs"
# Hints in warnings name this repository's way of recording an output.
snipcheck_record_command = "nox -s record -- {id}"
snipcheck_timeout = 60.0
snipcheck_output_limit = 1 << 20
# Normalizers applied to stated and actual output before comparing; see
# `python -m snipcheck normalizers` for what each one does.
snipcheck_normalizers = [
    "python-paths",
    "snippet-path",
    "torch-line-numbers",
    "torch-triggered-internally",
    "memory-addresses",
    "torch-log-prefix",
    "torch-no-cuda-runtime",
    "rust-thread-ids",
]
# The fork runner's server imports these once; every snippet runs in a fork of
# it.  torch._dynamo is what the first optimizer step imports (about 1.4 s);
# preloading it spares each optimizer snippet that cost.
snipcheck_preload = ["torch", "torch._dynamo"]
# The chapter's own requirement names, beyond what snipcheck detects (cuda,
# cargo, torch versions), each with the sentence the build summary gives
# where it is unmet: burn, the Rust crate, which needs a crate registry.
snipcheck_requirements = {
    "burn": (
        "burn is the deep-learning framework in Rust that docs/burn.md compares with PyTorch "
        "(https://burn.dev); its snippets need the burn crate, and cargo runs offline here with the "
        "standard library only (no crate can be downloaded), so the page shows their stated output "
        "marked as not run in this build"
    ),
}
# Which of them this machine has: burn would need a crate registry, not here.
snipcheck_provides = []


# --- quiet, cheap rebuilds (issue 12 §11) ------------------------------------
# Sphinx compares this build's configuration with the one pickled by the last
# build *before* the builder starts.  What is registered or appended later
# shows up as "The configuration has changed" on every rebuild:
# - furo registers its config value `pygments_dark_style` only when the theme
#   is loaded (builder init), so it is missing from the new configuration;
# - sphinx-design and sphinx-copybutton append their static folders to
#   `html_static_path` at builder-inited, so the pickled list is longer.
# So furo is loaded as an extension now (its setup, run early; the theme
# lookup then finds it loaded), the two folders are listed here, and the
# copies the two extensions append are dropped after they have run.
_LATE_STATIC = {"sphinx_design": "static", "sphinx_copybutton": "_static"}
html_static_path = [
    str(Path(spec.origin).parent / folder)
    for package, folder in _LATE_STATIC.items()
    # absent when conf.py is read without the chapter extra (snipcheck new, merge)
    if (spec := importlib.util.find_spec(package)) is not None and spec.origin
]

# Chatter at the default verbosity that is not build output: myst-parser's and
# myst-nb's whole parser configurations, myst-nb's jupyter-cache path (this
# chapter executes no notebook: nb_execution_mode = "off"), and Sphinx's
# "Writing evaluated template result to ..." for every templated static file.
# Their warnings still show; `sphinx-build -v` shows the rest again.
_CHATTY_LOGGERS = ["sphinx.myst_parser.sphinx_ext.main", "sphinx.myst_nb.sphinx_ext", "sphinx.sphinx.util.fileutil"]


def _drop_duplicate_static_paths(app: Sphinx) -> None:
    app.config.html_static_path = list(dict.fromkeys(app.config.html_static_path))


def setup(app: Sphinx) -> None:
    """Sphinx calls a conf.py's ``setup`` like an extension's, before config-inited."""
    app.setup_extension("furo")
    app.connect("builder-inited", _drop_duplicate_static_paths, priority=900)
    if app.verbosity == 0:
        for name in _CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
