# Every way a page can place a snippet: reStructuredText and MyST (backtick,
# tilde and colon fences), nested in tab sets and dropdowns, in included files.
extensions = ["myst_parser", "sphinx_design", "snipcheck"]
exclude_patterns = ["_build", "parts"]
myst_enable_extensions = ["colon_fence"]
snipcheck_preload = []
