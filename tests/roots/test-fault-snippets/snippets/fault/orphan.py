import subprocess
PIDFILE = None  # the test puts an absolute path here
child = subprocess.Popen(
    ["sleep", "60"], cwd="/",  # not in the run directory, which is removed after the run
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
if PIDFILE:
    with open(PIDFILE, "w") as f:
        f.write(str(child.pid))
print("left a child behind")
