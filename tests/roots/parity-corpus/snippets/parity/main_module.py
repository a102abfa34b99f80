import sys

print(list(globals()))
print(__name__, __doc__, __package__, __spec__, __cached__, __annotations__)
print(type(__loader__).__name__, __loader__.name, __builtins__ is sys.modules["builtins"])
print(__file__.endswith("snippets/parity/main_module.py"), sys.modules["__main__"].__dict__ is globals())
print(sys._getframe().f_code.co_name, locals() is globals())
x: int = 1
print(__annotations__)
