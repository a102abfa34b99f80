import os
import sys

# The binary layer buffers by the terminal's block size, whatever the newlines:
# what fits waits for the text layer's next flush; what does not goes out at once.
sys.stdout.buffer.write(b"small binary write, buffered\n")
print("stderr line 1", file=sys.stderr)
sys.stdout.buffer.write(b"x" * 3000 + b"\n")
print("stderr line 2", file=sys.stderr)
sys.stdout.write("y" * 10000)  # over the text layer's chunk: written at once, no newline
print("stderr line 3", file=sys.stderr)
os.write(1, b"fd 1 itself is never buffered\n")
print("end")
