halves = [0.5, 1.5, 2.5, 3.5]
rounded = [round(x) for x in halves]
print("round:", dict(zip(halves, rounded)))
up = all(r == int(x) + 1 for x, r in zip(halves, rounded))
print("belief holds:", up)

# /// snipcheck
# refutes = "round() rounds every .5 up"
# ///
