import warnings

total = sum(range(1, 11))
print("sum of 1..10:", total)
warnings.warn("stderr is captured too, in the order it was written")
print("squares:", [n * n for n in range(5)])
