import os
import sys

# Under C.UTF-8 a terminal run's stdout writes a lone surrogate as the byte it stands for
# (errors="surrogateescape"), stderr as an escape (backslashreplace).
print("\udcff")
print("name:", os.fsdecode(b"caf\xe9.txt"))
print("\udcff on stderr", file=sys.stderr)
print(sys.stdout.errors, sys.stderr.errors, sys.flags.utf8_mode, sys.getfilesystemencodeerrors())
try:
    print("\ud800")  # a surrogate no byte stands for: surrogateescape cannot write it either
except UnicodeEncodeError as exc:
    print("UnicodeEncodeError", exc.reason, file=sys.stderr)
