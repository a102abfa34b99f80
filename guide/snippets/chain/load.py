import csv

with open("data/prices.csv", encoding="utf-8") as f:
    rows = list(csv.DictReader(f))
print(len(rows), "rows:", ", ".join(r["item"] for r in rows))
# /// snipcheck
# depends = ["data/prices.csv"]
# seed = 3
# ///
