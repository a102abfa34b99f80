import os, time

MARKER = None  # the test puts absolute paths here
FLAG = None
if MARKER:
    with open(MARKER + ".tmp", "w") as f:
        f.write(os.readlink("/proc/self"))  # the pid as the test sees it
    os.replace(MARKER + ".tmp", MARKER)
if FLAG and os.path.exists(FLAG):
    time.sleep(120)  # until the build is interrupted
print("woke up")
