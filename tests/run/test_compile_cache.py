"""Compile caches outlive a run for that snippet alone (issue 33 §7; ``run/compile_cache.py``).

Was: every run of the chapter's ``myths/compile-out-of-place`` compiled from
an empty inductor cache (``$TMPDIR/torchinductor_<user>``, inside the run
directory), 20 s of the chapter's 27 s cold build.  Now the folder a run
leaves there is kept per snippet and environment and bound into that
snippet's later runs, and no other snippet's.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
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
    folder = compile_cache.folder(kept, "compiles", stamp.env)
    assert sorted(p.name for p in folder.iterdir()) == ["entry0", "entry1", "entry2"]
    assert sorted(p.name for p in compile_cache.folder(kept, "other", stamp.env).iterdir()) == ["entry0"]
    assert [p.name for p in (kept / stamp.env).iterdir() if p.name.endswith(".part")] == []


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
    folder = compile_cache.folder(kept, "odd", stamp.env)
    assert sorted(p.name for p in folder.iterdir()) == ["link", "sub"]  # the FIFO is left out
    assert os.readlink(folder / "link") == "/etc/hostname"
    assert (folder / "sub" / "code.py").read_text() == "x = 1\n"
    assert (folder / "sub" / "code.py").stat().st_mode & 0o7777 == 0o755  # no set-id bit
    assert not os.path.lexists(compile_cache.folder(kept, "linked", stamp.env))  # a link is never kept


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
        assert (compile_cache.folder(kept, snippet.id, stamp.env) / "fxgraph").is_dir()  # what inductor compiled, kept
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
    theirs = compile_cache.folder(kept, "compiles", stamp.env)
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
    assert not os.path.lexists(compile_cache.folder(kept, "redirect", stamp.env))
