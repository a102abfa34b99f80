from _demo import CONF, pytest, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n\n.. snippet:: greeting\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
    "snippets/greeting.py": 'print("hello")\n',
})
snipcheck("record", "-q")
pytest("--snipcheck", "-q", ".")

write({"snippets/greeting.py": 'print("hello, world")\n'})
pytest("--snipcheck", "-q", "--no-header", "-rN", ".")
pytest("--snipcheck", "-q", "-k", "area", ".")
