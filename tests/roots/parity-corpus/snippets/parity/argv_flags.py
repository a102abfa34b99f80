import os
import sys

print(sys.argv, sys.orig_argv[1:], os.path.basename(sys.orig_argv[0]) == os.path.basename(sys.executable))
print(sys.flags)
print(sys.path[0], [p for p in sys.path[1:] if "bootstrap" in p])
print(sys.executable == sys.orig_argv[0] or os.path.realpath(sys.executable) == os.path.realpath(sys.orig_argv[0]))
