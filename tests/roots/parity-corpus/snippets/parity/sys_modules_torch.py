import atexit
import sys
import warnings

before = set(sys.modules)
import torch  # noqa: E402

added = sorted(set(sys.modules) - before)
print(len(added), added[:5], added[-5:])
print("torch._dynamo" in sys.modules, "numpy" in sys.modules)
print(len(warnings.filters), warnings.filters[:2])
print(atexit._ncallbacks())
