import ctypes
print("about to crash")
ctypes.string_at(0)
