from _demo import CONF, show, snipcheck, sphinx_build, write

write({
    "conf.py": CONF,
    "index.rst": """\
        Statistics
        ==========

        .. snippet:: mean
    """,
    "snippets/mean.py": """\
        from statistics import mean
        print("mean:", mean([1, 2, 3, 4]))
    """,
})
snipcheck("record")  # run it, write its output into the page
show("index.rst")
sphinx_build("-W")  # run it again and compare: it holds

# The code changes, the stated output does not:
# the build fails, with or without -W.
write({"snippets/mean.py": 'from statistics import mean\nprint("mean:", mean([1, 2, 3, 5]))\n'})
sphinx_build()
