"""A run's last step before the snippet: no capability left, no keyring, for good (Linux).

:func:`seal` drops every capability of the calling process (the bounding,
ambient, effective, permitted and inheritable sets) and sets
``PR_SET_NO_NEW_PRIVS``, as bubblewrap does once its mounts are made: the
process (root or not) then cannot mount, unmount, enter or make namespaces,
cannot ptrace or open the memory of a process that keeps its capabilities
(its supervisor, the fork server's slot that forks every later run), cannot
raise a hard resource limit, and no program it executes gets a capability
(a set-user-id one included).  The uid stays what it was.

Where asked (``keys``), it also installs a seccomp filter under which
``add_key``, ``request_key`` and ``keyctl`` fail with ``EPERM`` (Docker's
default profile refuses them too): the kernel's keyrings have no namespace,
and uid 0 keeps its user keyring, so a key a run added there would
outlive the run, and later runs would find it (:func:`keyring_filter`).

The bounding set takes one ``prctl`` per capability (41): a fork server's
slot empties its own once, clears its ambient set and sets
``PR_SET_NO_NEW_PRIVS`` on itself (:func:`prepare_slot`: a slot never
executes a program, so it loses nothing and keeps its effective
capabilities), installs the filter, and each run it forks inherits all
of it and only empties its effective, permitted and inheritable sets (one
``capset``).

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
#: ``slot``: whether :func:`prepare_slot` ran in this process (or the one it was forked from);
#: ``keys``: whether the keyring filter is on in it.
_state = {"slot": False, "last": None, "keys": False}

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
#: add_key, request_key and keyctl by the architecture the kernel reports a
#: call under (``AUDIT_ARCH_*``: a 64-bit x86 process can also make i386
#: calls, and x32 ones, numbered with bit 30 set).
KEY_CALLS = {
    0xC000003E: (248, 249, 250),  # x86_64, x32
    0x40000003: (286, 287, 288),  # i386
    0xC00000B7: (217, 218, 219),  # aarch64
    0x40000028: (309, 310, 311),  # arm
    0xC00000F3: (217, 218, 219),  # riscv64
}
#: The machines whose own calls :data:`KEY_CALLS` knows (``os.uname().machine``).
MACHINES = {"x86_64": 0xC000003E, "i686": 0x40000003, "aarch64": 0xC00000B7, "armv7l": 0x40000028, "riscv64": 0xC00000F3}
_X32 = 0x40000000
_LD, _AND, _JEQ, _RET = 0x20, 0x54, 0x15, 0x06  # BPF_LD|W|ABS, BPF_ALU|AND|K, BPF_JMP|JEQ|K, BPF_RET|K
_ALLOW, _EPERM = 0x7FFF0000, 0x00050001  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def _keyring_program():  # type: ignore[no-untyped-def]
    """The filter's classic BPF: for each architecture, its three calls fail with EPERM."""
    code = [(_LD, 0, 0, 4)]  # seccomp_data.arch
    for arch, calls in KEY_CALLS.items():
        block = [(_LD, 0, 0, 0)]  # seccomp_data.nr
        if arch == 0xC000003E:
            block.append((_AND, 0, 0, ~_X32 & 0xFFFFFFFF))
        # each call jumps over the calls after it and the ALLOW, to the EPERM
        block += [(_JEQ, len(calls) - i, 0, call) for i, call in enumerate(calls)]
        block += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _EPERM)]
        code.append((_JEQ, 0, len(block), arch))
        code.extend(block)
    code.append((_RET, 0, 0, _ALLOW))
    instructions = (_Instruction * len(code))(*(_Instruction(*op) for op in code))
    return instructions, _Program(len(code), instructions)


#: Made here once, as _NONE.
_KEYRING = _keyring_program()


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


def keyring_filter():  # type: ignore[no-untyped-def]
    """Make ``add_key``, ``request_key`` and ``keyctl`` fail with EPERM in
    this process and every one it starts, for good (``PR_SET_NO_NEW_PRIVS``
    must be set).

    :raises OSError: naming the step the kernel refused, or where
        :data:`KEY_CALLS` does not know this machine's calls.
    """
    machine = os.uname().machine
    if machine not in MACHINES:
        raise OSError(ENOSYS, f"the keyring calls of {machine} are not known here")
    if _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(_KEYRING[1]), 0, 0) != 0:
        _fail("prctl(PR_SET_SECCOMP)")
    _state["keys"] = True


def keyctl_works():  # type: ignore[no-untyped-def]
    """Whether ``keyctl(KEYCTL_GET_KEYRING_ID, session keyring)`` works here (for the probe)."""
    call = KEY_CALLS.get(MACHINES.get(os.uname().machine, 0), (0, 0, -1))[2]
    return call >= 0 and _LIBC.syscall(call, 0, ctypes.c_int(-3), 0) >= 0


def prepare_slot(keys=False):  # type: ignore[no-untyped-def]
    """In a fork server's slot: do once what every run it forks inherits
    (see the module docstring), so that :func:`seal` is one call there.

    :raises OSError: naming the step the kernel refused (each run then does it).
    """
    drop_bounding()
    _no_new_privileges()
    _state["slot"] = True
    if keys:
        keyring_filter()


def seal(keys=False):  # type: ignore[no-untyped-def]
    """Drop every capability of this process and of what it executes, for
    good, and set ``PR_SET_NO_NEW_PRIVS``; where ``keys``, with the keyring
    filter (see the module docstring).

    :raises OSError: naming the step the kernel refused.
    """
    if not _state["slot"]:
        drop_bounding()
        _no_new_privileges()
    if _capset is None:
        raise OSError(ENOSYS, "no capset(2) in this libc")
    if _capset(*_NONE) != 0:
        _fail("capset")
    if keys and not _state["keys"]:
        keyring_filter()
