extensions = ["myst_nb", "snipcheck_chapter.reading"]  # loads snipcheck too
language = "zh_CN"  # a Chinese page: the reading aids speak Chinese
nb_execution_mode = "off"
exclude_patterns = ["_build"]
# This snippet does not use torch: the (default) fork runner need not preload it.
snipcheck_preload = []
