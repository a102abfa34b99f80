import atexit
import sys

# A terminal shows stdout's last partial line when the interpreter flushes it
# at exit: after what an atexit handler writes to stderr.
atexit.register(lambda: sys.stderr.write("stderr, from an atexit handler\n"))
print("a whole line")
print("stdout's partial line, flushed at exit", end="")
