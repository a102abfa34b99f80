extensions = ["myst_nb", "sphinx_design", "snipcheck"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence"]
# These snippets do not use torch: the (default) fork runner need not preload it.
snipcheck_preload = []
