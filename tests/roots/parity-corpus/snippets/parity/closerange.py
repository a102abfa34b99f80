import os
import sys
import warnings

os.closerange(3, 4096)
print("printing still works")
warnings.warn("so do warnings")
print("stderr too", file=sys.stderr)
raise ValueError("and the traceback")
