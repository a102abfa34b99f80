import os
import sys

sys.stdout.write("x" * 3_000_000 + "\n")
print(len("y" * 5_000_000), file=sys.stderr)
print("é" * 700_000)
os.write(1, b"z" * 1_000_000 + b"\n")
print("done")
