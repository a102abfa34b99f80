import sys
import warnings
print("to stdout")
print("to stderr", file=sys.stderr)
warnings.warn("careful")
print("back to stdout")
