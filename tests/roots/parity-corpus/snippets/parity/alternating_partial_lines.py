import sys

# Partial lines on stdout and stderr: each stream's buffer holds its own until a
# newline, so a terminal shows them grouped by line, not in the order written.
for i in range(3):
    print(f"out{i}", end=" ")
    print(f"err{i}", end=" ", file=sys.stderr)
print("| stdout's newline")
print("| stderr's newline", file=sys.stderr)
sys.stdout.write("carriage\rreturn flushes a line-buffered stream too")
sys.stderr.write("unflushed stderr at exit\n")
print()
