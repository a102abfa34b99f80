grad = 0.25
print("grad =", grad)
print("version 0 -> 1")
