# A project written in English (language unset, so "en"), with every kind of
# label snipcheck puts on a page: stdout, a warning and a traceback on
# stderr, a drift box, a snippet not run here, a claim, refuted-claim badges,
# the environment box and the reading aids.  The tests build it as it is and
# with language = "zh_CN".
extensions = ["myst_nb", "snipcheck", "snipcheck_chapter.reading"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
snipcheck_preload = []  # these snippets do not use torch
