import os
import subprocess
import sys

# The run's own hash secret is fixed (DIFFERENCES["hash seed"]); what it starts hashes at random, as in plain python.
print(os.environ.get("PYTHONHASHSEED"))
code = "import os, sys; print(sys.flags.hash_randomization, os.environ.get('PYTHONHASHSEED'))"
subprocess.run([sys.executable, "-c", code], check=True)
hashes = {subprocess.run([sys.executable, "-c", "print(hash('x'))"], capture_output=True).stdout for _ in range(3)}
print("children hash alike:", len(hashes) == 1)
