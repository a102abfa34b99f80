import csv

with open("data/prices.csv", newline="") as f:
    rows = list(csv.DictReader(f))
total = sum(float(r["price"]) for r in rows)
print(len(rows), "items, total", round(total, 2))

# /// snipcheck
# depends = ["data/prices.csv"]
# ///
