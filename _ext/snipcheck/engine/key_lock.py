"""The lock of one result-cache key, held while a snippet with that key runs.

Several builds may share one cache directory (and one build runs snippets in
several threads): the lock makes the second one wait and take the first
one's result instead of running the snippet again (see
:meth:`snipcheck.engine.runs.Runs.run`).

Where the kernel has open-file-description locks (Linux 3.15 and later,
``fcntl.F_OFD_SETLK``), a key's lock is one byte of a single file,
``locks/keys``, at an offset taken from the key: no file per key.  A lock
file per key (:mod:`filelock`, as elsewhere) costs a new inode for every
snippet of a cold build, each one a metadata write on the cache's file
system (measured on this project's machine, a journal-less ext4 that had
just removed a build: 0.3-0.7 ms each, ~1.5 s of a 1,000-snippet build), and
leaves as many empty files behind.  The lock belongs to the open file
description, not to the process: two threads of one build exclude each
other as two builds do, and the kernel drops it when its holder dies.

Pure core: standard library, :mod:`filelock`.
"""

from __future__ import annotations

import fcntl
import os
import struct
import time
from pathlib import Path
from typing import Protocol, Self

from filelock import FileLock

__all__ = ["KeyLock", "Lock", "key_lock"]

#: Seconds between two tries to take a lock another holder has (filelock's default).
POLL_INTERVAL = 0.05
#: ``fcntl.F_OFD_SETLK`` where the platform has it, else ``None``.
_OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None)
#: ``struct flock`` (Linux): l_type, l_whence, l_start, l_len, l_pid (0 for an OFD lock), padding.
_FLOCK = "hhqqi4x"


class Lock(Protocol):
    """What :meth:`snipcheck.engine.cache.ResultCache.lock` returns."""

    def acquire(self) -> object: ...

    def release(self) -> object: ...


class KeyLock:
    """An open-file-description lock of one byte of ``path`` (see the module docstring).

    :param path: the lock file, created where missing (mode ``0o666`` less
        the umask).
    :param offset: the byte locked (0 to 2**62).
    """

    def __init__(self, path: Path, offset: int) -> None:
        self.path = path
        self.offset = offset
        self._fd: int | None = None

    def _set(self, fd: int, kind: int) -> bool:
        """Set or clear the lock on ``fd``; ``False`` where another holder has it.

        :raises OSError: for any other refusal of the kernel.
        """
        assert _OFD_SETLK is not None
        try:
            fcntl.fcntl(fd, _OFD_SETLK, struct.pack(_FLOCK, kind, os.SEEK_SET, self.offset, 1, 0))
        except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: another holder has it
            if kind == fcntl.F_UNLCK:
                raise
            return False
        return True

    def acquire(self) -> Self:
        """Wait until the lock is this object's (polling every
        :data:`POLL_INTERVAL` seconds while another holder has it).

        :raises OSError: if the lock file cannot be opened for writing or
            the kernel refuses the lock (the caller runs without it).
        """
        if self._fd is not None:
            return self
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except FileNotFoundError:  # its folder is not there (yet, or any more)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            while not self._set(fd, fcntl.F_WRLCK):
                time.sleep(POLL_INTERVAL)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        """Let the lock go (nothing if it is not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            self._set(fd, fcntl.F_UNLCK)  # now, even if a fork of this process holds the descriptor too
        finally:
            os.close(fd)

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def key_lock(folder: Path, key: str, mode: int) -> Lock:
    """The lock of ``key`` (a hex digest of at least 16 digits) in ``folder``:
    a :class:`KeyLock` on ``folder/keys`` where the platform has OFD locks,
    else a :class:`filelock.FileLock` on ``folder/<key>.lock`` (created
    with ``mode``).

    :raises OSError: if ``folder`` cannot be made (for a :class:`KeyLock`:
        when it is acquired, which makes it where missing).
    """
    if _OFD_SETLK is not None:
        return KeyLock(folder / "keys", int(key[:15], 16))
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder / f"{key}.lock"), mode=mode)
