import os
import sys

print(sys.argv, sys.orig_argv[1:], os.path.basename(sys.orig_argv[0]) == os.path.basename(sys.executable))
# every flag but hash_randomization, 0 in a run (DIFFERENCES["hash seed"])
print({name: getattr(sys.flags, name) for name in dir(sys.flags) if name[0] != "_" and name != "hash_randomization"
       and not callable(getattr(sys.flags, name))})
print(sys.path[0], [p for p in sys.path[1:] if "bootstrap" in p])
print(sys.executable == sys.orig_argv[0] or os.path.realpath(sys.executable) == os.path.realpath(sys.orig_argv[0]))
