import sys


def hook(etype, value, tb):
    print("custom part", file=sys.stderr)
    sys.__excepthook__(etype, value, tb)


sys.excepthook = hook
print(sys.__excepthook__)


def fail():
    raise LookupError("through the default hook")


fail()
