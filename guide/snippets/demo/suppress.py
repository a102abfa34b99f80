from _demo import CONF, snipcheck, sphinx_build, write

write({
    "conf.py": CONF + "snipcheck_timeout = -5\n",
    "index.rst": "Page\n====\n\n.. snippet:: hello\n",
    "snippets/hello.py": 'print("hello")\n',
})
snipcheck("record", "-q")
sphinx_build("-W")  # an invalid value is a warning, so -W fails

write({"conf.py": CONF + 'snipcheck_timeout = -5\nsuppress_warnings = ["snipcheck.config"]\n'})
sphinx_build("-W")  # that subtype silenced: the default (60 s) is used, quietly
