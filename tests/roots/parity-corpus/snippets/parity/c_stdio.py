import ctypes

libc = ctypes.CDLL(None)
libc.printf(b"from C printf: buffered until exit, since stdout is not a terminal\n")
print("from Python, unbuffered", flush=True)
