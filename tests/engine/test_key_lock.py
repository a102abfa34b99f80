"""The lock of a result-cache key (snipcheck.engine.key_lock): one byte of one
file per cache, held across processes and threads, gone with its holder."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from snipcheck.engine import key_lock
from snipcheck.engine.cache import ResultCache

pytestmark = pytest.mark.skipif(key_lock._OFD_SETLK is None, reason="open-file-description locks are Linux only")

KEY, OTHER = "a" * 64, "b" * 64
EXT = str(Path(key_lock.__file__).parents[2])
HOLDER = """
import os, sys
sys.path.insert(0, {ext!r})
from pathlib import Path
from snipcheck.engine.cache import ResultCache
lock = ResultCache(Path({cache!r})).lock({key!r})
lock.acquire()
print("held", flush=True)
if sys.stdin.readline().strip() == "die":
    os._exit(0)  # without a release: the kernel lets the lock go with the process
lock.release()
print("released", flush=True)
sys.stdin.readline()
"""


@contextlib.contextmanager
def holder(cache: Path, key: str) -> Iterator[subprocess.Popen[str]]:
    """A process that holds ``key``'s lock until told (a line on its stdin); killed at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(ext=EXT, cache=str(cache), key=key)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def tell(proc: subprocess.Popen[str], line: str) -> None:
    """Send the holder its next line (``release`` or ``die``)."""
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


def taker(cache: Path, key: str) -> tuple[threading.Thread, threading.Event]:
    """A thread that takes ``key``'s lock; the event is set once it has it."""
    taken = threading.Event()

    def take() -> None:
        lock = ResultCache(cache).lock(key)
        with lock:
            taken.set()

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    return thread, taken


def test_every_key_of_a_cache_locks_one_byte_of_one_file(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    keys = [f"{n:064x}" for n in range(0, 1 << 60, 1 << 54)]
    for key in keys:
        with cache.lock(key):
            pass
    assert sorted(p.name for p in (tmp_path / "locks").iterdir()) == ["keys"]
    assert (tmp_path / "locks" / "keys").stat().st_size == 0


def test_a_key_another_build_holds_waits_for_it_and_another_key_does_not(tmp_path: Path) -> None:
    with holder(tmp_path, KEY) as proc:
        with ResultCache(tmp_path).lock(OTHER):  # another key: at once, while KEY is held
            pass
        thread, taken = taker(tmp_path, KEY)
        assert not taken.wait(0.5), "took a key another process holds"
        tell(proc, "release")
        assert proc.stdout is not None and proc.stdout.readline() == "released\n"
        assert taken.wait(30), "never took the key once it was released"
        thread.join(30)


def test_a_key_goes_with_the_process_that_held_it(tmp_path: Path) -> None:
    with holder(tmp_path, KEY) as proc:
        thread, taken = taker(tmp_path, KEY)
        assert not taken.wait(0.3)
        tell(proc, "die")
        assert proc.wait(30) == 0
        assert taken.wait(30), "the key stayed locked after its holder died"
        thread.join(30)


def test_two_threads_of_one_build_exclude_each_other(tmp_path: Path) -> None:
    first = ResultCache(tmp_path).lock(KEY)
    first.acquire()
    try:
        thread, taken = taker(tmp_path, KEY)
        assert not taken.wait(0.3), "a second thread took a key the first holds"
    finally:
        first.release()
    assert taken.wait(30)
    thread.join(30)
    first.release()  # a second release does nothing


def test_a_cache_shared_by_a_group_keeps_its_lock_file_group_writable(tmp_path: Path) -> None:
    previous = os.umask(0o002)
    try:
        with ResultCache(tmp_path).lock(KEY):
            pass
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "locks" / "keys").stat().st_mode) == 0o664


def test_a_lock_file_that_cannot_be_written_is_an_error_the_run_survives(tmp_path: Path) -> None:
    """Opened for writing or not at all: a read-only lock file raises (and
    Runs._lock_entry runs the snippet without the lock, saying so)."""
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "keys").mkdir()  # a folder in its place: no lock file can be opened
    with pytest.raises(OSError):
        ResultCache(tmp_path).lock(KEY).acquire()
