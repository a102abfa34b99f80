# The script corpus of issue 36, placed in a reStructuredText page: every script a
# docs team may bring (sphinx-gallery and jupytext, every shape), built in CI.
project = "script corpus (rst)"
extensions = ["snipcheck"]
exclude_patterns = ["_build"]
snipcheck_snippets_dir = "../scripts"
snipcheck_preload = []
snipcheck_show_durations = False
