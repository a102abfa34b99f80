extensions = ["myst_nb", "snipcheck_chapter.reading"]
language = "zh_CN"
nb_execution_mode = "off"
exclude_patterns = ["_build"]
