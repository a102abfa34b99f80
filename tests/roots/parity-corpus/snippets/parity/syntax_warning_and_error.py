import warnings

warnings.simplefilter("always")
print(1 == 1)
compile("x = ", "<string>", "exec")
