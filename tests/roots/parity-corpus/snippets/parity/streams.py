import sys

for s in (sys.stdout, sys.stderr):
    print(s, s.buffer, type(s.buffer), s.encoding, s.errors, s.line_buffering, s.write_through)
    print(s.isatty(), s.fileno(), s.buffer.name, s.buffer.mode, s.buffer.closefd, s.newlines)
print(sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__, sys.stdin)
