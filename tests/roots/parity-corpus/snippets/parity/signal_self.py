import os
import signal


def handler(signum, frame):
    print("handled", signal.Signals(signum).name, frame.f_code.co_name)


signal.signal(signal.SIGUSR1, handler)
os.kill(os.getpid(), signal.SIGUSR1)
print("now SIGTERM, default action", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
print("never")
