import signal

for sig in signal.Signals:
    if sig in (signal.SIGKILL, signal.SIGSTOP):
        continue
    handler = signal.getsignal(sig)
    if handler is not signal.SIG_DFL:
        print(sig.name, handler)
print("blocked:", sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
print("wakeup fd:", signal.set_wakeup_fd(-1))
