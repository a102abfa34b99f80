import sys
for i in range(0, 101, 25):
    sys.stdout.write(f"\rprogress {i:3d}%")
    sys.stdout.flush()
print()
for i in range(3):
    print(f"\rstep {i + 1}/3", end="", file=sys.stderr)
print(file=sys.stderr)
print("done")
