extensions = ["myst_nb", "snipcheck.chapter.cjk"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
