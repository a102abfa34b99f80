import subprocess, sys
PIDFILE = None  # the test puts an absolute path here
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(60)"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
if PIDFILE:
    with open(PIDFILE, "w") as f:
        f.write(str(child.pid))
print("left a child behind")
