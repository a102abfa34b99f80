import subprocess
import sys

from _demo import CONF, PROJECT, show, snipcheck, write

write({"conf.py": CONF, "index.rst": "Page\n====\n"})
snipcheck("new", "tutorial/cell", "--cell")
printed = subprocess.run(
    [sys.executable, "-m", "snipcheck", "new", "tutorial/cell", "--cell"],
    cwd=PROJECT, capture_output=True, text=True, check=True,
).stdout
cell = printed.split(":\n\n", 1)[1].split("\n\nthen fill in", 1)[0]
with open(PROJECT / "index.rst", "a", encoding="utf-8") as page:  # pasted into the page
    page.write("\n" + cell + "\n")
snipcheck("record", "tutorial/cell")
show("index.rst")
