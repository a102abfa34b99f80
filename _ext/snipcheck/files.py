"""Writing files so that nothing is ever half-written.

:func:`write_atomic` replaces one file through a temporary file in the same
directory and ``os.replace``: readers see the old bytes or the new, never a
mix, and the file keeps its permissions.  :func:`write_all` does that for
several files, all or nothing: every file is checked and every temporary file
written before the first one replaces its target, and targets already
replaced are put back if a later one fails.  Given the bytes each file held
when its new bytes were made from it, :func:`write_all` refuses
(:class:`ChangedOnDisk`) a file that holds others by then: another process
wrote it meanwhile (another ``record``, an editor), and writing would undo
that.  The check is made again right before the first replacement, under an
exclusive ``flock`` of each file, so two snipcheck processes never both pass
it.

Both are safe against Ctrl-C (``SIGINT``) and ``SIGTERM`` at any instruction:
in the main thread those signals are held back while a temporary file exists
and delivered right after, or, when one came before the first file is
replaced, at that point, with the temporary files removed and nothing
replaced; a write in another thread (the executor's cache
writes) cannot be interrupted by a signal, but the interpreter may exit
under it, so temporary files still in flight are removed at exit, and from
then on no temporary file is made (a daemon thread still running after the
``atexit`` handlers would otherwise make one that nobody removes).  No
``.tmp`` file is left behind but by a process killed outright: ``SIGKILL``,
or a ``SIGTERM`` left at its default action (as ``sphinx-build`` leaves it)
that lands during another thread's write; readers never open such a file
(the cache reads entries by their own names).

Pure core: standard library only.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import functools
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

_HELD = {signal.SIGINT, signal.SIGTERM}
_in_flight: set[str] = set()
_in_flight_lock = threading.Lock()
_exiting = False  # set at exit: no temporary file is made from then on


@atexit.register
def _remove_in_flight() -> None:
    """Remove the temporary files of writes the exit interrupted (daemon threads).

    Runs as an ``atexit`` handler.  Daemon threads go on running after it
    until the interpreter's end freezes them, and a build's executor threads
    are busiest just then: :func:`snipcheck.run.stopping.stop_live_runs`
    (an earlier handler) has just closed the control sockets, and a run that
    had already ended goes on to write its cache entry.  So this also closes
    :func:`_temporary`: a write that starts later fails with an ``OSError``
    (``ECANCELED``) instead of making a file that nobody removes.
    """
    global _exiting
    with _in_flight_lock:
        _exiting = True
        names = list(_in_flight)
    for name in names:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _forget(tmp: str) -> None:
    with _in_flight_lock:
        _in_flight.discard(tmp)


_holding = threading.local()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold back ``SIGINT`` and ``SIGTERM`` (main thread only) until the block ends.

    Python runs signal handlers only in the main thread, between bytecodes:
    a ``KeyboardInterrupt`` could otherwise land between creating a temporary
    file and the ``try`` that removes it.  A signal mask is not enough: a
    Ctrl-C is sent to the process, and the kernel hands it to any thread that
    does not block it (the executor's threads), whose C handler still makes the
    main thread raise.  So the Python-level handlers are swapped for one that
    only notes the signal; the old handlers come back when the block ends and
    a noted signal is then raised again, once.  Other threads need nothing.
    """
    if threading.current_thread() is not threading.main_thread() or getattr(_holding, "active", False):
        yield
        return
    if any(signal.getsignal(sig) is None for sig in _HELD):  # a handler set from C: cannot be swapped back
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return
    noted: list[int] = []
    old = {sig: signal.signal(sig, lambda signum, frame: noted.append(signum)) for sig in _HELD}
    _holding.active = True
    _holding.noted, _holding.old, _holding.replaced = noted, old, False
    try:
        yield
    finally:
        _holding.active = False
        for sig, handler in old.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(noted):
            signal.raise_signal(signum)


def _interrupt_waiting() -> bool:
    """Whether a signal held by :func:`signals_held` (this thread's) waits
    whose handler, once back, will stop the process's work: Python's default
    ``SIGINT`` handler (``KeyboardInterrupt``) or the default action (the
    process ends).  A handler of the program's own may do anything, so it is
    left to run when the block ends (unless it says it ends the process:
    ``snipcheck.run.stopping``'s ``SIGTERM`` handler)."""
    if not getattr(_holding, "active", False):
        return False
    return any(
        _holding.old[sig] in (signal.default_int_handler, signal.SIG_DFL) or getattr(_holding.old[sig], "ends_process", False)
        for sig in _holding.noted
    )


def _interrupt_now() -> None:
    """Deliver the held signals at once (inside the block): ``KeyboardInterrupt``
    is raised here, a default action ends the process."""
    noted = list(dict.fromkeys(_holding.noted))
    _holding.noted.clear()
    for signum in noted:
        handler = _holding.old[signum]
        if handler is signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
        elif callable(handler):
            handler(signum, None)
    raise KeyboardInterrupt  # the work stops here (a handler that ends the process may do so a moment later)


def _abandon_if_interrupted(temps: list[str]) -> None:
    """Before the first file of a held block is replaced: if a held Ctrl-C
    (or ``SIGTERM``) waits, remove the temporary files and deliver it now, so
    that an interrupt that came while the new bytes were written (the slow
    part, with its ``fsync``) leaves every file as it was, rather than written
    after all.  Once a file of the block is replaced, the block's writes all
    go on (a caller that writes several files in one block, all or nothing)."""
    if not _interrupt_waiting() or _holding.replaced:
        return
    for tmp in temps:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _forget(tmp)
    _interrupt_now()


def _mode_for(path: Path) -> tuple[int, int | None, int | None]:
    """Permissions (and owner, group) the new file must have: those of the
    file it replaces, or the umask's default for a new file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return 0o666 & ~current_umask(), None, None
    return stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid


@functools.lru_cache(maxsize=16)
def resolved_folder(folder: str) -> str:
    """``os.path.realpath(folder)``, worked out once per process: for the
    build's own folders that every run names (where run directories are
    made, the kept compile caches), which a per-run ``realpath`` resolved
    again with a ``lstat`` per component."""
    return os.path.realpath(folder)


def current_umask() -> int:
    """The process's umask, read from ``/proc/self/status`` (Linux 4.7):
    setting it to learn it (``os.umask``) would give every file another
    thread creates meanwhile (a page Sphinx writes, a lock file) mode 0o666.
    Elsewhere, that is what it does, as the only way there is.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _temporary(path: Path, data: bytes, durable: bool = True) -> str:
    """Write ``data`` to a new temporary file beside ``path``; return its name.

    Call with signals held; on failure the temporary file is gone.

    :raises OSError: ``ECANCELED`` once the interpreter is exiting (see
        :func:`_remove_in_flight`), or whatever writing the file raised.
    """
    mode, uid, gid = _mode_for(path)
    with _in_flight_lock:  # registered before it exists: an exit cannot miss it
        if _exiting:
            raise OSError(errno.ECANCELED, f"the interpreter is exiting; {path} was not written")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        _in_flight.add(tmp)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if uid is not None and os.geteuid() == 0 and (uid, gid) != (0, 0):
            os.chown(tmp, uid, gid if gid is not None else -1)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _forget(tmp)
        raise
    return tmp


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers never see a partial file.

    :param durable: ``fsync`` the data before the rename, so that it survives
        a power loss (pages and reports).  The result cache passes ``False``:
        an entry lost in a crash is only a run again (a torn one is a corrupt
        entry: discarded with a warning, and the snippet runs), and an
        ``fsync`` per snippet costs milliseconds on a busy disk.
    :raises OSError: if the directory cannot be created or written.
    """
    path = Path(path)
    with signals_held():
        try:
            tmp = _temporary(path, data, durable)
        except FileNotFoundError:  # its folder is not there yet (asked only then: a cold build writes ~1,000 entries)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = _temporary(path, data, durable)
        _abandon_if_interrupted([tmp])
        try:
            os.replace(tmp, path)
            _holding.replaced = True
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        finally:
            _forget(tmp)


def unwritable(path: Path) -> str | None:
    """Why ``path`` must not be rewritten, or ``None``.

    A file without write permission for its owner, or in a directory without
    it, is read-only on purpose even where this process could write it anyway
    (root ignores permissions, and a rename replaces a read-only file); a
    read-only file system cannot be written at all.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    if not st.st_mode & stat.S_IWUSR:
        return f"{path} is read-only (mode {stat.filemode(st.st_mode)}); make it writable first (chmod u+w)"
    folder = path.parent
    dst = os.stat(folder)
    if not dst.st_mode & stat.S_IWUSR or not os.access(folder, os.W_OK):
        return f"its folder {folder} is read-only; a file there cannot be replaced safely"
    with contextlib.suppress(OSError):
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"{folder} is on a read-only file system"
    return None


class WriteError(OSError):
    """Some file of a :func:`write_all` could not be written; nothing was changed
    (unless the message says a file could not be put back).  ``str()`` is the
    message alone; ``errno`` is the cause's, if any."""

    def __str__(self) -> str:
        return str(self.strerror)


class ChangedOnDisk(WriteError):
    """A file to be rewritten holds other bytes than those its new bytes were
    made from: another process wrote it meanwhile.  Nothing was written.

    :param path: the file.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(
            errno.ESTALE,
            f"{path} changed on disk since it was read (another process wrote it meanwhile: another record or "
            "accept, or an editor); nothing was written: run the command again",
        )
        self.path = Path(path)


@contextlib.contextmanager
def _locked(paths: list[Path]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on each of ``paths`` (in sorted order), so
    that two snipcheck processes rewriting one file check and replace it one
    after the other; a file system without locks only loses that ordering."""
    fds: list[int] = []
    try:
        # One lock a file: a second descriptor of a file this process locked would wait for ever.
        for path in sorted({os.path.realpath(p) for p in paths}):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            fds.append(fd)
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in fds:
            os.close(fd)  # closing the last descriptor of the file releases its lock


def write_all(files: Mapping[Path, bytes], expected: Mapping[Path, bytes] | None = None) -> list[Path]:
    """Replace every file in ``files`` with its new bytes, all or nothing.

    :param expected: the bytes each file held when its new bytes were made
        from it.  A file that holds other bytes by now (checked first, and
        again under a lock right before the first file is replaced) was
        written by someone else meanwhile: nothing is written.
    A path that is a symbolic link is written through: the file it leads to
    gets the new bytes and the link stays a link (a page shared by a link).
    Two paths of one file (a link and its target) must be given the same bytes.

    :return: the files whose bytes changed (files already holding their new
        bytes are not touched), as given.
    :raises ChangedOnDisk: see ``expected``.
    :raises WriteError: if a file is unwritable (see :func:`unwritable`) or a
        write fails, or two paths of one file are given different bytes;
        every file then holds its old bytes.
    """
    expected = expected or {}
    given: dict[Path, Path] = {}  # each file itself -> the path it was given by
    for path in files:
        real = Path(os.path.realpath(path))
        first = given.setdefault(real, Path(path))
        if files[first] != files[path]:
            raise WriteError(
                None, f"nothing was written: {first} and {path} are one file, {real}, and would get different bytes"
            )
    changes = []
    for path, as_given in given.items():
        new = files[as_given]
        old = path.read_bytes()
        if as_given in expected and old != expected[as_given]:
            raise ChangedOnDisk(as_given)
        if old != new:
            why = unwritable(path)
            if why:
                raise WriteError(None, f"nothing was written: {why}")
            changes.append((path, old, new))
    with signals_held():
        temps: list[tuple[Path, str]] = []
        try:
            for path, _, new in changes:
                temps.append((path, _temporary(path, new)))
        except BaseException as exc:
            for _, tmp in temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                _forget(tmp)
            if isinstance(exc, OSError):
                raise WriteError(exc.errno, f"nothing was written: cannot write beside {path}: {exc.strerror or exc}") from exc
            raise
        _abandon_if_interrupted([tmp for _, tmp in temps])
        done: list[tuple[Path, bytes]] = []
        failed = Path()
        with _locked([path for path, _, _ in changes if given[path] in expected]):
            try:
                for path, old, _ in changes:
                    if given[path] in expected and path.read_bytes() != old:
                        raise ChangedOnDisk(given[path])
                for (path, old, _), (_, tmp) in zip(changes, temps, strict=True):
                    failed = path
                    os.replace(tmp, path)
                    _holding.replaced = True
                    done.append((path, old))
            except BaseException as exc:
                stuck = []
                for path, old in reversed(done):
                    back = ""
                    try:
                        back = _temporary(path, old)
                        os.replace(back, path)
                    except OSError:
                        stuck.append(str(path))
                        with contextlib.suppress(OSError):
                            if back:
                                os.unlink(back)
                    finally:
                        _forget(back)
                for _, tmp in temps:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)
                if not isinstance(exc, OSError) or isinstance(exc, ChangedOnDisk):
                    raise
                message = f"nothing was written: cannot write {failed}: {exc.strerror or exc}"
                if stuck:
                    message = f"cannot write {failed}: {exc.strerror or exc}; and could not put back {', '.join(stuck)}"
                raise WriteError(exc.errno, message) from exc
            finally:
                for _, tmp in temps:
                    _forget(tmp)
    return [given[path] for path, _, _ in changes]
