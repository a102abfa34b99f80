import sys

print(sys.getswitchinterval(), sys.getdefaultencoding(), sys.get_int_max_str_digits())
print(sys.gettrace(), sys.getprofile(), sys.displayhook, sys.breakpointhook)
print(sys.unraisablehook, sys.excepthook is sys.__excepthook__)
