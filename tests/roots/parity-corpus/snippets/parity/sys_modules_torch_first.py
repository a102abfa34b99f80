import torch  # first: the fork runner's slot may have imported it already (warm_imports)
import atexit
import sys
import warnings

print(len(sys.modules), sorted(sys.modules)[:5], sorted(sys.modules)[-5:])
print(list(sys.modules)[:3], list(sys.modules)[-3:])
print("torch._dynamo" in sys.modules, "numpy" in sys.modules)
print(len(warnings.filters), warnings.filters[:2])
print(atexit._ncallbacks())
print(torch.rand(2).shape, torch.initial_seed() > 0)
