from _demo import CONF, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: a\n\n.. snippet:: b\n\n.. snippet:: c\n",
    "snippets/a.py": 'print("a")\n',
    "snippets/b.py": 'print("b")\n',
    "snippets/c.py": 'print("c")\n',
})
snipcheck("record", "-q")
snipcheck("verify", "-q", "--shard", "1/2", "--json", "s1.json")
snipcheck("verify", "-q", "--shard", "2/2", "--json", "s2.json")
snipcheck("merge", "s1.json")  # a shard is missing
snipcheck("merge", "s1.json", "s2.json", "--json", "all.json")
