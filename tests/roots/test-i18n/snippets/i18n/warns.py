import warnings

warnings.warn("careful")
print("done")
