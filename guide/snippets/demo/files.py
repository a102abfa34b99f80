import os

from _demo import CONF, snipcheck, sphinx_build, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
})
snipcheck("record", "-q")
write({"snippets/area.py": 'print("area:", 3 * 5)\n'})
sphinx_build()

# What snipcheck made in the doctree folder: the cache's folders (its entries
# are named by hashes), and the report folder whole.
for folder, dirs, files in sorted(os.walk("project/_build/doctrees")):
    dirs.sort()
    parts = folder.split("/")[3:]  # below project/_build/doctrees
    report = parts[:1] == ["snipcheck-report"]
    if parts and parts[0].startswith("snipcheck") and (len(parts) <= 2 or report):
        print("  " * (len(parts) - 1) + parts[-1] + "/")
        for name in sorted(files) if report else []:
            print("  " * len(parts) + name)
