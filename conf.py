"""Sphinx configuration of the chapter (sources in docs/, snippets in snippets/)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "PyTorch 就地操作与版本计数器"
author = "snipcheck"
copyright = "2026, snipcheck"
language = "zh_CN"

extensions = [
    "myst_nb",  # MyST Markdown pages (and notebooks); snipcheck runs the code, not myst-nb
    "sphinx_design",
    "sphinx_copybutton",
    "snipcheck",
]

exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3
nb_execution_mode = "off"

# Chinese full-text search (segmented with jieba).
html_search_language = "zh"
html_theme = "furo"
html_title = "PyTorch 就地操作与版本计数器"
html_last_updated_fmt = None

# Copy buttons on code only: never on output panels, never the line numbers.
copybutton_selector = "div.snipcheck-code div.highlight pre, div.copyable div.highlight pre"
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
# Features this machine has beyond what snipcheck can detect (cuda and cargo
# are detected).  burn would need a crate registry: not here.
snipcheck_provides = []
