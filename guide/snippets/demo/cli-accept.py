from _demo import CONF, show, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n\n.. snippet:: greeting\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
    "snippets/greeting.py": 'print("hello")\n',
})
snipcheck("record", "-q")
write({"snippets/area.py": 'print("area:", 3 * 5)\n', "snippets/greeting.py": 'print("hello, world")\n'})

snipcheck("accept", "--dry-run")
snipcheck("accept", "--only", "greeting")  # not a git checkout: changes cannot be protected
snipcheck("accept", "--only", "greeting", "--force")
show("index.rst")
