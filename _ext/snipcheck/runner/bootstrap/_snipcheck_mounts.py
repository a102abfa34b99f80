"""The run's view of the file system: the project read-only, ``/tmp`` and ``/dev/shm`` its own (Linux).

:func:`enter` runs in the run's process, after its supervisor forked it and
set it up (``_snipcheck_supervise.prepare``), before the snippet starts, where the kernel
allows it (root, or ``CAP_SYS_ADMIN``; the build found out with :func:`probe`,
see ``snipcheck.runner.sandbox``).  It gives the process a mount namespace of
its own, whose mounts propagate nowhere, in which

* every *protected* path (the project's sources, snippets, git work tree and
  git directory, the build's outputs, cache and report folders) is a
  recursively read-only bind mount of itself: writing, removing, renaming or
  creating anything there fails with ``EROFS`` ("Read-only file system"), by
  whatever path it is reached;
* ``/tmp`` and ``/dev/shm`` are fresh, empty tmpfs mounts (at most the run's
  memory limit each).  The mount namespace dies with the last process of the
  run (the supervisor kills them all), and its tmpfs mounts with it, so
  nothing a snippet leaves there outlives its run;
* the run directory (which the build made under ``$TMPDIR`` or in
  ``/dev/shm``) is bound back at its own path and stays writable, also where
  it lies inside a protected path; protected paths under ``/tmp`` or
  ``/dev/shm`` are bound back read-only, so the snippet reads what plain
  python reads there, and so are the folders there that the run needs to
  start (``keep``: a virtual environment or checkout under ``/tmp``, see
  ``snipcheck.runner.sandbox.needed_paths``);
* ``/proc`` stays the machine's, as plain python sees it.

A fork server slot runs snippets one after the other: it makes the
read-only binds once, in a namespace of its own (:func:`prepare`), and each
run copies that one.

The snippet keeps the uid, gids and capability sets of a plain run, so what
it may do is what plain python may, with one exception: a snippet running as
root could still undo the view on purpose (``umount``, or a path through
``/proc/PID/root`` of a process outside the run).  A user namespace would
lock the view against that, but a snippet in one loses its privilege over
the machine (raw sockets, ports below 1024, a negative nice value) and
cannot go back to the build's PID or network namespace, so a snipcheck or
any namespace tool run by a snippet fails: what the snippet observes would
no longer be what plain python observes.

Only the standard library may be used here, and nothing may be imported once
a run has been forked: the fork server imports this module (and ``ctypes``)
before it hides what it loaded.
"""

import _socket  # not socket: the subprocess runner's supervisor would import enum and more for it
import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_ST_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC))
MOUNT_ATTR_RDONLY = 1
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_MOUNT_SETATTR = 442  # the same on every architecture (added after the tables were unified)
#: The folders every run gets empty and to itself.
PRIVATE = ("/tmp", "/dev/shm")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]  # fmt: skip


_LIBC = ctypes.CDLL(None, use_errno=True)
# Looked up here, once: a forked run only calls them.
_mount, _unshare, _syscall = _LIBC.mount, _LIBC.unshare, _LIBC.syscall
_mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_setattr = getattr(_LIBC, "mount_setattr", None)
_survey = {}


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


def read_only(path, recursive=True):  # type: ignore[no-untyped-def]
    """Make the mount at ``path`` (and, ``recursive``, every mount below it) read-only.

    Where the kernel has no ``mount_setattr`` (before 5.12), only the mount at
    ``path`` itself is remounted, its other flags kept.
    """
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    target = os.fsencode(path)
    if _setattr is not None:
        result = _setattr(AT_FDCWD, target, flags, ctypes.byref(attr), ctypes.sizeof(attr))
    else:
        result = _syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_long(AT_FDCWD), target, ctypes.c_long(flags),
                          ctypes.byref(attr), ctypes.c_long(ctypes.sizeof(attr)))  # fmt: skip
    if result == 0:
        return
    if ctypes.get_errno() != 38:  # ENOSYS
        _check(result, f"mount_setattr {path}")
    kept = os.statvfs(path).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | sum(ms for st, ms in _ST_FLAGS if kept & st)
    mount(None, path, None, flags)


def survey():  # type: ignore[no-untyped-def]
    """What every run of this process needs to know and is the same for all,
    worked out once (in the supervisor; forked runs inherit it): the private
    folders that exist, resolved."""
    if _survey:
        return _survey
    private = []
    for folder in PRIVATE:
        real = os.path.realpath(folder)
        if os.path.isdir(real) and real not in private:
            private.append(real)
    _survey.update(private=private)
    return _survey


def _inside(path, folder):  # type: ignore[no-untyped-def]
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class Holder:
    """Keeps a run's mount namespace alive past its end, in its supervisor.

    A mount namespace is torn down when its last reference goes, and the
    kernel then waits for an RCU grace period (``synchronize_rcu_expedited``;
    0.05 ms on an idle machine, several on a busy one).  Without a holder
    that happens when the run's last process exits, before its supervisor
    can reap it: in the run's critical path.  So the run sends a descriptor
    of its namespace to its supervisor (:func:`enter`), without waiting: it
    stays in flight in a socket of the supervisor's, which closes it after it
    has reported the run's end.  Nothing of the run lives on: its processes
    are dead, and no process can enter a namespace through a descriptor in
    flight.
    """

    def __init__(self):  # type: ignore[no-untyped-def]
        self._pair = None

    def before_fork(self):  # type: ignore[no-untyped-def]
        """Make the socket pair the next run sends its namespaces to (usually made already)."""
        if self._pair is None:
            self._pair = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_DGRAM)
        _held["sock"] = self._pair[1]

    def after_fork(self):  # type: ignore[no-untyped-def]
        """In the supervisor: its copy of the run's end is not needed."""
        self._pair[1].close()
        _held["sock"] = None

    def release(self):  # type: ignore[no-untyped-def]
        """After the report: let the run's namespaces go, and make the next pair."""
        self._pair[0].close()
        self._pair = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_DGRAM)


_held = {"sock": None}


def _mkdir(path):  # type: ignore[no-untyped-def]
    try:
        os.mkdir(path)  # the usual case: the run directory right under /dev/shm or $TMPDIR
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        pass


#: A fork server slot's own namespace, once :func:`prepare` made it: its ``protect``.
_slot = {}


def prepare(config, run_dir):  # type: ignore[no-untyped-def]
    """In a fork server's slot, before its first run: give the slot a private
    mount namespace of its own where the protected paths are read-only
    already (those outside ``/tmp`` and ``/dev/shm``), so that each of its
    runs only copies it and covers ``/tmp`` and ``/dev/shm`` (:func:`enter`).

    The run directory's folder (where the build makes every run directory)
    is bound back writable where it lies inside a protected path: the slot
    removes the run directories.  Raises nothing: what failed here, each run
    does itself.
    """
    try:
        private = survey()["private"]
        runs = os.path.dirname(os.path.realpath(run_dir))
        _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _slot.update(protect=tuple(config["protect"]))
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        # Of this namespace (a bind from another one's mount fails), before the read-only binds cover it.
        writable = os.open(runs, os.O_PATH | os.O_CLOEXEC)
        bound = []
        for path in config["protect"]:
            if any(_inside(path, folder) for folder in private) or not os.path.isdir(path):
                continue  # under the run's own tmpfs, or not there yet: bound by each run
            mount(path, path, None, MS_BIND | MS_REC)
            read_only(path)
            bound.append(path)
        if any(_inside(runs, path) for path in bound):
            mount(f"/proc/self/fd/{writable}", runs, None, MS_BIND | MS_REC)
        os.close(writable)
    except OSError:
        pass


def enter(config, run_dir):  # type: ignore[no-untyped-def]
    """Give this process (the run's, not yet the snippet's) the view of the
    module docstring, and make ``run_dir`` its working directory.

    In a slot that :func:`prepare` made ready, the run takes a copy of the
    slot's namespace and binds only the protected folders that are not
    read-only there: those made since (a cache the first run creates) or made
    anew (removing a folder detaches the mounts on it; one renamed away takes
    them along), and those under ``/tmp`` and ``/dev/shm``.

    :param config: ``protect`` (absolute, resolved paths, none inside
        another), ``keep`` (folders under ``/tmp`` or ``/dev/shm`` bound back
        read-only, none inside a protected path) and ``size`` (bytes of each tmpfs, or ``None``: the kernel's
        default, half the memory).
    :raises OSError: naming the step the kernel refused (the run must not
        start then: its supervisor reports the error).
    """
    private = survey()["private"]
    ready = _slot.get("protect") == tuple(config["protect"])
    _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    if not ready:
        mount(None, "/", None, MS_REC | MS_PRIVATE)  # before any mount: none may reach the build's namespace
    # Descriptors first: the folders they name are covered below.
    held = []
    for path in config["protect"]:
        try:
            if ready and os.statvfs(path).f_flag & os.ST_RDONLY and not any(_inside(path, f) for f in private):
                continue  # bound in the slot's namespace, which this one copies
            held.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC), False))
        except (FileNotFoundError, NotADirectoryError):
            continue  # nothing there to protect (yet)
    for path in config.get("keep", ()):
        try:  # what the run reads to start, under a private folder: bound back read-only
            held.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC), False))
        except (FileNotFoundError, NotADirectoryError):
            continue
    held.sort(key=lambda entry: len(entry[0]))  # a folder before the folders inside it
    if not any(_inside(run_dir, folder) for folder in private):
        run_dir = os.path.realpath(run_dir)  # it may be there through a link
    held.append((run_dir, os.open(run_dir, os.O_PATH | os.O_CLOEXEC), True))
    size = config.get("size")
    data = "mode=1777" + (f",size={size}" if size else "")
    for folder in private:
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, data)
    # Bound from the descriptors, the run directory last: it may lie inside a protected path.
    for path, fd, writable in held:
        if any(_inside(path, folder) for folder in private):
            _mkdir(path)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        if not writable:
            read_only(path)
        os.close(fd)
    sock = _held["sock"]
    if sock is not None:  # see Holder
        namespace = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        try:
            rights = namespace.to_bytes(4, sys.byteorder, signed=True)
            sock.sendmsg([b"n"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        except OSError:
            pass  # the supervisor is gone: the run is being killed
        os.close(namespace)
        sock.close()
        _held["sock"] = None
    os.chdir(run_dir)


def probe():  # type: ignore[no-untyped-def]
    """``python -I -S _snipcheck_mounts.py probe``: try what :func:`enter` does,
    in this throw-away process, for ``snipcheck.runner.sandbox``; print
    ``ok``, or ``refused TEXT`` where the kernel allows it not."""
    try:
        _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        private = survey()["private"]
        if not private:
            raise OSError(2, "no /tmp or /dev/shm here")
        for folder in private:
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1m")
        scratch = os.path.join(private[0], "snipcheck-probe")  # in the new tmpfs
        os.mkdir(scratch)
        mount(scratch, scratch, None, MS_BIND | MS_REC)
        read_only(scratch)
    except OSError as exc:
        print("refused", exc, flush=True)
        return
    print("ok", flush=True)


if __name__ == "__main__" and sys.argv[1:] == ["probe"]:
    probe()
