values = [1, 2, 3]
print("belief holds:", sum(values) == 6)
