import sys

try:
    raise ValueError("first")
finally:
    print("finally runs")
    sys.exit(4)
