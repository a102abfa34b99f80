from _demo import CONF, show, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n\n.. snippet:: greeting\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
    "snippets/greeting.py": 'print("hello")\n',
})
snipcheck("record", "-q")
write({"snippets/area.py": 'print("area:", 3 * 5)\n', "snippets/greeting.py": 'print("hello, world")\n'})

# The answers come from stdin here; at a terminal, you type them.
snipcheck("review", "--force", input="a\nq\n")  # accept the first, then quit: the review pauses
snipcheck("review", "--force", input="r\n")  # resume: reject the second; the first is written
show("index.rst")
