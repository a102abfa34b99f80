# logging's fork safety in a run as in a plain one: the set of handlers whose
# locks logging renews in a forked child is logging's own (the fork runner
# hides it from the at-fork handler while it forks a run), it holds the
# handlers made before and after, and a child forked while another thread
# holds a handler's lock can still log.
import logging
import os
import sys
import threading
import torch  # noqa: F401 - logging's handlers of the preload, made before

handlers = logging._at_fork_reinit_lock_weakset
print(type(handlers).__name__, len(handlers) > 0 if "torch" in sys.modules else None)
mine = logging.StreamHandler(sys.stdout)
mine.setFormatter(logging.Formatter("%(name)s %(message)s"))
print(mine in logging._at_fork_reinit_lock_weakset, logging._at_fork_reinit_lock_weakset is handlers)
log = logging.getLogger("parity")
log.addHandler(mine)
log.propagate = False
log.warning("before the fork")
sys.stdout.flush()

held = threading.Event()
release = threading.Event()


def hold() -> None:
    with mine.lock:
        held.set()
        release.wait(10)


thread = threading.Thread(target=hold)
thread.start()
held.wait(10)
pid = os.fork()
if pid == 0:  # the lock was held by a thread the child does not have: logging renewed it
    log.warning("in the child")
    sys.stdout.flush()
    os._exit(0)
_, status = os.waitpid(pid, 0)
release.set()
thread.join()
log.warning("child ended with %d", os.waitstatus_to_exitcode(status))
