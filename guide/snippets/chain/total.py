total = sum(float(r["price"]) for r in rows)  # rows: from the cell before
print(f"total: {total:.2f}")
