extensions = ["myst_parser", "snipcheck"]
exclude_patterns = ["_build"]
# These snippets do not use torch: the (default) fork runner need not preload it.
snipcheck_preload = []
# Several snippets drift on purpose (their problem boxes are under test).
snipcheck_fail_on_drift = False
