"""PID namespaces for snippet runs (Linux), and the switch that turns them off.

Every run has a supervisor process (``bootstrap/_snipcheck_supervise.py``).
Where the kernel allows it (running as root, or with ``CAP_SYS_ADMIN``), the
supervisor is created as process 1 of a new PID namespace: when it ends, the
kernel kills every process of the run, double-forked ``setsid`` daemons
included, and no process of the run can signal anything outside it.
:func:`new_pid_namespace` creates that namespace for the next process the
*calling thread* starts (``unshare(CLONE_NEWPID)`` changes only the calling
thread's ``pid_ns_for_children``) and switches the thread back afterwards
(``setns`` on the namespace it started in), so it is safe in the build's
worker threads and in the fork server.

Where it is not allowed (an unprivileged user; a container without
``CAP_SYS_ADMIN``; not Linux), runs fall back to a supervisor that is a child
subreaper (see the supervisor's docstring for what that still guarantees).
``SNIPCHECK_PID_NAMESPACE=0`` in the build's environment forces that fallback,
for tests and for comparison.

Pure core: standard library only (``ctypes`` for ``unshare``/``setns``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CLONE_NEWPID = 0x20000000
#: Set to ``0`` to run without PID namespaces even where they are allowed.
SWITCH = "SNIPCHECK_PID_NAMESPACE"

_lock = threading.Lock()
_state: dict[str, Any] = {"refused": None, "home": None, "libc": None}


def enabled() -> bool:
    """Whether runs should try PID namespaces (Linux, and not switched off)."""
    return sys.platform.startswith("linux") and os.environ.get(SWITCH, "1") != "0"


def refused() -> str | None:
    """Why the kernel refused a PID namespace in this process, or ``None``."""
    return _state["refused"]  # type: ignore[no-any-return]


def _setup() -> Any:
    with _lock:
        if _state["libc"] is None:
            import ctypes

            _state["libc"] = ctypes.CDLL(None, use_errno=True)
            _state["home"] = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        return _state["libc"]


@contextmanager
def new_pid_namespace(wanted: bool = True) -> Iterator[bool]:
    """While inside, the next process this thread starts is init of a new PID namespace.

    :param wanted: ``False`` skips the namespace (yields ``False``).
    :return: a context yielding whether the namespace was created; where the
        kernel refuses (``EPERM``, ``EINVAL``, ``ENOSYS``) it yields ``False``
        and later calls do not try again.
    :raises OSError: if the thread cannot be switched back to its own
        namespace afterwards (it then must not start more processes).
    """
    if not wanted or not enabled() or _state["refused"] is not None:
        yield False
        return
    try:
        libc = _setup()
    except (OSError, AttributeError) as exc:
        _state["refused"] = f"no unshare(2) here ({exc})"
        yield False
        return
    import ctypes

    if libc.unshare(CLONE_NEWPID) != 0:
        err = ctypes.get_errno()
        _state["refused"] = f"unshare(CLONE_NEWPID) failed: {os.strerror(err)}"
        yield False
        return
    try:
        yield True
    finally:
        if libc.setns(_state["home"], CLONE_NEWPID) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot switch back to the build's PID namespace: {os.strerror(err)}")
