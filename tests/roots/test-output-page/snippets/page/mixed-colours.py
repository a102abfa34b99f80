import sys
print("\x1b[32mok\x1b[0m ", end="", flush=True); print("\x1b[31mfailed\x1b[0m", file=sys.stderr)
