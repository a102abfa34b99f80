import os, time

MARKER = None  # the test puts the path of its inbox here (tests/load.py)
FLAG = None  # and an absolute path here
if MARKER:
    # This process as the test can find it: its PID namespace and its pid there (load.RUN_PID).
    import socket

    spec = os.readlink("/proc/self/ns/pid") + "/" + str(os.getpid())
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(spec.encode(), MARKER)
if FLAG and os.path.exists(FLAG):
    time.sleep(120)  # until the build is interrupted
print("woke up")
