import atexit
import os

atexit.register(print, "never: os._exit skips atexit")
print("before", flush=True)
os._exit(7)
