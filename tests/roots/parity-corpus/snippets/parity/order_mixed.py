import os
import subprocess
import sys

for i in range(50):
    print(f"print {i}")
    os.write(1, f"fd1 {i}\n".encode())
    print(f"stderr {i}", file=sys.stderr)
    os.write(2, f"fd2 {i}\n".encode())
child = "import sys\nfor i in range(20):\n    print('child out', i, flush=True)\n    print('child err', i, file=sys.stderr, flush=True)\n"
subprocess.run([sys.executable, "-c", child], check=True)
print("end")
