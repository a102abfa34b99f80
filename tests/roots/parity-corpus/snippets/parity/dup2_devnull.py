import os
import sys
import warnings

null = os.open(os.devnull, os.O_WRONLY)
os.dup2(null, 1)
print("hidden")
os.write(1, b"hidden too\n")
print("stderr still shows", file=sys.stderr)
warnings.warn("a visible warning")
os.dup2(null, 2)
warnings.warn("a lost warning")
print("lost", file=sys.stderr)
raise RuntimeError("a lost traceback")
