extensions = ["myst_nb", "snipcheck"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
# These snippets do not use torch: the (default) fork runner need not preload it.
snipcheck_preload = []
