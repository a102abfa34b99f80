# The script corpus of issue 36, placed in a MyST page: every script a
# docs team may bring (sphinx-gallery and jupytext, every shape), built in CI.
project = "script corpus (myst)"
extensions = ["myst_parser", "snipcheck"]
exclude_patterns = ["_build"]
snipcheck_snippets_dir = "../scripts"
snipcheck_preload = []
snipcheck_show_durations = False
