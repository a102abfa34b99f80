# A tiny project for the browser tests: captured output that looks like markup.
extensions = ["myst_nb", "sphinx_copybutton", "snipcheck"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
copybutton_selector = "div.snipcheck-code div.highlight pre"
copybutton_exclude = ".linenos, .gp, .go"
# This snippet does not use torch: the (default) fork runner need not preload it.
snipcheck_preload = []
