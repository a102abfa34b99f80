import sys
print("\x1b[31mred\x1b[0m plain \x1b[1;32mbold green\x1b[0m")
print("\x1b[33mcoloured stderr\x1b[0m", file=sys.stderr)
