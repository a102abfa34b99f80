import os
import sys

sys.stderr.write("a whole line on stderr\n")
sys.stderr.write("a partial line on stderr, never shown")
print("stdout goes on")
os._exit(3)
