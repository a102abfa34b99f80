values = [1, 2, 3]
print("sum:", sum(values))
print("belief holds:", sum(values) == 7)
