from _demo import CONF, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: a\n\n.. snippet:: b\n\n.. snippet:: c\n",
    "snippets/a.py": 'print("a")\n',
    "snippets/b.py": 'print("b")\n',
    "snippets/c.py": 'print("c")\n',
})
snipcheck("record", "-q")  # every snippet runs once: the result cache holds them
snipcheck("cache", "save", "--ci-cache", "ci-cache")  # what a green run on the default branch saves
write({"snippets/b.py": 'print("b")  # said differently\n'})  # a pull request changes one snippet
snipcheck("cache", "plan", "--ci-cache", "ci-cache", "--shards", "2")
