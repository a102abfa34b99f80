"""Sphinx configuration of the chapter (sources in docs/, snippets in snippets/)."""

import logging
import sys
from pathlib import Path

import jieba

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
    "snipcheck.chapter.reading",  # {reading-time} and {resume-point}
    "snipcheck.chapter.search_zh",  # Chinese search: section entries, terms with symbols, one result a page
    "snipcheck.chapter.versions",  # {snipcheck-versions}: the page generated from verify reports
    "snipcheck.chapter.cjk",  # no stray space where a line of Chinese breaks in the source
    "snipcheck.chapter.furo",  # Furo's labels in Chinese; its "Back to top" pill off the code
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
    "rust-thread-ids",
]
# The fork runner's server imports these once; every snippet runs in a fork of
# it.  torch._dynamo is what the first optimizer step imports (about 1.4 s);
# preloading it spares each optimizer snippet that cost.
snipcheck_preload = ["torch", "torch._dynamo"]
# Features this machine has beyond what snipcheck can detect (cuda and cargo
# are detected).  burn would need a crate registry: not here.
snipcheck_provides = []
