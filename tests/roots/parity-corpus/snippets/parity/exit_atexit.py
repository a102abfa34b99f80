import atexit
import sys


def first():
    print("first registered, runs last")


def failing():
    raise RuntimeError("an atexit handler fails")


atexit.register(first)
atexit.register(failing)
atexit.register(print, "last registered, runs first", file=sys.stderr)
print("main done; handlers:", atexit._ncallbacks())
