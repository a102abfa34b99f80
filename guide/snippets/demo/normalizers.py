from _demo import CONF, snipcheck, write

write({"conf.py": CONF})
snipcheck("normalizers")
