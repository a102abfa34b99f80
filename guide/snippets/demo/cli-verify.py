from _demo import CONF, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n\n.. snippet:: greeting\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
    "snippets/greeting.py": 'print("hello")\n',
})
snipcheck("record", "-q")
snipcheck("verify")

write({"snippets/greeting.py": 'print("hello, world")\n'})
snipcheck("verify", "--json", "report.json", "--html", "report.html")
snipcheck("verify", "--shard", "3/2")
