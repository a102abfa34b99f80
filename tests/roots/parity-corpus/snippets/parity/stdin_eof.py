import sys

print(repr(sys.stdin.read()), sys.stdin.isatty(), sys.stdin.encoding)
try:
    input("prompt> ")
except EOFError:
    print("EOFError")
