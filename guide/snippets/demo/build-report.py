import json

from _demo import CONF, redact, snipcheck, sphinx_build, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n\n.. snippet:: greeting\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
    "snippets/greeting.py": 'print("hello")\n',
})
snipcheck("record", "-q")
write({"snippets/greeting.py": 'print("hello, world")\n'})
sphinx_build()

with open("project/_build/doctrees/snipcheck-report/report.json", encoding="utf-8") as f:
    report = json.load(f)
# this machine's versions, and how long each run took
report["stamp"] = {key: value and "..." for key, value in report["stamp"].items()}
for snippet in report["snippets"]:
    snippet["duration"] = "..."
for timing in (report["execution"], *report["execution"]["rows"]):
    for key in ("wall", "runs", "seconds"):
        if key in timing:
            timing[key] = "..."
print(redact(json.dumps(report, indent=1, ensure_ascii=False)))
