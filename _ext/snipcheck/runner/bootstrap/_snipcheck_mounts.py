"""The run's view of the system: all of it read-only but its own folders, a ``/proc`` of its own, no capability (Linux).

Where the kernel allows it (root, or ``CAP_SYS_ADMIN``; the build found out
with :func:`probe`, see ``snipcheck.runner.sandbox``), a run's process, inside
the run's PID namespace, gets a mount namespace of its own whose mounts
propagate nowhere, as bubblewrap's ``--ro-bind / / --proc /proc --tmpfs /tmp``
makes one:

* every mount is read-only (``mount_setattr(/, AT_RECURSIVE, RDONLY)``):
  writing, creating, removing, renaming or ``chmod`` anywhere (the project,
  ``/etc``, ``/usr/local``, ``/var/tmp``, the home folder of the build's
  user) fails with ``EROFS`` ("Read-only file system").  Device files stay
  usable (``/dev/null``, a terminal): a read-only mount only refuses changes
  to the files it holds;
* ``/proc`` is a new proc of the run's PID namespace (made by a process of
  that namespace): ``/proc/self`` is the process itself, ``/proc/1`` the
  run's supervisor, and no process outside the run is there.  ``/proc/sys``,
  ``/proc/sysrq-trigger``, ``/proc/irq`` and ``/proc/bus`` are read-only in
  it (uid 0 may write the kernel's tunables there without any capability);
* ``/tmp`` and ``/dev/shm`` are fresh, empty tmpfs mounts (at most the run's
  memory limit each), gone with the run's last process, and so is what a
  snippet left there;
* the run directory (which the build made under ``$TMPDIR`` or in
  ``/dev/shm``; it holds the run's ``HOME`` and ``TMPDIR``) is bound back at
  its own path, writable; protected paths under ``/tmp`` or ``/dev/shm`` (a
  project checked out there) are bound back read-only, so the snippet reads
  what plain python reads there, and so are the folders there that the run
  needs to start (``keep``: a virtual environment under ``/tmp``, see
  ``snipcheck.runner.sandbox.needed_paths``);
* ``writable`` folders of the build (a snippet's own compile cache, see
  ``snipcheck.runner.compile_cache``) are bound writable at the paths asked.

Then the run seals itself (:func:`seal`): it drops every capability
(bounding, ambient, effective, permitted and inheritable sets) and sets
``PR_SET_NO_NEW_PRIVS``, so it cannot undo any of this (no ``mount``,
``umount`` or ``setns``), cannot ptrace or open the memory of a process
that keeps its capabilities (its supervisor; the fork server's slot, which
forks every later run), cannot raise its hard memory limit, and no program
it executes (a set-user-id one included) gets a capability back.  The uid
stays 0, so files the build's user owns are read and written as before.

A fork server slot runs snippets one after the other: it makes the
read-only view and the proc once (:func:`prepare`, a *template* namespace
the slot holds while it stays in its own), and each run only enters a copy
of it (``setns`` and ``unshare``) and adds its own tmpfs mounts and binds:
what is per run is per run, the rest is made once.

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
ENOSYS = 38
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
#: The folders every run gets empty and to itself.
PRIVATE = ("/tmp", "/dev/shm")
#: What stays read-only in the run's /proc (bubblewrap covers the same).
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]  # fmt: skip


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_LIBC = ctypes.CDLL(None, use_errno=True)
# Looked up here, once: a forked run only calls them.
_mount, _unshare, _setns, _syscall, _prctl = _LIBC.mount, _LIBC.unshare, _LIBC.setns, _LIBC.syscall, _LIBC.prctl
_mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_setattr = getattr(_LIBC, "mount_setattr", None)
_capset = getattr(_LIBC, "capset", None)
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


def _mount_setattr(path, attr_set, attr_clr, recursive):  # type: ignore[no-untyped-def]
    """``mount_setattr(2)`` on the mount at ``path``; returns 0 or the errno."""
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    target = os.fsencode(path)
    if _setattr is not None:
        result = _setattr(AT_FDCWD, target, flags, ctypes.byref(attr), ctypes.sizeof(attr))
    else:
        result = _syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_long(AT_FDCWD), target, ctypes.c_long(flags),
                          ctypes.byref(attr), ctypes.sizeof(attr))  # fmt: skip
    return 0 if result == 0 else ctypes.get_errno()


def _remount(path, read_only):  # type: ignore[no-untyped-def]
    """The mount at ``path`` remounted (its other flags kept), read-only or not."""
    kept = os.statvfs(path).f_flag
    flags = MS_REMOUNT | MS_BIND | sum(ms for st, ms in _ST_FLAGS if kept & st) | (MS_RDONLY if read_only else 0)
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


def read_only(path, recursive=True):  # type: ignore[no-untyped-def]
    """Make the mount at ``path`` (and, ``recursive``, every mount below it) read-only.

    Where the kernel has no ``mount_setattr`` (before 5.12), each mount is
    remounted read-only on its own, its other flags kept.
    """
    err = _mount_setattr(path, MOUNT_ATTR_RDONLY, 0, recursive)
    if err == 0:
        return
    if err != ENOSYS:
        raise OSError(err, f"mount_setattr {path}: {os.strerror(err)}")
    below = [p for p in _mount_points() if p == path or p.startswith(path.rstrip("/") + "/")] if recursive else [path]
    for point in below or [path]:
        try:
            _remount(point, True)
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


def survey():  # type: ignore[no-untyped-def]
    """What every run of this process needs to know and is the same for all,
    worked out once (in the supervisor; forked runs inherit it): the private
    folders that exist, resolved, and the highest capability number."""
    if _survey:
        return _survey
    private = []
    for folder in PRIVATE:
        real = os.path.realpath(folder)
        if os.path.isdir(real) and real not in private:
            private.append(real)
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last_cap = int(f.read())
    except (OSError, ValueError):
        last_cap = 63  # PR_CAPBSET_DROP of a number the kernel does not know fails with EINVAL: skipped
    _survey.update(private=private, last_cap=last_cap)
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


def _view(proc):  # type: ignore[no-untyped-def]
    """Give this process a mount namespace of its own in which every mount is
    read-only and, ``proc``, ``/proc`` is a new proc of its PID namespace.

    :raises OSError: naming the step the kernel refused.
    """
    _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # before any change: none may reach the build's namespace
    read_only("/")
    if proc:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name in PROC_COVERED:
            path = "/proc/" + name
            if os.path.exists(path):
                mount(path, path, None, MS_BIND | MS_REC)
                read_only(path)


#: A fork server slot's template namespace, once :func:`prepare` made it: ``{"fd": ..., "proc": ...}``.
_slot = {}


def prepare(config):  # type: ignore[no-untyped-def]
    """In a fork server's slot (init of the runs' PID namespace), before its
    first run: make the read-only view and the proc of :func:`_view` once, in
    a template namespace that the slot holds by a descriptor while it goes
    back to its own (it removes run directories and keeps compile caches),
    so that each run only enters a copy of it (:func:`enter`).

    What failed here, each run does itself (and reports).

    :raises OSError: only if the slot cannot go back to its own namespace
        (it must not run anything then).
    """
    here = os.getcwd()
    home = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    made = None
    try:
        try:
            _view(config.get("proc", True))
            made = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            pass
    finally:
        _check(_setns(home, CLONE_NEWNS), "setns back to the slot's mount namespace")  # also after a half-made view
        os.close(home)
        os.chdir(here)
    if made is not None:
        _slot.update(fd=made, proc=config.get("proc", True))


def enter(config, run_dir):  # type: ignore[no-untyped-def]
    """Give this process (the run's, not yet the snippet's) the view of the
    module docstring, make ``run_dir`` its working directory and, where
    ``config["seal"]``, :func:`seal` it.

    In a slot that :func:`prepare` made ready, the run enters a copy of the
    slot's template; elsewhere (the subprocess runner) it makes the view itself.

    :param config: ``protect`` (absolute, resolved paths, none inside
        another), ``keep`` (folders under ``/tmp`` or ``/dev/shm`` bound back
        read-only, none inside a protected path), ``size`` (bytes of each
        tmpfs, or ``None``: the kernel's default, half the memory), ``proc``
        (a proc of the run's own), ``seal`` (drop the capabilities), and
        ``writable`` (``[[folder, path], ...]``: each folder of the build bound
        writable at that path, inside the run directory).
    :raises OSError: naming the step the kernel refused (the run must not
        start then: its supervisor reports the error).
    """
    private = survey()["private"]
    template = _slot.get("fd")
    if template is not None and _slot.get("proc") == config.get("proc", True):
        _check(_setns(template, CLONE_NEWNS), "setns to the slot's template namespace")
        _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    else:
        _view(config.get("proc", True))
    # Descriptors first: the folders they name are covered below.  Everything
    # else is read-only already; what lies under /tmp or /dev/shm must come back.
    held = []
    for path in [*config["protect"], *config.get("keep", ())]:
        if any(_inside(path, folder) for folder in private):
            try:
                held.append((path, os.open(path, os.O_PATH | os.O_CLOEXEC), False))
            except (FileNotFoundError, NotADirectoryError):
                continue  # nothing there to protect (yet)
    held.sort(key=lambda entry: len(entry[0]))  # a folder before the folders inside it
    if not any(_inside(run_dir, folder) for folder in private):
        run_dir = os.path.realpath(run_dir)  # it may be there through a link
    held.append((run_dir, os.open(run_dir, os.O_PATH | os.O_CLOEXEC), True))
    for source, target in config.get("writable", ()):
        try:
            held.append((target, os.open(source, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY), True))
        except OSError:
            continue  # gone meanwhile: the run goes without it
    size = config.get("size")
    data = "mode=1777" + (f",size={size}" if size else "")
    for folder in private:
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, data)
    # Bound from the descriptors, the run directory after what it may lie in, its own binds last.
    for path, fd, write in held:
        if any(_inside(path, folder) for folder in private) or (write and path != run_dir):
            _mkdir(path)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        if write:
            writable(path)  # a bind of a read-only mount is read-only
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
    if template is not None:
        os.close(template)  # the run has no use for it (and cannot use it once sealed)
        _slot.pop("fd", None)
    os.chdir(run_dir)
    if config.get("seal"):
        seal()


def seal():  # type: ignore[no-untyped-def]
    """Drop every capability of this process and of what it executes, for
    good, and set ``PR_SET_NO_NEW_PRIVS`` (see the module docstring).

    :raises OSError: naming the step the kernel refused.
    """
    for cap in range(survey()["last_cap"] + 1):
        if _prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such capability
            _check(-1, f"prctl(PR_CAPBSET_DROP, {cap})")
    if _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # before 4.3
        _check(-1, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    if _capset is None:
        raise OSError(ENOSYS, "no capset(2) in this libc")
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_capset(ctypes.byref(header), data), "capset")
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def probe():  # type: ignore[no-untyped-def]
    """``python -I -S _snipcheck_mounts.py probe``, run as init of a new PID
    namespace: try what :func:`enter` does, in this throw-away process, for
    ``snipcheck.runner.sandbox``; print one line per part, ``NAME ok`` or
    ``NAME refused TEXT``: ``mounts`` (the read-only view, private tmpfs and
    binds), ``proc`` (a proc of its own) and ``seal`` (no capability left:
    then a remount must fail).  A part is tried only when the one before it
    worked."""
    parts = {}
    try:
        _view(False)
        private = survey()["private"]
        if not private:
            raise OSError(2, "no /tmp or /dev/shm here")
        for folder in private:
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1m")
        scratch = os.path.join(private[0], "snipcheck-probe")  # in the new tmpfs
        os.mkdir(scratch)
        mount(scratch, scratch, None, MS_BIND | MS_REC)
        read_only(scratch)
        writable(scratch)
        parts["mounts"] = None
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name in PROC_COVERED:
            if os.path.exists("/proc/" + name):
                mount("/proc/" + name, "/proc/" + name, None, MS_BIND | MS_REC)
                read_only("/proc/" + name)
        if os.readlink("/proc/self") != str(os.getpid()):
            raise OSError(22, "/proc/self is not this process in the new proc")
        parts["proc"] = None
        seal()
        try:
            mount(None, scratch, None, MS_REMOUNT | MS_BIND)
        except OSError:
            parts["seal"] = None
        else:
            raise OSError(1, "a remount still works after the capabilities were dropped")
    except OSError as exc:
        for name in ("mounts", "proc", "seal"):
            if name not in parts:
                parts[name] = str(exc)
                break
    for name in ("mounts", "proc", "seal"):
        if name in parts:
            print(name, "ok" if parts[name] is None else "refused " + parts[name], flush=True)


if __name__ == "__main__" and sys.argv[1:] == ["probe"]:
    probe()
