extensions = ["myst_nb", "snipcheck"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
snipcheck_preload = []
snipcheck_requirements = ["burn"]
