# Tutorial scripts placed whole (snippet-script): a sphinx-gallery script in
# reStructuredText, a jupytext percent script in MyST.
project = "scripts"
extensions = ["myst_parser", "snipcheck"]
exclude_patterns = ["_build"]
snipcheck_preload = []
