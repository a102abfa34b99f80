"""The kernel's mount calls, through ctypes, for ``_snipcheck_mounts`` (Linux).

``mount(2)``, ``mount_setattr(2)`` (a mount and the mounts below it read-only
and without devices, or writable again, or with its devices usable again,
with a fallback to one remount each before Linux 5.12),
and the new mount API's ``open_tree(2)`` and ``move_mount(2)`` (a detached,
private copy of a folder's mounts, attached in another namespace).  Each
raises :class:`OSError` naming the call and its target.

Only the standard library may be used here, and nothing may be imported once
a run has been forked (see ``_snipcheck_mounts``).
"""

import ctypes
import os

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_ST_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC))
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NODEV = 1, 4
AT_FDCWD, AT_EMPTY_PATH, AT_RECURSIVE = -100, 0x1000, 0x8000
OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH = 1, 4
# The same on every architecture (added after the tables were unified).
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
ENOSYS = 38


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]  # fmt: skip


_LIBC = ctypes.CDLL(None, use_errno=True)
# Looked up here, once: a forked run only calls them.
_mount, _unshare, _setns, _syscall = _LIBC.mount, _LIBC.unshare, _LIBC.setns, _LIBC.syscall
_mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def _check(result, what):  # type: ignore[no-untyped-def]
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype, flags, data=None):  # type: ignore[no-untyped-def]
    """mount(2); ``str`` arguments, ``None`` for NULL.

    :raises OSError: naming the call and the target.
    """
    enc = [None if s is None else os.fsencode(s) for s in (source, target, fstype, data)]
    _check(_mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def _setattr_at(dirfd, path, flags, attr_set, attr_clr, propagation=0):  # type: ignore[no-untyped-def]
    """``mount_setattr(2)``; returns 0 or the errno."""
    attr = _MountAttr(attr_set, attr_clr, propagation, 0)
    result = _syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_long(dirfd), path, ctypes.c_long(flags),
                      ctypes.byref(attr), ctypes.c_long(ctypes.sizeof(attr)))  # fmt: skip
    return 0 if result == 0 else ctypes.get_errno()


def _mount_setattr(path, attr_set, attr_clr, recursive):  # type: ignore[no-untyped-def]
    """``mount_setattr(2)`` on the mount at ``path``; returns 0 or the errno."""
    return _setattr_at(AT_FDCWD, os.fsencode(path), AT_RECURSIVE if recursive else 0, attr_set, attr_clr)


def _tree(path, read_only):  # type: ignore[no-untyped-def]
    """A detached copy of the mounts at ``path`` and below (``open_tree``),
    private (no mount made on it propagates back to the build's), no device
    file usable in it, read-only where ``read_only``: its descriptor, for
    :func:`_attach`.

    :raises OSError: naming the call (``ENOSYS`` where the kernel has none).
    """
    fd = _syscall(ctypes.c_long(SYS_OPEN_TREE), ctypes.c_long(AT_FDCWD), os.fsencode(path),
                  ctypes.c_long(OPEN_TREE_CLONE | os.O_CLOEXEC | AT_RECURSIVE))  # fmt: skip
    if fd < 0:
        _check(-1, f"open_tree {path}")
    attrs = MOUNT_ATTR_NODEV | (MOUNT_ATTR_RDONLY if read_only else 0)
    err = _setattr_at(fd, b"", AT_EMPTY_PATH | AT_RECURSIVE, attrs, 0, MS_PRIVATE)
    if err:
        os.close(fd)
        raise OSError(err, f"mount_setattr {path}: {os.strerror(err)}")
    return fd


def _attach(fd, target):  # type: ignore[no-untyped-def]
    """Attach the detached tree ``fd`` at ``target`` of this namespace (``move_mount``)."""
    _check(_syscall(ctypes.c_long(SYS_MOVE_MOUNT), ctypes.c_long(fd), b"", ctypes.c_long(AT_FDCWD), os.fsencode(target),
                    ctypes.c_long(MOVE_MOUNT_F_EMPTY_PATH)), f"move_mount {target}")  # fmt: skip


def _remount(path, read_only, nodev=None):  # type: ignore[no-untyped-def]
    """The mount at ``path`` remounted (its other flags kept), read-only or
    not, and where ``nodev`` is not ``None``, without devices or with them."""
    kept = os.statvfs(path).f_flag
    flags = MS_REMOUNT | MS_BIND | sum(ms for st, ms in _ST_FLAGS if kept & st) | (MS_RDONLY if read_only else 0)
    if nodev is not None:
        flags = (flags | MS_NODEV) if nodev else (flags & ~MS_NODEV)
    mount(None, path, None, flags)


def _mount_points():  # type: ignore[no-untyped-def]
    """Every mount point of this process's namespace (``/proc/self/mountinfo``), outermost first."""
    points = []
    with open("/proc/self/mountinfo", "rb") as info:
        for line in info:
            field = line.split(b" ")[4]
            points.append(os.fsdecode(field.replace(b"\\040", b" ").replace(b"\\011", b"\t")
                                      .replace(b"\\012", b"\n").replace(b"\\134", b"\\")))  # fmt: skip
    return sorted(set(points), key=len)


def read_only(path, recursive=True, nodev=False):  # type: ignore[no-untyped-def]
    """Make the mount at ``path`` (and, ``recursive``, every mount below it)
    read-only, and where ``nodev``, its device files unusable (``EACCES``).

    Where the kernel has no ``mount_setattr`` (before 5.12), each mount is
    remounted on its own, its other flags kept.
    """
    _set_below(path, MOUNT_ATTR_RDONLY | (MOUNT_ATTR_NODEV if nodev else 0), 0, recursive,
               lambda point: _remount(point, True, True if nodev else None))  # fmt: skip


def devices(path):  # type: ignore[no-untyped-def]
    """Bind ``path`` (a device file or a folder of them, and the mounts
    below it) onto itself, read-only, its device files usable again in a
    view that :func:`read_only` made ``nodev``."""
    mount(path, path, None, MS_BIND | MS_REC)
    _set_below(path, MOUNT_ATTR_RDONLY, MOUNT_ATTR_NODEV, True, lambda point: _remount(point, True, False))


def _set_below(path, attr_set, attr_clr, recursive, remount):  # type: ignore[no-untyped-def]
    err = _mount_setattr(path, attr_set, attr_clr, recursive)
    if err == 0:
        return
    if err != ENOSYS:
        raise OSError(err, f"mount_setattr {path}: {os.strerror(err)}")
    below = [p for p in _mount_points() if p == path or p.startswith(path.rstrip("/") + "/")] if recursive else [path]
    for point in below or [path]:
        try:
            remount(point)
        except OSError:
            if point == path:
                raise  # a mount below it that cannot be remounted (gone meanwhile) stays as it is


def writable(path):  # type: ignore[no-untyped-def]
    """Make the mount at ``path`` writable again (a bind of a read-only one)."""
    err = _mount_setattr(path, 0, MOUNT_ATTR_RDONLY, False)
    if err == ENOSYS:
        _remount(path, False)
    elif err:
        raise OSError(err, f"mount_setattr {path}: {os.strerror(err)}")
