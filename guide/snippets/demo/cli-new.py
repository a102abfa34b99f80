from _demo import CONF, show, snipcheck, write

write({"conf.py": CONF, "index.rst": "Page\n====\n"})
snipcheck("new", "tutorial/first-step", "--expect", "ValueError")
show("snippets/tutorial/first-step.py")
