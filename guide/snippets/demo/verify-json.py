import json

from _demo import CONF, redact, snipcheck, write

write({
    "conf.py": CONF,
    "index.rst": "Page\n====\n\n.. snippet:: area\n\n.. snippet:: greeting\n",
    "snippets/area.py": 'print("area:", 3 * 4)\n',
    "snippets/greeting.py": 'print("hello")\n',
})
snipcheck("record", "-q")
write({"snippets/greeting.py": 'print("hello, world")\n'})
snipcheck("verify", "-q", "--json", "report.json")

with open("project/report.json", encoding="utf-8") as f:
    report = json.load(f)
# this machine's versions, and a hash of the sources (it differs with every path)
report["stamp"] = {key: value and "..." for key, value in report["stamp"].items()}
report["fingerprint"] = "..."
print(redact(json.dumps(report, indent=1, ensure_ascii=False)))
