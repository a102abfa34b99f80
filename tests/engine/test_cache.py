"""Unit tests of the result cache: keys, corrupt entries, atomic writes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from snipcheck.engine.cache import CacheError, ResultCache, cache_key, write_atomic
from snipcheck.model import Event, ExceptionInfo, RunResult, Snippet, Stamp, Tags

STAMP = Stamp(python="3.11.7", torch="2.13.0+cpu", device="CPU", platform="Linux x86_64")
SNIPPET = Snippet(
    id="inplace/storage",
    path="snippets/inplace/storage.py",
    abspath="/p/snippets/inplace/storage.py",
    language="python",
    source="print('x')\n",
    code="print('x')",
    code_lineno=1,
    tags=Tags(),
)
RESULT = RunResult(
    events=(Event("stdout", "text", "x\n"), Event("stderr", "traceback", "Traceback ...\nValueError: é\n")),
    exit_status=1,
    signal=None,
    exception=ExceptionInfo("ValueError", "é"),
    duration=0.031,
    timed_out=False,
    truncated_bytes=0,
    stamp=STAMP,
    runner="subprocess",
    output_limit=1 << 20,
)
KEY = cache_key(SNIPPET, STAMP, 1 << 20, runner="fork")


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param(lambda: (dataclasses.replace(SNIPPET, source="print('y')\n"), STAMP, 1 << 20), id="source"),
        pytest.param(lambda: (dataclasses.replace(SNIPPET, tags=Tags(expect="ValueError")), STAMP, 1 << 20), id="expect"),
        pytest.param(lambda: (dataclasses.replace(SNIPPET, tags=Tags(requires=("cuda",))), STAMP, 1 << 20), id="requires"),
        pytest.param(lambda: (SNIPPET, dataclasses.replace(STAMP, torch="2.14.1+cpu"), 1 << 20), id="torch-version"),
        pytest.param(lambda: (SNIPPET, dataclasses.replace(STAMP, torch="2.13.0+cu128"), 1 << 20), id="torch-build"),
        pytest.param(lambda: (SNIPPET, dataclasses.replace(STAMP, python="3.12.3"), 1 << 20), id="python"),
        pytest.param(lambda: (SNIPPET, dataclasses.replace(STAMP, device="CUDA (NVIDIA H200)"), 1 << 20), id="device"),
        pytest.param(lambda: (SNIPPET, STAMP, 1000), id="output-limit"),
        pytest.param(lambda: (dataclasses.replace(SNIPPET, path="snippets/inplace/storage2.py"), STAMP, 1 << 20), id="shown-path"),
        pytest.param(lambda: (SNIPPET, dataclasses.replace(STAMP, env="0123456789ab"), 1 << 20), id="environment"),
        pytest.param(lambda: (dataclasses.replace(SNIPPET, env=("MY_VAR",)), STAMP, 1 << 20), id="declared-variable"),
    ],
)
def test_key_changes_with_everything_that_changes_the_result(changed) -> None:
    assert cache_key(*changed(), runner="fork") != KEY


def test_key_changes_with_the_runner_kind() -> None:
    assert cache_key(SNIPPET, STAMP, 1 << 20, runner="subprocess") != KEY


def test_key_is_stable_and_ignores_the_timeout() -> None:
    assert cache_key(SNIPPET, STAMP, 1 << 20, runner="fork") == KEY
    longer = dataclasses.replace(SNIPPET, tags=Tags(timeout=120.0))
    assert cache_key(longer, STAMP, 1 << 20, runner="fork") == KEY


def test_put_then_get_round_trips(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    assert cache.get(KEY) is None
    cache.put(KEY, SNIPPET.id, RESULT)
    assert cache.get(KEY) == RESULT


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated"),
        pytest.param(lambda raw: b"", id="empty"),
        pytest.param(lambda raw: b"\xff\xfe not json", id="garbage"),
        pytest.param(lambda raw: raw.replace(b'"schema":1', b'"schema":99'), id="other-schema"),
        pytest.param(lambda raw: raw.replace(b'"exit_status"', b'"exit_code"'), id="missing-field"),
        pytest.param(lambda raw: b"[]", id="not-an-object"),
    ],
)
def test_corrupt_entry_raises_cache_error_naming_the_file(tmp_path: Path, damage) -> None:
    cache = ResultCache(tmp_path)
    cache.put(KEY, SNIPPET.id, RESULT)
    path = cache.path(KEY)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(CacheError) as info:
        cache.get(KEY)
    assert str(path) in str(info.value)
    assert "corrupt" in str(info.value)
    cache.discard(KEY)
    assert cache.get(KEY) is None


def test_entry_stored_under_another_key_is_rejected(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    other = cache_key(dataclasses.replace(SNIPPET, source="print('y')\n"), STAMP, 1 << 20, runner="fork")
    cache.put(other, SNIPPET.id, RESULT)
    cache.path(KEY).parent.mkdir(parents=True, exist_ok=True)
    cache.path(KEY).write_bytes(cache.path(other).read_bytes())
    with pytest.raises(CacheError):
        cache.get(KEY)


def test_entries_are_plain_json_outside_the_source_tree(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    cache.put(KEY, SNIPPET.id, RESULT)
    data = json.loads(cache.path(KEY).read_text(encoding="utf-8"))
    assert data["key"] == KEY
    assert data["snippet"] == "inplace/storage"
    assert cache.path(KEY).is_relative_to(tmp_path / "cache")


def test_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "entry.json"
    write_atomic(target, b"first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.json"]


def test_failed_atomic_write_keeps_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "entry.json"
    write_atomic(target, b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("snipcheck.files.os.replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]



def test_an_output_limit_tag_is_the_limit_the_key_names(tmp_path: Path) -> None:
    from snipcheck.engine.execute import Executor, ExecutorConfig

    executor = Executor(ExecutorConfig(python="python3", stamp=STAMP, cache=ResultCache(tmp_path), runner="fork"))
    tagged = dataclasses.replace(SNIPPET, tags=Tags(output_limit=8192))
    assert executor.output_limit(SNIPPET) == 1 << 20 and executor.output_limit(tagged) == 8192
    assert executor.key(SNIPPET) == KEY  # keys of snippets without the tag are those made before it existed
    assert executor.key(tagged) not in (KEY, executor.key(dataclasses.replace(tagged, tags=Tags(output_limit=4096))))


def _forget_lock_mode(cache_mod: object) -> None:
    """Read the umask again on the next lock (it is read once per process)."""
    lock_mode = getattr(cache_mod, "_lock_mode", None)
    if lock_mode is not None:
        lock_mode.cache_clear()


def _tmpfile_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the paths ``os.open`` opens with ``O_TMPFILE`` (filelock's probe of a folder for ``flock``)."""
    import os

    seen: list[str] = []
    real = os.open

    def spy(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            seen.append(str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    return seen


def _without_ofd_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the lock-file-per-key path of :mod:`snipcheck.engine.key_lock`, as on a platform without OFD locks."""
    from snipcheck.engine import key_lock

    monkeypatch.setattr(key_lock, "_OFD_SETLK", None)


@pytest.mark.skipif(not hasattr(__import__("os"), "O_TMPFILE"), reason="O_TMPFILE is Linux only")
def test_a_cache_lock_does_not_probe_its_folder_on_every_acquire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without OFD locks, a run takes one filelock: filelock probes the folder (an unnamed file, then
    flock on it) on every acquire unless it is given the lock file's mode, so
    the cache gives it the mode a new file gets anyway (0o666 less the umask)."""
    import os
    import stat

    from snipcheck.engine import cache as cache_mod

    _without_ofd_locks(monkeypatch)
    _forget_lock_mode(cache_mod)
    previous = os.umask(0o022)
    try:
        probes = _tmpfile_opens(monkeypatch)
        cache = ResultCache(tmp_path)
        for key in ("a" * 64, "b" * 64):
            lock = cache.lock(key)
            with lock:
                mode = stat.S_IMODE(os.stat(tmp_path / "locks" / f"{key}.lock").st_mode)
                assert mode == 0o644  # what it would be without a mode, under this umask
        assert probes == []
    finally:
        os.umask(previous)
        _forget_lock_mode(cache_mod)


@pytest.mark.skipif(not hasattr(__import__("os"), "O_TMPFILE"), reason="O_TMPFILE is Linux only")
def test_a_group_writable_cache_keeps_filelocks_own_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without OFD locks, where the umask leaves new files writable by the group (a cache shared by
    a team), the lock files stay so, and filelock checks the folder as before."""
    import os
    import stat

    from snipcheck.engine import cache as cache_mod

    _without_ofd_locks(monkeypatch)
    _forget_lock_mode(cache_mod)
    previous = os.umask(0o002)
    try:
        probes = _tmpfile_opens(monkeypatch)
        lock = ResultCache(tmp_path).lock("c" * 64)
        with lock:
            assert stat.S_IMODE(os.stat(tmp_path / "locks" / f"{'c' * 64}.lock").st_mode) == 0o664
        assert probes == [str(tmp_path / "locks")]
    finally:
        os.umask(previous)
        _forget_lock_mode(cache_mod)


def test_an_atomic_write_makes_its_folders_only_when_they_are_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold build writes ~1,000 entries into ~256 folders: the folder is made
    when the write finds it missing, not asked for on every write."""
    made: list[Path] = []
    real = Path.mkdir

    def spy(self: Path, *args: object, **kwargs: object) -> None:
        made.append(self)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", spy)
    target = tmp_path / "a" / "b" / "entry.json"
    write_atomic(target, b"first")
    assert target.read_bytes() == b"first" and made[0] == target.parent  # (and, inside mkdir, those above it)
    first = len(made)
    write_atomic(target, b"second")
    write_atomic(target.parent / "other.json", b"third")
    assert len(made) == first and target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.json", "other.json"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the umask is read from /proc on Linux")
def test_an_atomic_write_never_sets_the_umask_to_learn_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Setting the umask to 0 to read it gives every file another thread
    creates meanwhile (a page Sphinx writes, a lock file) mode 0o666: a build
    writes cache entries in its worker threads while its main thread writes
    pages."""
    import os
    import stat

    from snipcheck import files

    calls: list[int] = []
    real = os.umask

    def spy(mask: int) -> int:
        calls.append(mask)
        return real(mask)

    previous = real(0o027)
    try:
        monkeypatch.setattr(files.os, "umask", spy)
        write_atomic(tmp_path / "new.json", b"{}")
        assert calls == []
        assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640
    finally:
        real(previous)
