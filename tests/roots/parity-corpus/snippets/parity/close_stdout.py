import os
import sys

print("before")
os.close(1)
print("after close(1): OSError on stderr", file=sys.stderr)
print("this raises")
