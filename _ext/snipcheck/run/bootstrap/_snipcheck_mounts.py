"""The run's view of the system: all of it read-only but its own folders, a ``/proc`` of its own, no capability (Linux).

Where the kernel allows it (root, or ``CAP_SYS_ADMIN``; the build found out
with :func:`probe`, see ``snipcheck.run.sandbox``), a run's process, inside
the run's PID namespace, gets a mount namespace of its own whose mounts
propagate nowhere, as bubblewrap's ``--ro-bind / / --proc /proc --tmpfs /tmp``
makes one:

* every mount is read-only (``mount_setattr(/, AT_RECURSIVE, RDONLY)``):
  writing, creating, removing, renaming or ``chmod`` anywhere (the project,
  ``/etc``, ``/usr/local``, ``/var/tmp``, the home folder of the build's
  user) fails with ``EROFS`` ("Read-only file system");
* and ``nodev``: no device file opens (``EACCES``), as a read-only mount
  only refuses changes to the files it holds, and the run's uid 0 owns the
  machine's disks, consoles, terminals and ``/dev/kmsg``; but ``/dev/null``,
  ``zero``, ``full``, ``random``, ``urandom`` and ``tty`` (what bubblewrap's
  ``--dev`` gives a program) and the accelerators' (``nvidia*``, ``dri``,
  ``kfd``, ``accel*``, ``dxg``, ``neuron*``), bound back as they are, and
  ``/dev/pts`` a devpts of its own (``/dev/ptmx`` its ``ptmx``): pseudo-terminals
  work, and none of the machine's is there;
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
  ``snipcheck.run.sandbox.needed_paths``);
* ``writable`` folders of the build (a snippet's own compile cache, see
  ``snipcheck.run.compile_cache``) are bound writable at the paths asked,
  and the ``hide`` folders (the one that holds every snippet's kept compile
  cache) show empty;
* where ``ipc``, the run has an IPC namespace of its own: the System V shared
  memory, message queues and semaphores and the POSIX message queues it
  makes are gone with its last process, and it sees no other's.

Then the run seals itself (``_snipcheck_seal.seal``): no capability left
and ``PR_SET_NO_NEW_PRIVS``, so it cannot undo any of this.

The folders bound in come from the build's own view of the files: the run
takes a detached copy of each (``open_tree``, made private, read-only where
asked) before it enters its namespace, and attaches them there
(``move_mount``).  Where the kernel has no ``open_tree`` (before 5.2) they
are bound from the namespace's read-only copy of them instead.

A fork server slot makes most of this once, or between two runs, for the
runs it forks (``_snipcheck_slot``); :func:`enter` then only seals the run.

Only the standard library may be used here, and nothing may be imported once
a run has been forked: the fork server imports this module (and ``ctypes``)
before it hides what it loaded.
"""

import _socket  # not socket: the subprocess runner's supervisor would import enum and more for it
import ctypes
import os
import sys

if __name__ == "__main__":  # run as a script under -I (the probe): its folder is not on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _snipcheck_seal  # beside this file
from _snipcheck_mountcalls import (
    CLONE_NEWIPC,
    CLONE_NEWNS,
    ENOSYS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    _attach,
    _check,
    _setns,
    _tree,
    _unshare,
    devices,
    mount,
    read_only,
    writable,
)

#: The folders every run gets empty and to itself.
PRIVATE = ("/tmp", "/dev/shm")
#: What stays read-only in the run's /proc (bubblewrap covers the same).
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")
#: The device files in /dev a run can open (those bubblewrap's ``--dev`` binds),
#: and those of accelerators, by the start of their names (files or folders);
#: and pseudo-terminals, of a devpts of the run's own (see :func:`_view`).
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
ACCELERATORS = ("nvidia", "dri", "kfd", "accel", "dxg", "neuron")
_survey = {}


def survey():  # type: ignore[no-untyped-def]
    """What every run of this process needs to know and is the same for all,
    worked out once (in the supervisor; forked runs inherit it): the private
    folders that exist, resolved; ``devices``, the entries of /dev a run
    may open (:data:`DEVICES`, :data:`ACCELERATORS`; no link: what it names
    is there); ``trees``, whether :func:`_tree` may be used (until it fails
    for want of the call)."""
    if _survey:
        return _survey
    private = []
    for folder in PRIVATE:
        real = os.path.realpath(folder)
        if os.path.isdir(real) and real not in private:
            private.append(real)
    try:
        names = sorted(os.listdir("/dev"))
    except OSError:
        names = []
    found = ["/dev/" + n for n in names if n in DEVICES or n.startswith(ACCELERATORS)]
    _snipcheck_seal._last_cap()
    _survey.update(private=private, devices=[p for p in found if not os.path.islink(p)], trees=True)
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
        """In the supervisor: its copy of the run's end is not needed; a slot
        that staged the run (:func:`stage`) goes back to its own namespace."""
        self._pair[1].close()
        _held["sock"] = None
        _unstage()

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


def _view(proc, hide=()):  # type: ignore[no-untyped-def]
    """Give this process a mount namespace of its own in which every mount is
    read-only and no device file usable but those of ``survey()["devices"]``,
    ``proc``, ``/proc`` is a new proc of its PID namespace, and each folder
    of ``hide`` shows empty.

    :raises OSError: naming the step the kernel refused.
    """
    _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # before any change: none may reach the build's namespace
    read_only("/", nodev=True)
    for path in survey()["devices"]:
        devices(path)
    if os.path.isdir("/dev/pts"):
        # Pseudo-terminals of the run's own (bubblewrap's --dev makes the
        # same): none of the machine's terminals, and a /dev/ptmx that opens
        # here (the machine's, a device file outside any devpts, finds its
        # devpts through its folder, which a bind of the file alone lacks).
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
        if os.path.lexists("/dev/ptmx"):
            mount("/dev/pts/ptmx", "/dev/ptmx", None, MS_BIND)
    if proc:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name in PROC_COVERED:
            path = "/proc/" + name
            if os.path.exists(path):
                mount(path, path, None, MS_BIND | MS_REC)
                read_only(path)
    for folder in hide:
        # An empty, read-only tmpfs over it.  One under /tmp or /dev/shm is
        # hidden by the run's own tmpfs there, unless a bind brings it back
        # (_cover_hidden).  (Where the kernel has no open_tree, a run cannot
        # then bind its own kept cache from here.)
        if not any(_inside(folder, private) for private in survey()["private"]) and os.path.isdir(folder):
            _cover(folder)


def _cover(folder):  # type: ignore[no-untyped-def]
    """Show ``folder`` empty: an empty, read-only tmpfs over it."""
    mount("tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=755")


def _cover_hidden(config, binds):  # type: ignore[no-untyped-def]
    """Once ``binds`` (:func:`_binds`) are attached: show empty each ``hide``
    folder under ``/tmp`` or ``/dev/shm`` that a read-only bind brought back
    with what it holds (the kept compile caches inside a project that lies
    under ``/tmp``): the run's own tmpfs there hid it only until then."""
    shown = [target for target, _, write in binds if not write]
    for folder in config.get("hide", ()):
        if any(_inside(folder, target) and folder != target for target in shown) and os.path.isdir(folder):
            _cover(folder)


#: A fork server slot's namespaces (``_snipcheck_slot``): ``fd`` and ``proc``, its
#: template, and ``ipc_home``, its own IPC namespace, once it prepared them;
#: ``spare``, ``(key, mount fd, IPC fd or None)`` of the next run's; ``staged``
#: (and ``staged_ipc``) while it is in them for the fork; ``error``, what
#: failed there (the run reports it).
_slot = {}


def _enter_home(home, here):  # type: ignore[no-untyped-def]
    _check(_setns(home, CLONE_NEWNS), "setns back to the slot's mount namespace")
    os.close(home)
    os.chdir(here)


def _spare_key(config):  # type: ignore[no-untyped-def]
    return (config.get("size"), config.get("proc", True), bool(config.get("ipc")))


def _tmpfs(config):  # type: ignore[no-untyped-def]
    size = config.get("size")
    data = "mode=1777" + (f",size={size}" if size else "")
    for folder in survey()["private"]:
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, data)


def _unstage():  # type: ignore[no-untyped-def]
    if _slot.pop("staged_ipc", False):
        _check(_setns(_slot["ipc_home"], CLONE_NEWIPC), "setns back to the slot's IPC namespace")
    staged = _slot.pop("staged", None)
    if staged is not None:
        _enter_home(*staged)


def _binds(config, run_dir):  # type: ignore[no-untyped-def]
    """``[(path in the run, folder of the build, writable)]``, a folder before those inside it."""
    private = survey()["private"]
    shown = [(p, p, False) for p in (*config["protect"], *config.get("keep", ())) if any(_inside(p, f) for f in private)]
    shown.sort(key=lambda entry: len(entry[0]))
    shown.append((run_dir, run_dir, True))  # after what it may lie in
    shown.extend((target, source, True) for source, target in config.get("writable", ()))  # inside it
    return shown


def _trees(binds, run_dir):  # type: ignore[no-untyped-def]
    """:func:`_tree` of each bind, ``[(path, fd, writable, True)]``; ``None``
    where the kernel has no ``open_tree`` (the binds are then made from the
    namespace's own copy).  A folder that is not there is left out, but the
    run directory."""
    trees = []
    try:
        for target, source, write in binds:
            try:
                trees.append((target, _tree(source, not write), write, True))
            except (FileNotFoundError, NotADirectoryError):
                if target == run_dir:
                    raise
    except OSError as exc:
        for _, fd, _, _ in trees:
            os.close(fd)
        if exc.errno not in (ENOSYS, 1):  # EPERM: a seccomp profile that knows only mount(2)
            raise
        survey()["trees"] = False
        return None
    return trees


def _copies(binds, run_dir):  # type: ignore[no-untyped-def]
    """Without ``open_tree``: ``[(path, O_PATH fd, writable, False)]`` of
    this namespace's copy of each bind, opened before the tmpfs cover those
    under ``/tmp`` and ``/dev/shm``."""
    found = []
    for target, source, write in binds:
        try:
            found.append((target, os.open(source, os.O_PATH | os.O_CLOEXEC), write, False))
        except (FileNotFoundError, NotADirectoryError):
            if target == run_dir:
                raise
    return found


def _attach_all(trees, run_dir):  # type: ignore[no-untyped-def]
    """Attach (or bind, without ``open_tree``) each of ``trees`` at its path in this namespace."""
    private = survey()["private"]
    for target, fd, write, attach in trees:
        if any(_inside(target, folder) for folder in private) or (write and target != run_dir):
            _mkdir(target)
        if attach:
            _attach(fd, target)
        else:
            mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
            if write:
                writable(target)  # a bind of a read-only mount is read-only
        os.close(fd)


def enter(config, run_dir):  # type: ignore[no-untyped-def]
    """Give this process (the run's, not yet the snippet's) the view of the
    module docstring, make ``run_dir`` its working directory and, where
    ``config["seal"]``, seal it (``_snipcheck_seal.seal``, with the keyring
    filter where ``config["keys"]``).

    In a slot, the run finds itself in its namespace already
    (``_snipcheck_slot.stage``; the caller then goes to ``run_dir`` and
    closes the slot's descriptors), or else enters its spare as it is
    (``_snipcheck_slot.ready``) or a copy of the template; elsewhere (the
    subprocess runner) it makes the view itself.

    :param config: ``protect`` (absolute, resolved paths, none inside
        another), ``keep`` (folders under ``/tmp`` or ``/dev/shm`` bound back
        read-only, none inside a protected path), ``size`` (bytes of each
        tmpfs, or ``None``: the kernel's default, half the memory), ``proc``
        (a proc of the run's own), ``seal`` (drop the capabilities), ``ipc``
        (an IPC namespace of the run's own), ``hide`` (resolved folders that
        show empty, the same for every run of a slot), and ``writable``
        (``[[folder, path], ...]``: each folder of the build bound writable
        at that path, inside the run directory).
    :raises OSError: naming the step the kernel refused (the run must not
        start then: its supervisor reports the error).
    """
    if "staged" in _slot:
        # The slot made this namespace (and IPC namespace) for this run, and
        # forked it there: all that is left is the seal (the fork server's
        # child closes every descriptor it does not need right after, and
        # goes to run_dir).  As little as can be, here: each first write to
        # a page of the slot's memory copies the page.
        if config.get("ipc") and not _slot.get("staged_ipc"):
            _check(_unshare(CLONE_NEWIPC), "unshare(CLONE_NEWIPC)")
        if config.get("seal"):
            _snipcheck_seal.seal(config.get("keys"))
        return
    if "error" in _slot:
        raise OSError(*_slot["error"])
    private = survey()["private"]
    if not any(_inside(run_dir, folder) for folder in private):
        run_dir = os.path.realpath(run_dir)  # it may be there through a link
    binds = _binds(config, run_dir)
    trees = _trees(binds, run_dir) if survey()["trees"] else None
    spare, template = _slot.pop("spare", None), _slot.pop("fd", None)
    in_spare = spare is not None and trees is not None and spare[0] == _spare_key(config)
    if in_spare:
        _check(_setns(spare[1], CLONE_NEWNS), "setns to the run's namespace")
    else:
        if template is not None and _slot.get("proc") == config.get("proc", True):
            _check(_setns(template, CLONE_NEWNS), "setns to the slot's template namespace")
            _check(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        else:
            _view(config.get("proc", True), config.get("hide", ()))
        if trees is None:
            trees = _copies(binds, run_dir)
        _tmpfs(config)
    for fd in [f for f in (template, *(spare or ())[1:], _slot.pop("ipc_home", None)) if f is not None]:
        os.close(fd)  # the run has no use for them (and could not use them once sealed)
    if config.get("ipc"):
        _check(_unshare(CLONE_NEWIPC), "unshare(CLONE_NEWIPC)")
    _attach_all(trees, run_dir)
    _cover_hidden(config, binds)
    sock = _held["sock"]
    if sock is not None:  # see Holder: a spare is held by the slot itself
        if not in_spare:
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
    if config.get("seal"):
        _snipcheck_seal.seal(config.get("keys"))


def probe():  # type: ignore[no-untyped-def]
    """``python -I -S _snipcheck_mounts.py probe``, run as init of a new PID
    namespace: try what :func:`enter` does, in this throw-away process, for
    ``snipcheck.run.sandbox``; print one line per part, ``NAME ok`` or
    ``NAME refused TEXT``: ``mounts`` (the read-only view, private tmpfs and
    binds), ``proc`` (a proc of its own), ``seal`` (no capability left:
    then a remount must fail) and ``keys`` (the keyring filter: then
    ``keyctl`` must fail); a part is tried only when the one before it
    worked.  And ``ipc`` (an IPC namespace of its own), tried first, on its own."""
    parts = {}
    ipc = None if _unshare(CLONE_NEWIPC) == 0 else f"unshare(CLONE_NEWIPC): {os.strerror(ctypes.get_errno())}"
    print("ipc", "ok" if ipc is None else "refused " + ipc, flush=True)
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
        _snipcheck_seal.seal()
        try:
            mount(None, scratch, None, MS_REMOUNT | MS_BIND)
        except OSError:
            parts["seal"] = None
        else:
            raise OSError(1, "a remount still works after the capabilities were dropped")
        _snipcheck_seal.keyring_filter()
        if _snipcheck_seal.keyctl_works():
            raise OSError(1, "keyctl still works under the keyring filter")
        parts["keys"] = None
    except OSError as exc:
        for name in ("mounts", "proc", "seal", "keys"):
            if name not in parts:
                parts[name] = str(exc)
                break
    for name in ("mounts", "proc", "seal", "keys"):
        if name in parts:
            print(name, "ok" if parts[name] is None else "refused " + parts[name], flush=True)


if __name__ == "__main__" and sys.argv[1:] == ["probe"]:
    probe()
