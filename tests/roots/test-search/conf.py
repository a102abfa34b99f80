extensions = ["myst_nb", "snipcheck_chapter.search_zh"]  # loads snipcheck too
nb_execution_mode = "off"
exclude_patterns = ["_build"]
language = "zh_CN"
html_search_language = "zh"
html_search_options = {"dict": "userdict.txt"}  # relative: made absolute against this directory
snipcheck_preload = []
