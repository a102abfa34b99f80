from _demo import CONF, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: hello\n\n.. snippet:: fails\n",
    "snippets/hello.py": 'import sys\nprint("to stdout")\nprint("to stderr", file=sys.stderr)\n',
    "snippets/fails.py": "print(1 / 0)\n",
})
snipcheck("run", "hello", "fails")
