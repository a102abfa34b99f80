"""Fault tolerance of the cache and the build process (issue 6).

A corrupt cache entry, two builds sharing one cache at once, a build stopped
with Ctrl-C in the middle of a run.  The unit side of corrupt entries and
atomic writes is in test_cache.py
(``test_corrupt_entry_raises_cache_error_naming_the_file``,
``test_failed_atomic_write_keeps_the_old_file_and_no_temporary``).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import directive_line, html, plain
from load import Inbox, host_pid
from snipcheck.engine.cache import ResultCache
from snipcheck.run import PYTHON_RUNNERS
from faults_support import (
    cached_ids,
    copy_root,
    descendants,
    snapshot,
    sphinx_build,
    sphinx_build_command,
    split_warnings,
    subprocess_env,
    wait_gone,
)

SNIPPETS = ("one", "two", "three")


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    with Inbox() as box:
        yield box


def counted_root(dest: Path, counter: Inbox) -> Path:
    """A copy of tests/roots/test-fault-cache whose snippets send a line to ``counter`` each time they run."""
    src = copy_root("fault-cache", dest)
    for name in SNIPPETS:
        path = src / "snippets" / "cache" / f"{name}.py"
        path.write_text(path.read_text().replace("COUNTER = None", f"COUNTER = {counter.path!r}"))
    return src


def runs(counter: Inbox) -> Counter[str]:
    return Counter(line.split()[0] for line in counter.lines())


def entry_of(cache_dir: Path, snippet_id: str) -> Path:
    (path,) = [
        p for p in (cache_dir / "results").glob("*/*.json") if json.loads(p.read_text(encoding="utf-8"))["snippet"] == snippet_id
    ]
    return path


def output_of(page: Path, snippet_id: str) -> str:
    div = html(page).find(id="snippet-" + snippet_id.replace("/", "-"))
    return div.find(class_="snipcheck-output").find("pre").get_text()


# --- a corrupt cache entry ---------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated"),
        pytest.param(lambda raw: b"", id="empty"),
        pytest.param(lambda raw: b"\x00\xff garbage", id="garbage"),
        pytest.param(lambda raw: raw.replace(b'"exit_status"', b'"exit_code"'), id="missing-field"),
    ],
)
def test_corrupt_cache_entry_is_discarded_with_a_warning_rerun_and_rewritten(
    tmp_path: Path, probe_cache: Path, inbox: Inbox, damage
) -> None:
    counter = inbox
    src = counted_root(tmp_path / "src", counter)
    cache_dir = fresh_cache(tmp_path / "cache", probe_cache)
    first = sphinx_build(src, tmp_path, cache_dir)
    assert first.all_warnings == []
    entry = entry_of(cache_dir, "cache/one")
    good = ResultCache(cache_dir).get(entry.stem)
    entry.write_bytes(damage(entry.read_bytes()))

    second = sphinx_build(src, tmp_path, cache_dir, freshenv=True)  # every page read again
    index = src / "index.md"
    assert len(second.all_warnings) == 1, second.all_warnings
    (warning,) = second.all_warnings
    assert re.fullmatch(
        re.escape(f"{index}:{directive_line(index, 'cache/one')}: WARNING: snippet 'cache/one': cache entry {entry} is corrupt (")
        + r".+"
        + re.escape("); it was discarded and the snippet re-run [snipcheck.cache]"),
        warning,
    )
    assert runs(counter) == Counter(one=2, two=1, three=1)
    assert output_of(second.outdir / "index.html", "cache/one") == "one\n"
    # The entry is whole again, with the new run's result.
    again = ResultCache(cache_dir).get(entry.stem)
    assert again is not None and again.events == good.events  # type: ignore[union-attr]
    assert cached_ids(cache_dir) == {"cache/one", "cache/two", "cache/three"}
    assert second.after == second.before
    # A third build finds it and runs nothing.
    third = sphinx_build(src, tmp_path, cache_dir, freshenv=True)
    assert third.all_warnings == []
    assert runs(counter) == Counter(one=2, two=1, three=1)


def test_unreadable_cache_entry_warns_and_the_snippet_still_runs(tmp_path: Path, probe_cache: Path, inbox: Inbox) -> None:
    # A directory where the entry should be: it can be neither read nor
    # removed nor replaced.  The snippet must still run and be checked, with
    # snipcheck.cache warnings, not be reported as a run that could not start.
    counter = inbox
    src = counted_root(tmp_path / "src", counter)
    cache_dir = fresh_cache(tmp_path / "cache", probe_cache)
    sphinx_build(src, tmp_path, cache_dir)
    entry = entry_of(cache_dir, "cache/one")
    entry.unlink()
    (entry / "blocker").mkdir(parents=True)

    second = sphinx_build(src, tmp_path, cache_dir, freshenv=True)
    index = src / "index.md"
    at = f"{index}:{directive_line(index, 'cache/one')}: WARNING: snippet 'cache/one': "
    assert second.all_warnings == [
        f"{at}cannot read cache entry {entry} (Is a directory); the snippet was run again; "
        "remove that path if this repeats [snipcheck.cache]",
        f"{at}could not write the cache entry {entry} (Is a directory); the snippet will run again "
        "next build [snipcheck.cache]",
    ]
    assert runs(counter) == Counter(one=2, two=1, three=1)
    assert output_of(second.outdir / "index.html", "cache/one") == "one\n"


def test_a_cache_that_cannot_be_locked_costs_the_cache_not_the_run(tmp_path: Path, probe_cache: Path, inbox: Inbox) -> None:
    # A cache directory that cannot be written (here a file where the lock
    # directory goes; a read-only mount alike) used to be reported as
    # "could not start the run ...; check snipcheck_python" and nothing ran.
    counter = inbox
    src = counted_root(tmp_path / "src", counter)
    cache_dir = fresh_cache(tmp_path / "cache", probe_cache)
    (cache_dir / "locks").write_text("in the way\n")
    build = sphinx_build(src, tmp_path, cache_dir)
    index = src / "index.md"
    for name in SNIPPETS:
        at = f"{index}:{directive_line(index, f'cache/{name}')}: WARNING: snippet 'cache/{name}': "
        assert build.about(f"cache/{name}") == [
            f"{at}cannot lock the cache entry ([Errno 20] Not a directory: '{cache_dir / 'locks' / 'keys'}'); "
            "the snippet ran without the lock [snipcheck.cache]"
        ]
        assert output_of(build.outdir / "index.html", f"cache/{name}") == f"{name}\n"
    assert runs(counter) == Counter(one=1, two=1, three=1)
    assert cached_ids(cache_dir) == {"cache/one", "cache/two", "cache/three"}


# --- two builds sharing one cache at once -------------------------------------------------


def test_two_builds_sharing_one_cache_run_each_snippet_once_in_total(tmp_path: Path, probe_cache: Path, inbox: Inbox) -> None:
    counter = inbox
    cache_dir = fresh_cache(tmp_path / "cache", probe_cache)
    builds = []
    for name in ("a", "b"):
        src = counted_root(tmp_path / name / "src", counter)
        args = sphinx_build_command(src, tmp_path / name / "html", tmp_path / name / "report")
        builds.append((src, snapshot(src), args))
    procs = [
        subprocess.Popen(args, env=subprocess_env(cache_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _, _, args in builds
    ]
    done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    for status, out, err in done:
        assert status == 0, err  # -W: not a single warning either
        assert split_warnings(err) == []
    assert runs(counter) == Counter(one=1, two=1, three=1)
    # Each build checked all three: one ran them, the other waited and took
    # them from the cache (or they shared the work).
    counted = [
        tuple(map(int, re.search(r"this build ran (\d+), took (\d+) from the cache", plain(out)).groups()))  # type: ignore[union-attr]
        for _, out, _ in done
    ]
    assert sum(run for run, _ in counted) == 3 and sum(hit for _, hit in counted) == 3
    assert cached_ids(cache_dir) == {"cache/one", "cache/two", "cache/three"}
    for (src, before, _), name in zip(builds, ("a", "b"), strict=True):
        assert snapshot(src) == before
        assert output_of(tmp_path / name / "html" / "index.html", "cache/two") == "two\n"


# --- Ctrl-C in the middle of a run -----------------------------------------------------------


def _default_sigint() -> None:
    # A process started in the background by a non-interactive shell ignores
    # SIGINT, and its children inherit that; a terminal's sphinx-build does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# A daemon thread (the executor's) that starts a cache write after the
# temporary files in flight were removed at exit, and is frozen by the end of
# the interpreter with its temporary file made.  CI failure:
# test_ctrl_c_during_a_run_stops_the_build_and_leaves_nothing_behind[subprocess]
# found a .json.*.tmp in the cache: at Ctrl-C the quick snippet's run had
# ended unread; stop_live_runs closed its control socket, its supervisor
# reported the exit, and its worker went on to write the entry just as the
# last atexit handlers ran.  Here the write starts at that moment every time
# and stalls in fsync, so the end of the interpreter always freezes it.
_LATE_WRITER = """
import atexit, sys, threading
from pathlib import Path

go, inside, refused = threading.Event(), threading.Event(), threading.Event()

def other_handler():  # registered first, so it runs after files' own (LIFO)
    go.set()
    for _ in range(1000):
        if inside.wait(0.01) or refused.is_set():
            break

atexit.register(other_handler)
from snipcheck import files

def stalled_fsync(fd):
    inside.set()
    threading.Event().wait()

files.os.fsync = stalled_fsync

def writer():
    go.wait()
    try:
        files.write_atomic(Path(sys.argv[1]), b"entry", durable=True)
    except OSError as exc:
        print("not written:", exc.strerror, flush=True)
        refused.set()

threading.Thread(target=writer, daemon=True).start()
"""


def test_a_write_a_daemon_thread_starts_during_the_exit_leaves_no_temporary_file(tmp_path: Path) -> None:
    entries = tmp_path / "results"
    entries.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", _LATE_WRITER, str(entries / "entry.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in entries.iterdir()) == []
    assert "the interpreter is exiting" in out.stdout


def _ctrl_c_to_the_worker_threads(build: subprocess.Popen[str]) -> None:
    """A Ctrl-C as the kernel hands it when the main thread already has a
    signal pending: to another thread (``tgkill`` to every one but the main
    thread; see ``snipcheck.engine.execute._result``)."""
    tgkill = ctypes.CDLL(None, use_errno=True).tgkill
    workers = [int(tid) for tid in os.listdir(f"/proc/{build.pid}/task") if int(tid) != build.pid]
    assert workers, "the build runs its snippets in worker threads"
    for tid in workers:
        assert tgkill(build.pid, tid, signal.SIGINT) == 0, os.strerror(ctypes.get_errno())


@pytest.mark.parametrize("taken_by", ["main-thread", "worker-thread"])
@pytest.mark.parametrize("runner", PYTHON_RUNNERS)
def test_ctrl_c_during_a_run_stops_the_build_and_leaves_nothing_behind(
    tmp_path: Path, probe_cache: Path, runner: str, taken_by: str, inbox: Inbox
) -> None:
    src = copy_root("fault-interrupt", tmp_path / "src")
    flag = tmp_path / "sleep-please"
    sleeper = src / "snippets" / "slow" / "sleeper.py"
    sleeper.write_text(
        sleeper.read_text()
        .replace("MARKER = None", f"MARKER = {inbox.path!r}")
        .replace("FLAG = None", f"FLAG = {str(flag)!r}")
    )
    flag.touch()
    before = snapshot(src)
    cache_dir = fresh_cache(tmp_path / "cache", probe_cache)
    args = sphinx_build_command(src, tmp_path / "html", tmp_path / "report", "-D", f"snipcheck_runner={runner}")
    build = subprocess.Popen(
        args, env=subprocess_env(cache_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    try:
        found = host_pid(inbox.wait(120, process=build))  # type: ignore[arg-type]
        assert found is not None, "the sleeping snippet is not running"
        pid = found
        below = descendants(build.pid)
        assert pid in below  # the run, and for the fork runner its server too
        if taken_by == "main-thread":
            build.send_signal(signal.SIGINT)
        else:
            _ctrl_c_to_the_worker_threads(build)
        _, err = build.communicate(timeout=30)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 2
    assert "Interrupted!" in err
    assert wait_gone(pid), f"the interrupted snippet (pid {pid}) still runs"
    assert [p for p in below if not wait_gone(p)] == []
    # No half-written or temporary entry; the interrupted run is not cached.
    assert cached_ids(cache_dir) <= {"slow/quick"}
    assert snapshot(src) == before

    flag.unlink()
    again = subprocess.run(args, env=subprocess_env(cache_dir), capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    assert output_of(tmp_path / "html" / "index.html", "slow/sleeper") == "woke up\n"
    assert cached_ids(cache_dir) == {"slow/quick", "slow/sleeper"}
