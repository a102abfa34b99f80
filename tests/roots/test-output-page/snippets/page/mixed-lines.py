import sys
import warnings
print("first whole line")
for n in range(3):
    print(f"out{n} ", end="", flush=True)
    print(f"err{n}", file=sys.stderr, flush=True)
print("half ", end="", flush=True)
warnings.warn("careful")
print("last whole line", file=sys.stderr)
