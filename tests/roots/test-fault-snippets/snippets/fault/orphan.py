import subprocess
PIDFILE = None  # the test puts an absolute path here
child = subprocess.Popen(
    ["sleep", "60"], cwd="/",  # not in the run directory, which is removed after the run
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
if PIDFILE:
    # The child's pid as the test sees it (the run may be in a PID namespace of its own).
    with open("/proc/self/task/" + open("/proc/self/stat").read().split()[0] + "/children") as tasks:
        host_pid = tasks.read().split()[0]
    with open(PIDFILE, "w") as f:
        f.write(host_pid)
print("left a child behind")
