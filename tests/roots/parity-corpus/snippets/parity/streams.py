import sys

# isatty() is False in a run (DIFFERENCES["stdout and stderr"]); the rest is a terminal's.
for s in (sys.stdout, sys.stderr):
    print(s, s.buffer, type(s.buffer), s.encoding, s.errors, s.line_buffering, s.write_through)
    print(s.fileno(), s.buffer.name, s.buffer.mode, s.buffer.raw.closefd, s.newlines, type(s.buffer.raw))
    print(s.buffer.__sizeof__())  # grows with the buffer's size
print(sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__, sys.stdin)
