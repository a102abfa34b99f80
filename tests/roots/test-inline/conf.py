# Snippets whose code is written in the page (snippet-code), in MyST and reStructuredText.
extensions = ["myst_parser", "snipcheck"]
exclude_patterns = ["_build"]
snipcheck_preload = []
