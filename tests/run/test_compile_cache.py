"""Compile caches outlive a run for that code alone (issue 33 §7; ``run/compile_cache.py``).

Was: every run of the chapter's ``myths/compile-out-of-place`` compiled from
an empty inductor cache (``$TMPDIR/torchinductor_<user>``, inside the run
directory), 20 s of the chapter's 27 s cold build.  Now the folder a run
leaves there is kept per code (the snippet's whole source and inputs) and
environment and bound into the later runs of that code, and no other code's,
another version of the same snippet included.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import tempfile
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.run import PYTHON_RUNNERS, compile_cache, make_runner, sandbox
from snipcheck.sources.snippets import load

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0
LIMIT = 1 << 20

pytestmark = pytest.mark.skipif(
    sandbox.protection() is not None, reason=f"runs get no mount namespace here: {sandbox.protection()}"
)

LEAVE = """\
import getpass, os, tempfile
tmp = tempfile.gettempdir()
print(sorted(os.listdir(tmp)))
cache = os.path.join(tmp, "torchinductor_" + getpass.getuser())
os.makedirs(cache, exist_ok=True)
with open(os.path.join(cache, "entry%d" % len(os.listdir(cache))), "w") as f:
    f.write("compiled")
print(sorted(os.listdir(cache)))
"""


def write(root: Path, snippet_id: str, source: str) -> Snippet:
    path = root / "snippets" / f"{snippet_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return load(snippet_id, root / "snippets", root)


def stdout(result: RunResult) -> str:
    return "".join(e.text for e in result.events if e.stream == "stdout")


def kept_of(kept: Path, root: Path, snippet_id: str, stamp: Stamp) -> Path:
    """The kept folder of the snippet ``snippet_id`` of the project ``root``, as its code is now."""
    return compile_cache.folder(kept, compile_cache.code_key([load(snippet_id, root / "snippets", root)], {}), stamp.env)


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "compile"
    monkeypatch.setenv(compile_cache.VAR, str(folder))
    return folder


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_a_snippets_compile_cache_is_kept_for_its_later_runs_and_no_other_snippet(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path
) -> None:
    assert stamp.env
    root = tmp_path / "project"
    mine, other = write(root, "compiles", LEAVE), write(root, "other", LEAVE)
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([root]))  # fmt: skip
    try:
        outs = [stdout(runner.run(s, timeout=TIMEOUT, output_limit=LIMIT)) for s in (mine, mine, other, mine)]
    finally:
        getattr(runner, "close", lambda: None)()
    name = "torchinductor_" + getpass.getuser()
    assert outs == [
        "[]\n['entry0']\n",
        f"['{name}']\n['entry0', 'entry1']\n",  # what the first run left
        "[]\n['entry0']\n",  # another snippet: nothing of the first one's
        f"['{name}']\n['entry0', 'entry1', 'entry2']\n",
    ]
    folder = kept_of(kept, root, "compiles", stamp)
    assert sorted(p.name for p in folder.iterdir()) == ["entry0", "entry1", "entry2"]
    assert sorted(p.name for p in kept_of(kept, root, "other", stamp).iterdir()) == ["entry0"]
    assert [p.name for p in (kept / stamp.env).iterdir() if p.name.endswith(".part")] == []


PLANT = """\
import getpass, os, tempfile
cache = os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
os.makedirs(cache, exist_ok=True)
open(os.path.join(cache, "planted"), "w").write("8.")  # a pickled FX graph that inductor would load, say
print("planted")
"""
HONEST = """\
import getpass, os, tempfile
cache = os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
found = os.path.join(cache, "planted")
print("7." if not os.path.exists(found) else open(found).read())
"""


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_another_version_of_a_snippet_never_meets_what_an_earlier_version_left(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path
) -> None:
    # Was (an attacker's try): the kept folder was the snippet id's, so an
    # earlier version of a snippet (a pull request's) planted a pickle there
    # that inductor loaded in the later, honest version's runs, which then
    # printed the page's wrong output: a green that lied, from honest code.
    root = tmp_path / "project"
    planter = write(root, "compiled", PLANT)
    assert [out for out, _ in run_each(kind, stamp, root, [planter])] == ["planted\n"]
    honest = write(root, "compiled", HONEST)  # the same id, other code
    assert [out for out, _ in run_each(kind, stamp, root, [honest, honest])] == ["7.\n", "7.\n"]
    # a chain's folder is its cells' code: the same code with another cell after it is other code
    other = compile_cache.code_key([planter, honest], {})
    assert other not in (compile_cache.code_key([planter], {}), compile_cache.code_key([honest], {}))


ODD = """\
import getpass, os, tempfile
cache = os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
os.makedirs(os.path.join(cache, "sub"))
open(os.path.join(cache, "sub", "code.py"), "w").write("x = 1\\n")
os.symlink("/etc/hostname", os.path.join(cache, "link"))
os.mkfifo(os.path.join(cache, "fifo"))
os.chmod(os.path.join(cache, "sub", "code.py"), 0o4755)
print("left")
"""


def test_only_folders_files_and_links_are_kept_and_a_link_is_not_followed(tmp_path: Path, stamp: Stamp, kept: Path) -> None:
    root = tmp_path / "project"
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=(),
                         protect=sandbox.protected_paths([root]))  # fmt: skip
    try:
        assert stdout(runner.run(write(root, "odd", ODD), timeout=TIMEOUT, output_limit=LIMIT)) == "left\n"
        linked = write(root, "linked", f"import os, tempfile\nos.symlink('/etc', os.path.join(tempfile.gettempdir(), 'torchinductor_{getpass.getuser()}'))\n")
        runner.run(linked, timeout=TIMEOUT, output_limit=LIMIT)
    finally:
        runner.close()  # type: ignore[attr-defined]
    folder = kept_of(kept, root, "odd", stamp)
    assert sorted(p.name for p in folder.iterdir()) == ["link", "sub"]  # the FIFO is left out
    assert os.readlink(folder / "link") == "/etc/hostname"
    assert (folder / "sub" / "code.py").read_text() == "x = 1\n"
    assert (folder / "sub" / "code.py").stat().st_mode & 0o7777 == 0o755  # no set-id bit
    assert not os.path.lexists(kept_of(kept, root, "linked", stamp))  # a link is never kept


def test_without_a_folder_to_keep_them_in_nothing_is_kept(tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compile_cache.VAR, "0")
    assert compile_cache.root() is None
    assert compile_cache.plan("x", stamp.env, str(tmp_path), {"TMPDIR": str(tmp_path / "tmp")}) == ([], [])


def test_the_chapters_compiled_snippet_prints_the_same_with_its_cache_cold_and_warm(stamp: Stamp, kept: Path) -> None:
    if stamp.torch is None:
        pytest.skip("needs torch")
    snippet = load("myths/compile-out-of-place", ROOT / "snippets", ROOT)
    # preloaded as the chapter's conf.py preloads: torch._dynamo asks tempfile for its folder at import
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=("torch", "torch._dynamo"),
                         protect=sandbox.protected_paths([ROOT]))  # fmt: skip
    try:
        cold = runner.run(snippet, timeout=600, output_limit=LIMIT)
        assert (compile_cache.folder(kept, compile_cache.code_key([snippet], {}), stamp.env) / "fxgraph").is_dir()  # what inductor compiled, kept
        warm = runner.run(snippet, timeout=600, output_limit=LIMIT)
    finally:
        runner.close()  # type: ignore[attr-defined]
    assert cold.exit_status == warm.exit_status == 0, cold.events
    assert [(e.stream, e.kind, e.text) for e in warm.events] == [(e.stream, e.kind, e.text) for e in cold.events]
    assert "belief holds: True" in stdout(cold)


PROPAGATION = """\
import json, sys
from pathlib import Path
from snipcheck.run.environment import probe
from snipcheck.run import make_runner, sandbox
from snipcheck.sources.snippets import load

root = Path(sys.argv[1])
stamp = probe(sys.executable, root / "probe")
snippet = load("compiles", root / "snippets", root)
before = open("/proc/self/mountinfo").read().splitlines()
for kind in ("fork", "subprocess"):
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([root]))
    try:
        for _ in range(2):  # the second one binds the kept cache inside its run directory
            result = runner.run(snippet, timeout=60, output_limit=1 << 20)
            assert result.exit_status == 0, result.events
    finally:
        getattr(runner, "close", lambda: None)()
after = open("/proc/self/mountinfo").read().splitlines()
print(json.dumps([line for line in after if line not in before]))
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1)")
def test_no_mount_a_run_makes_reaches_the_builds_namespace_where_its_folders_are_shared(
    tmp_path: Path, kept: Path
) -> None:
    # On systemd machines every mount is shared: a bind made inside the run
    # directory of a run would then propagate to the build's namespace (and
    # keep the run directory busy) unless the run's copies are private.
    root = tmp_path / "project"
    write(root, "compiles", LEAVE)
    shared = tmp_path / "shared"
    shared.mkdir()
    script = tmp_path / "script.py"
    script.write_text(PROPAGATION)
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         f'mount -t tmpfs none "{shared}" && mount --make-shared "{shared}" && exec "$0" "$@"',
         sys.executable, str(script), str(root)],
        env={**os.environ, "TMPDIR": str(shared)}, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


PEEK = """\
import os
for folder in {folders!r}:
    print(sorted(os.listdir(folder)) if os.path.isdir(folder) else "none")
"""


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_no_other_snippets_run_can_read_a_kept_compile_cache_where_it_is_kept(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path
) -> None:
    # Was: the kept folders lay in the read-only view of every run, so any
    # snippet could list and read what another snippet's runs compiled.  Now
    # a run sees the folder that holds them empty.
    root = tmp_path / "project"
    mine = write(root, "compiles", LEAVE)
    theirs = kept_of(kept, root, "compiles", stamp)
    peek = write(root, "peek", PEEK.format(folders=[str(kept), str(kept / stamp.env), str(theirs)]))
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([root]))  # fmt: skip
    try:
        runner.run(mine, timeout=TIMEOUT, output_limit=LIMIT)
        assert theirs.is_dir()
        outs = [stdout(runner.run(peek, timeout=TIMEOUT, output_limit=LIMIT)) for _ in range(2)]
    finally:
        getattr(runner, "close", lambda: None)()
    assert outs == ["[]\nnone\nnone\n"] * 2


REDIRECT = """\
import os, tempfile
tmp = tempfile.gettempdir()
os.rename(tmp, tmp + ".gone")
os.symlink({target!r}, tmp)
print("redirected")
"""


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_a_run_cannot_have_a_folder_outside_its_run_directory_kept_as_its_compile_cache(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path
) -> None:
    # Was: the supervisor copied $TMPDIR/torchinductor_<user> following a link
    # the run put in its place of $TMPDIR, in the build's view of the files:
    # what lies there (another run's directory, hidden from this run) became
    # this snippet's kept cache, bound into its next run.
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / f"torchinductor_{getpass.getuser()}").mkdir(parents=True)
    (elsewhere / f"torchinductor_{getpass.getuser()}" / "secret").write_text("not the run's")
    root = tmp_path / "project"
    snippet = write(root, "redirect", REDIRECT.format(target=str(elsewhere)))
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([root]))  # fmt: skip
    try:
        assert stdout(runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)) == "redirected\n"
    finally:
        getattr(runner, "close", lambda: None)()
    assert not os.path.lexists(kept_of(kept, root, "redirect", stamp))


GROW = """\
import getpass, os, tempfile
cache = os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
os.makedirs(cache, exist_ok=True)
with open(os.path.join(cache, "entry%d" % len(os.listdir(cache))), "wb") as f:
    f.write(b"x" * {size})
print(sorted(os.listdir(cache)))
"""


def run_each(
    kind: str, stamp: Stamp, root: Path, snippets: list[Snippet], after: Callable[[], object] = lambda: None,
    timeout: float = TIMEOUT,
) -> list[tuple[str, object]]:
    """Run ``snippets`` one after the other in one runner of ``kind``: each one's stdout, and ``after()`` then."""
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([root]))  # fmt: skip
    try:
        return [(stdout(runner.run(s, timeout=timeout, output_limit=LIMIT)), after()) for s in snippets]
    finally:
        getattr(runner, "close", lambda: None)()


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_a_compile_cache_larger_than_the_budget_is_not_kept(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was: any folder up to 4 GiB was kept for good (a trial kept a 300 MB
    # file a snippet wrote there); now SNIPCHECK_COMPILE_CACHE_SIZE bounds it.
    monkeypatch.setenv(compile_cache.SIZE_VAR, "8K")
    root = tmp_path / "project"
    large, small = write(root, "large", GROW.format(size=9000)), write(root, "small", GROW.format(size=4000))
    outs = [out for out, _ in run_each(kind, stamp, root, [large, large, small, small])]
    assert outs == ["['entry0']\n", "['entry0']\n", "['entry0']\n", "['entry0', 'entry1']\n"]
    assert not os.path.lexists(kept_of(kept, root, "large", stamp))
    assert sorted(p.name for p in kept_of(kept, root, "small", stamp).iterdir()) == ["entry0", "entry1"]


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_a_kept_compile_cache_a_later_run_grows_past_the_budget_is_dropped_after_that_run(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was: a later run has its kept folder bound writable, and whatever it
    # wrote there stayed, with no bound at all.
    monkeypatch.setenv(compile_cache.SIZE_VAR, "10K")
    root = tmp_path / "project"
    grows = write(root, "grows", GROW.format(size=4000))
    folder = kept_of(kept, root, "grows", stamp)
    seen = run_each(kind, stamp, root, [grows] * 4, after=lambda: compile_cache.size_of(folder) if folder.exists() else None)
    outs, sizes = [out for out, _ in seen], [size for _, size in seen]
    assert outs == ["['entry0']\n", "['entry0', 'entry1']\n", "['entry0', 'entry1', 'entry2']\n", "['entry0']\n"]
    assert sizes == [4000, 8000, None, 4000]  # 12,000 bytes > 10K: dropped; the next run keeps a new one
    assert [p.name for p in (kept / stamp.env).iterdir()] == [folder.name]  # nothing half-removed left


def _kept_folder(base: Path, env: str, name: str, size: int, used: float) -> Path:
    folder = base / env / name
    folder.mkdir(parents=True)
    (folder / "code.so").write_bytes(b"x" * size)
    os.utime(folder, (used, used))
    return folder


def test_prune_drops_the_least_recently_used_folders_down_to_the_budget_but_none_used_within_the_grace(tmp_path: Path) -> None:
    now = 10_000_000.0
    old = now - compile_cache.GRACE - 10
    oldest = _kept_folder(tmp_path, "envA", "a" * 32, 3000, old - 100)
    older = _kept_folder(tmp_path, "envA", "b" * 32, 3000, old - 50)
    newer = _kept_folder(tmp_path, "envB", "c" * 32, 3000, old)
    recent = _kept_folder(tmp_path, "envB", "d" * 32, 3000, now - 60)
    stale = _kept_folder(tmp_path, "envB", "e" * 32 + ".0123.part", 10, old)
    fresh = _kept_folder(tmp_path, "envB", "f" * 32 + ".4567.part", 10, now - 60)

    dropped = compile_cache.prune(tmp_path, 6500, now=now)

    assert dropped == [oldest, older]  # 12,000 -> 6,000 bytes: the two least recently used go
    assert not oldest.exists() and not older.exists() and not stale.exists()
    assert newer.is_dir() and recent.is_dir() and fresh.is_dir()
    assert not (tmp_path / "envA").exists()  # an environment left empty goes too
    # Over any budget, a folder used within the grace period stays.
    assert compile_cache.prune(tmp_path, 0, now=now) == [newer]
    assert recent.is_dir()


def test_the_first_run_of_a_process_prunes_the_kept_folders_to_the_budget(
    tmp_path: Path, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compile_cache, "_pruned", set())
    monkeypatch.setenv(compile_cache.SIZE_VAR, "5000")
    old = time.time() - compile_cache.GRACE - 10
    a = _kept_folder(kept, "env", "a" * 32, 4000, old - 1)
    b = _kept_folder(kept, "env", "b" * 32, 4000, old)
    assert compile_cache.hidden() == [os.path.realpath(kept)]
    assert not a.exists() and b.is_dir()
    c = _kept_folder(kept, "env", "c" * 32, 4000, old)
    compile_cache.hidden()  # once a process: a run may have one bound by now
    assert c.is_dir()


@pytest.mark.parametrize(
    ("value", "size"), [("", compile_cache.DEFAULT_SIZE), ("2048", 2048), ("500M", 500 << 20), ("2g", 2 << 30), ("64KiB", 64 << 10)]
)
def test_the_budget_is_read_from_the_environment(value: str, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compile_cache.SIZE_VAR, value)
    assert compile_cache.limit() == size


def test_a_budget_that_is_not_a_size_is_warned_about_once_and_the_default_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # The logger's own calls are counted: which handlers a record reaches
    # depends on what earlier tests of the worker left on the loggers.
    said: list[str] = []

    class Log:
        def warning(self, message: str, *args: object) -> None:
            said.append(message % args)

    monkeypatch.setattr(compile_cache, "log", Log())
    monkeypatch.setattr(compile_cache, "_warned", set())
    monkeypatch.setenv(compile_cache.SIZE_VAR, "lots")
    assert [compile_cache.limit() for _ in range(3)] == [compile_cache.DEFAULT_SIZE] * 3
    assert len(said) == 1 and "'lots' is not a size" in said[0], said


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_kept_compile_caches_inside_a_project_under_tmp_show_empty_to_every_run(
    kind: str, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was (trial, stop 45): with the project under /tmp and the kept caches in
    # it, the run's own /tmp hid them only until the project was bound back
    # read-only, with everything in it: any snippet read every other
    # snippet's kept cache (and another run's half-copied one).
    root = Path(tempfile.mkdtemp(prefix="snipcheck-test-project-", dir="/tmp"))
    try:
        kept = root / "_cc"
        monkeypatch.setenv(compile_cache.VAR, str(kept))
        mine = write(root, "compiles", LEAVE)
        theirs = kept_of(kept, root, "compiles", stamp)
        peek = write(root, "peek", PEEK.format(folders=[str(root / "snippets"), str(kept), str(theirs)]))
        outs = [out for out, _ in run_each(kind, stamp, root, [mine, peek, peek])]
        assert theirs.is_dir()
    finally:
        shutil.rmtree(root)
    assert outs[1:] == ["['compiles.py', 'peek.py']\n[]\nnone\n"] * 2


def test_a_relative_folder_for_the_kept_caches_is_taken_from_the_current_folder(
    tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Was (trial, stop 45): a relative SNIPCHECK_COMPILE_CACHE_DIR kept nothing,
    # silently: the supervisor copied the folder relative to its own working
    # directory (the fork server's home, removed with it).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(compile_cache.VAR, "relcc")
    assert compile_cache.root() == tmp_path / "relcc"
    root = tmp_path / "project"
    mine = write(root, "compiles", LEAVE)
    outs = [out for out, _ in run_each("fork", stamp, root, [mine, mine])]
    assert outs[1].endswith("['entry0', 'entry1']\n")
    assert (kept_of(tmp_path / "relcc", root, "compiles", stamp) / "entry0").is_file()


STOPPED = """\
import getpass, os, tempfile
cache = os.path.join(tempfile.gettempdir(), "torchinductor_" + getpass.getuser())
os.makedirs(cache, exist_ok=True)
n = len(os.listdir(cache))
with open(os.path.join(cache, "entry%d" % n), "w") as f:
    f.write("half")
    print(sorted(os.listdir(cache)), flush=True)
    while n == 1:  # the second run: stopped at its timeout (CPU seconds) in the middle of its write
        pass
"""


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_a_kept_compile_cache_a_stopped_run_had_bound_is_dropped(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path
) -> None:
    # Was (trial, stop 45): a later run stopped at its timeout while it wrote
    # into its bound kept folder left the half-written file there for good.
    root = tmp_path / "project"
    stopped = write(root, "stopped", STOPPED)
    folder = kept_of(kept, root, "stopped", stamp)
    seen = run_each(kind, stamp, root, [stopped] * 3, after=folder.exists, timeout=1)
    assert seen == [("['entry0']\n", True), ("['entry0', 'entry1']\n", False), ("['entry0']\n", True)]


@pytest.mark.parametrize("kind", PYTHON_RUNNERS)
def test_run_directories_made_through_a_link_are_resolved_and_keep_their_cache(
    kind: str, tmp_path: Path, stamp: Stamp, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder run directories are made in is resolved once per process
    (not each run directory): made through a link, a run still reads its
    working directory as [CWD] and its TMPDIR as its own, so its compile
    cache is kept."""
    from snipcheck.run import python

    real = tmp_path / "real-tmp"
    real.mkdir()
    (tmp_path / "linked-tmp").symlink_to(real)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "linked-tmp"))
    monkeypatch.setitem(python._run_root, "root", None)  # tempfile's folder, not /dev/shm
    root = tmp_path / "project"
    snippet = write(root, "linked", "import os\nprint(os.getcwd())\n" + LEAVE)
    first, second = [out for out, _ in run_each(kind, stamp, root, [snippet, snippet])]
    assert first.splitlines()[0] == "[CWD]" and first.splitlines()[-1] == "['entry0']"
    assert second.splitlines()[-1] == "['entry0', 'entry1']", second
