import os
import stat

fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
print(fds)  # the listing's own descriptor is among them, as in any process
print(stat.S_ISFIFO(os.fstat(0).st_mode), os.get_inheritable(0), os.get_blocking(1))
