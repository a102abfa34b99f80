import sys


def hook(etype, value, tb):
    print(f"hook saw {etype.__name__}: {value}")
    print("hook on stderr", file=sys.stderr)


sys.excepthook = hook
print("excepthook is __excepthook__:", sys.excepthook is sys.__excepthook__)
raise ValueError("handled by the hook")
