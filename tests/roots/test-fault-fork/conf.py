extensions = ["myst_nb", "snipcheck"]
nb_execution_mode = "off"
exclude_patterns = ["_build"]
# One warm parent that imported torch forks every run, one run at a time, in
# page order: what one snippet changes in its process must not reach the next.
snipcheck_runner = "fork"
snipcheck_preload = ["torch"]
snipcheck_jobs = 1
