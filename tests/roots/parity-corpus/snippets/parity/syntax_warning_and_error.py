import warnings

warnings.simplefilter("always")
print(1 is 1)
compile("x = ", "<string>", "exec")
