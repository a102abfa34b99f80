extensions = ["myst_nb", "snipcheck_chapter.versions"]  # loads snipcheck too
language = "zh_CN"
nb_execution_mode = "off"
exclude_patterns = ["_build"]
snipcheck_execute = False
