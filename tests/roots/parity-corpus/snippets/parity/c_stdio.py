import ctypes
import sys

libc = ctypes.CDLL(None)
libc.printf(b"from C printf: line-buffered, as on a terminal\n")
print("from Python", flush=True)
libc.printf(b"a partial C line, shown at exit ")
print("from Python again", file=sys.stderr)
