"""A run's last step before the snippet: no capability left, for good (Linux).

:func:`seal` drops every capability of the calling process (the bounding,
ambient, effective, permitted and inheritable sets) and sets
``PR_SET_NO_NEW_PRIVS``, as bubblewrap does once its mounts are made: the
process (root or not) then cannot mount, unmount, enter or make namespaces,
cannot ptrace or open the memory of a process that keeps its capabilities
(its supervisor, the fork server's slot that forks every later run), cannot
raise a hard resource limit, and no program it executes gets a capability
(a set-user-id one included).  The uid stays what it was.

The bounding set takes one ``prctl`` per capability (41): a fork server's
slot empties its own once, clears its ambient set and sets
``PR_SET_NO_NEW_PRIVS`` on itself (:func:`prepare_slot`: a slot never
executes a program, so it loses nothing and keeps its effective
capabilities), and each run it forks inherits all three and only empties
its effective, permitted and inheritable sets (one ``capset``).

Only the standard library may be used here, and nothing may be imported once
a run has been forked (see ``_snipcheck_mounts``).
"""

import ctypes
import os

PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
EINVAL, ENOSYS = 22, 38


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_LIBC = ctypes.CDLL(None, use_errno=True)
_prctl = _LIBC.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_capset = getattr(_LIBC, "capset", None)
_HEADER, _DATA = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
#: capset(2)'s arguments for no capability at all, made here once (a forked run only passes them).
_NONE = (ctypes.byref(_HEADER), _DATA)
#: ``slot``: whether :func:`prepare_slot` ran in this process (or the one it was forked from).
_state = {"slot": False, "last": None}


def _fail(what):  # type: ignore[no-untyped-def]
    err = ctypes.get_errno()
    raise OSError(err, f"{what}: {os.strerror(err)}")


def _last_cap():  # type: ignore[no-untyped-def]
    if _state["last"] is None:
        try:
            with open("/proc/sys/kernel/cap_last_cap") as f:
                _state["last"] = int(f.read())
        except (OSError, ValueError):
            _state["last"] = 63  # a number the kernel does not know fails with EINVAL: skipped
    return _state["last"]


def drop_bounding():  # type: ignore[no-untyped-def]
    """Empty this process's capability bounding set (its other sets stay as they are).

    :raises OSError: naming the capability the kernel refused to drop.
    """
    for cap in range(_last_cap() + 1):
        if _prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != EINVAL:
            _fail(f"prctl(PR_CAPBSET_DROP, {cap})")


def _no_new_privileges():  # type: ignore[no-untyped-def]
    if _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 and ctypes.get_errno() != EINVAL:  # before 4.3
        _fail("prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    if _prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("prctl(PR_SET_NO_NEW_PRIVS)")


def prepare_slot():  # type: ignore[no-untyped-def]
    """In a fork server's slot: do once what every run it forks inherits
    (see the module docstring), so that :func:`seal` is one call there.

    :raises OSError: naming the step the kernel refused (each run then does it all).
    """
    drop_bounding()
    _no_new_privileges()
    _state["slot"] = True


def seal():  # type: ignore[no-untyped-def]
    """Drop every capability of this process and of what it executes, for
    good, and set ``PR_SET_NO_NEW_PRIVS`` (see the module docstring).

    :raises OSError: naming the step the kernel refused.
    """
    if not _state["slot"]:
        drop_bounding()
        _no_new_privileges()
    if _capset is None:
        raise OSError(ENOSYS, "no capset(2) in this libc")
    if _capset(*_NONE) != 0:
        _fail("capset")
