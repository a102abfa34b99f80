# The CJK line joiner is independent of snipcheck's snippets; "snipcheck" is
# listed because every test root is a snipcheck project (tests/test_placements.py).
extensions = ["myst_nb", "snipcheck", "snipcheck_chapter.cjk"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
