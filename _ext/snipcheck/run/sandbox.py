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
``SNIPCHECK_NAMESPACES=0`` in the build's environment forces that fallback
(and the default receive queue below: the unprivileged path as a whole), for
tests and for comparison.

The capture's sockets (see :mod:`snipcheck.run.channel`) are made, where
allowed, in a private network namespace of the build (:func:`capture_network`),
whose ``net.unix.max_dgram_qlen`` is raised from the default 10: a receiving
socket then holds as many unread datagrams as the writers' send buffers allow,
so a snippet printing thousands of short lines does not wait for the build
every ten lines.  Only the sockets live there; the snippet's processes stay
in the machine's network namespace.  Where it is not allowed, the sockets are
made as they are, and such a snippet only runs slower when the machine is busy.

Inside that PID namespace, each run also gets a mount namespace of its own
(``bootstrap/_snipcheck_mounts.py``): the whole file system read-only but
the run directory, ``/tmp`` and ``/dev/shm`` fresh and private, a ``/proc``
of the run's PID namespace, System V IPC and POSIX message queues of its own
(an IPC namespace), and then no capability left and no keyring.
:func:`protected_paths` works out what must stay read-only where it lies
under ``/tmp`` or ``/dev/shm`` (the paths a build or command names, and the
git work tree and git directories that hold them); :func:`run_mounts` is
what a run is told.  Whether the kernel allows each part (:data:`PARTS`) is
found once per process by a throw-away process (:func:`confinement`).
Where a part is not allowed, runs go without it, and :func:`caveats` says
so, naming it (the build summary, ``verify``).

Pure core: standard library only (``ctypes`` for ``unshare``/``setns``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from snipcheck.run import compile_cache

CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
#: ``net.unix.max_dgram_qlen`` in the capture's network namespace (send buffers bound it).
DGRAM_QUEUE = 65536
#: Set to ``0`` to run without PID namespaces even where they are allowed.
SWITCH = "SNIPCHECK_NAMESPACES"

_lock = threading.RLock()
MOUNTS = str(Path(__file__).parent / "bootstrap" / "_snipcheck_mounts.py")

_state: dict[str, Any] = {
    "refused": None, "home": None, "libc": None, "net": None, "net_home": None,
    "mounts": None, "proc": None, "seal": None, "keys": None, "ipc": None,
}  # fmt: skip


def enabled() -> bool:
    """Whether runs should try PID namespaces (Linux, and not switched off)."""
    return sys.platform.startswith("linux") and os.environ.get(SWITCH, "1") != "0"


def refused() -> str | None:
    """Why the kernel refused a PID namespace in this process, or ``None``."""
    return _state["refused"]  # type: ignore[no-any-return]


def isolation() -> str | None:
    """Why runs here get no PID namespace, or ``None`` where they do (or
    would: where no run has tried yet, one is tried and undone at once).

    The fork server decides for its own runs the same way, in the same
    environment, so the answer holds for both runners."""
    if _state["refused"] is None and enabled():
        with new_pid_namespace(True):
            pass
    if not enabled():
        return f"{SWITCH}=0"
    return refused()


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


def _make_network() -> int | None:
    """Create the capture's network namespace (in a helper thread, so that no
    thread of the build stays in it); return a descriptor of it, or ``None``."""
    libc = _setup()
    made: dict[str, int] = {}

    def make() -> None:
        if libc.unshare(CLONE_NEWNET) != 0:
            return
        fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            with open("/proc/sys/net/unix/max_dgram_qlen", "w") as f:
                f.write(str(DGRAM_QUEUE))
        except OSError:
            os.close(fd)
            return
        made["fd"] = fd

    helper = threading.Thread(target=make, name="snipcheck-netns")
    helper.start()
    helper.join()
    return made.get("fd")


@contextmanager
def capture_network() -> Iterator[bool]:
    """While inside, sockets this thread creates belong to the capture's network
    namespace (where the kernel allows it; otherwise nothing changes).

    :return: a context yielding whether they do (the long receive queue).

    :raises OSError: if the thread cannot be switched back to its own network
        namespace afterwards.
    """
    if not enabled():
        yield False
        return
    with _lock:
        if _state["net"] is None:
            try:
                _state["net_home"] = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
                _state["net"] = _make_network() or -1
            except (OSError, AttributeError):
                _state["net"] = -1
    net = _state["net"]
    libc = _state["libc"]
    if net == -1 or libc is None or libc.setns(net, CLONE_NEWNET) != 0:
        yield False
        return
    try:
        yield True
    finally:
        if libc.setns(_state["net_home"], CLONE_NEWNET) != 0:
            import ctypes

            err = ctypes.get_errno()
            raise OSError(err, f"cannot switch back to the build's network namespace: {os.strerror(err)}")


#: The parts of a run's confinement the mount probe tries (``_snipcheck_mounts.probe``): the
#: first four in order (each only where the one before it is allowed), ``ipc`` on its own.
PARTS = ("mounts", "proc", "seal", "keys", "ipc")


def _probe_mounts() -> None:
    """Find out once whether runs can get their mount namespace, a proc of
    their own and no capability (see the module docstring); each part's
    answer goes to ``_state[part]``: ``""`` where allowed, else why not."""
    with _lock:
        if _state["mounts"] is not None:
            return
        why = isolation()  # mounts are made only inside a run's PID namespace
        if why:
            _state.update(dict.fromkeys(PARTS, why))
            return
        try:
            # As init of a PID namespace of its own, as a run's process is in one.
            with new_pid_namespace(True):
                done = subprocess.run(
                    [sys.executable, "-I", "-S", MOUNTS, "probe"],
                    stdin=subprocess.DEVNULL, capture_output=True, text=True, env={}, timeout=60, check=False,
                )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            _state.update(dict.fromkeys(PARTS, f"cannot run the mount probe: {exc}"))
            return
        answers = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
        before = ""
        for part in PARTS:
            if part == "ipc":  # tried on its own, but of no use without the mounts (see run_mounts)
                before = str(_state["mounts"])
            answer = answers.get(part, "")
            if answer == "ok" and not before:
                _state[part] = ""
            else:
                reason = answer.partition(" ")[2] or before or f"the mount probe ended with status {done.returncode}"
                _state[part] = before or reason  # a part after a refused one is refused for the same reason
                before = _state[part]


def protection() -> str | None:
    """Why runs here do not get the file system read-only and ``/tmp`` and
    ``/dev/shm`` of their own, or ``None`` where they do (worked out once)."""
    if not enabled():
        return f"{SWITCH}=0"
    _probe_mounts()
    return _state["mounts"] or None


def confinement() -> dict[str, str]:
    """Each part of :data:`PARTS` that runs here lack, with why (worked out once)."""
    if not enabled():
        return dict.fromkeys(PARTS, f"{SWITCH}=0")
    _probe_mounts()
    return {part: _state[part] for part in PARTS if _state[part]}


def run_mounts(protect: Iterable[str], size: int | None, python: str | None = None) -> dict[str, Any] | None:
    """What a run is told to set up (``_snipcheck_mounts.enter``), or ``None``
    where the kernel allows none of it.

    :param protect: the protected paths (:func:`protected_paths`): with the
        whole file system read-only, what lies under ``/tmp`` or ``/dev/shm``
        of them is bound back read-only.
    :param size: bytes of each private tmpfs (the run's memory limit), or
        ``None`` for the kernel's default.
    :param python: the interpreter the run starts (``None`` for a Rust run):
        what it needs under ``/tmp`` or ``/dev/shm`` is bound back read-only
        (``keep``, see :func:`needed_paths`).
    :return: ``protect``, ``size``, ``keep``, ``hide`` (the folder of the
        kept compile caches, :func:`snipcheck.run.compile_cache.hidden`:
        each run sees only its own), ``proc`` (a proc of the run's
        own), ``seal`` (no capability), ``keys`` (no keyring) and ``ipc`` (an
        IPC namespace of its own), the last four where the kernel allows them.
    """
    if protection():
        return None
    protect = list(protect)
    keep = [p for p in needed_paths(python) if not any(_within(p, q) for q in protect)] if python else []
    lacking = confinement()
    return {
        "protect": protect, "size": size, "keep": keep, "hide": compile_cache.hidden(),
        "proc": "proc" not in lacking, "seal": "seal" not in lacking, "keys": "keys" not in lacking,
        "ipc": "ipc" not in lacking,
    }  # fmt: skip


#: The folders each run gets empty and to itself (``_snipcheck_mounts.PRIVATE``).
PRIVATE = ("/tmp", "/dev/shm")
#: Prints what an interpreter reads to start and to import: its prefixes,
#: its executable and ``sys.path`` as a snippet gets it (``.pth`` files read).
_NEEDS = (
    "import json, sys\n"
    "print(json.dumps([sys.executable, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,"
    " *sys.path]))"
)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def needed_paths(python: str) -> tuple[str, ...]:
    """The folders inside ``/tmp`` or ``/dev/shm`` that a run of ``python``
    reads to start at all: the interpreter (a virtual environment made under
    ``/tmp``), its prefixes, the entries of its ``sys.path`` (an editable
    install's source folder) and snipcheck's own bootstrap folder.

    Each run's ``/tmp`` and ``/dev/shm`` are empty tmpfs mounts of its own, so
    without these read-only binds a project checked out under ``/tmp`` could
    not start one run (``FileNotFoundError`` for the interpreter).  Asked
    once per interpreter, by running it (about 20 ms); an interpreter that
    cannot be asked gets only the folders of its path.

    :return: resolved folders, none inside another, none that is ``/tmp`` or
        ``/dev/shm`` itself (binding the whole folder back would undo it).
    """
    known = _state.setdefault("needs", {})
    if python in known:
        return known[python]  # type: ignore[no-any-return]
    found = [python, os.path.dirname(MOUNTS)]
    try:
        done = subprocess.run([python, "-c", _NEEDS], capture_output=True, text=True, timeout=60, check=False)
        if done.returncode == 0:
            found.extend(p for p in json.loads(done.stdout) if isinstance(p, str) and p)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    private = [os.path.realpath(f) for f in PRIVATE]
    folders: list[str] = []
    for path in found:
        for real in {os.path.abspath(path), os.path.realpath(path)}:
            folder = real if os.path.isdir(real) else os.path.dirname(real)
            if os.path.isdir(folder) and any(_within(folder, f) and folder != f for f in private):
                folders.append(folder)
    kept: list[str] = []
    for folder in sorted(set(folders), key=len):
        if not any(_within(folder, k) for k in kept):
            kept.append(folder)
    known[python] = tuple(kept)
    return known[python]  # type: ignore[no-any-return]


def protected_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The folders a run must not change, for the paths a build or command names
    (sources, configuration, snippets, outputs, cache, report): each one,
    resolved, with the git work tree holding it and that tree's git
    directories (a linked worktree's own and the common one), leaving out
    any that lies inside another and ``/`` itself.

    A folder that does not exist yet (a cache the first run makes) stays in
    the list: each run protects what exists when it starts.
    """
    found: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        found.append(real)
        found.extend(_git_dirs(real))
    kept: list[str] = []
    for path in sorted(set(found), key=len):
        if path != "/" and not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return tuple(kept)


def _git_dirs(path: str) -> list[str]:
    """The work tree holding ``path`` and its git directories, if it is in one."""
    here = path
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return [here]
        if os.path.isfile(dot):
            found = [here]
            try:
                with open(dot, encoding="utf-8") as f:
                    line = f.read().strip()
            except (OSError, UnicodeDecodeError):
                return found
            if line.startswith("gitdir:"):
                gitdir = os.path.realpath(os.path.join(here, line[len("gitdir:") :].strip()))
                found.append(gitdir)
                try:
                    with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
                        found.append(os.path.realpath(os.path.join(gitdir, f.read().strip())))
                except (OSError, UnicodeDecodeError):
                    pass
            return [p for p in found if os.path.isdir(p)]
        parent = os.path.dirname(here)
        if parent == here:
            return []
        here = parent


def caveats() -> str | None:
    """What the runs here lack, as one clause for the build summary and
    ``verify``'s output, or ``None`` where they have it all."""
    pid, lacking = isolation(), confinement()
    mounts = lacking.get("mounts")
    if pid and mounts == pid:
        return (
            f"no PID or mount namespace for the runs here ({pid}): each run's supervisor still ends what the "
            "snippet started, but a snippet could signal other processes of this user, change or remove the "
            "project's files and any other its user may change, and leave files in /tmp and /dev/shm"
        )
    parts = []
    if pid:
        parts.append(
            f"no PID namespace for the runs here ({pid}): each run's supervisor still ends what the "
            "snippet started, but a snippet could signal other processes of this user"
        )
    if mounts:
        parts.append(
            f"the file system is not read-only to the runs here ({mounts}): a snippet could change or remove the "
            "project's files and any other its user may change, and leave files in /tmp and /dev/shm"
        )
    else:
        if "proc" in lacking:
            parts.append(
                f"the runs here see the machine's /proc ({lacking['proc']}): a snippet could read other processes "
                "and reach their files through /proc/PID/root"
            )
        if "seal" in lacking:
            parts.append(
                f"the runs here keep the build's capabilities ({lacking['seal']}): a snippet running as root could "
                "undo its read-only view, write the memory of the process that forks the next runs, and raise "
                "its memory limit"
            )
        if "keys" in lacking:
            parts.append(
                f"the runs here can use the kernel's keyrings ({lacking['keys']}): a key a snippet adds to its "
                "user's keyring outlives its run, and the next runs find it"
            )
        if "ipc" in lacking:
            parts.append(
                f"the runs here share the machine's System V IPC objects and POSIX message queues ({lacking['ipc']}): "
                "what a snippet leaves there outlives its run, and the next runs find it"
            )
    return "; ".join(parts) or None
