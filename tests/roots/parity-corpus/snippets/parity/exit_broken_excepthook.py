import sys


def hook(etype, value, tb):
    raise RuntimeError("the hook itself fails")


sys.excepthook = hook
raise KeyError("original")
