import sys
print("a", end="", flush=True); print("b", end="", file=sys.stderr, flush=True); print("c")
