import signal

for sig in signal.Signals:
    if sig in (signal.SIGKILL, signal.SIGSTOP):
        continue
    handler = signal.getsignal(sig)
    if handler is not signal.SIG_DFL:
        print(sig.name, handler)
print("blocked:", sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
print("wakeup fd:", signal.set_wakeup_fd(-1))
# What the kernel holds, which also shows a handler installed in C (by a
# library the fork server preloaded, say), where signal.getsignal shows
# Python's own table.  Signals 32 and 33 are glibc's own (no program can set
# them through libc; glibc catches 33 once a thread has started, numpy's say).
GLIBC_OWN = (1 << 31) | (1 << 32)
with open("/proc/self/status") as status:
    for line in status.read().splitlines():
        name, _, mask = line.partition(":\t")
        if name in ("SigIgn", "SigCgt", "SigBlk"):
            print(name, f"{int(mask, 16) & ~GLIBC_OWN:016x}")
