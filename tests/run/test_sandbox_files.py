"""What a snippet may touch on disk (issue 23 item 2): the project is read-only to it.

Where the kernel allows it (root, or ``CAP_SYS_ADMIN``), every run has a mount
namespace of its own (``run/bootstrap/_snipcheck_mounts.py``): the sources,
the snippets, the git work tree and git directory, the build's outputs, cache
and report folders are read-only bind mounts (``EROFS``, "Read-only file
system"), ``/tmp`` and ``/dev/shm`` are fresh tmpfs mounts that go with the
run, and the run directory stays writable.

Was: a snippet that did ``os.chdir("<project>/docs"); os.remove("victim.md")``
removed the page and the build crashed inside Sphinx; one that wrote another
snippet's file by its absolute path rewrote it; a 50 MiB file left in
``/dev/shm`` outlived the build.  Each test here fails without the mount
namespace (``git stash`` the change and run it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import fresh_cache
from helpers import html, plain
from run_command_support import cli_env, cli_project
from snipcheck.model import Snippet, Stamp
from snipcheck.run import PYTHON_RUNNERS, make_runner, sandbox
from snipcheck.sources.snippets import load
from faults_support import Build, snapshot, sphinx_build

TIMEOUT = 60.0
LIMIT = 1 << 20
SHM_BYTES = 50 << 20

needs_protection = pytest.mark.skipif(
    sandbox.protection() is not None, reason=f"runs get no mount namespace here: {sandbox.protection()}"
)
pytestmark = needs_protection


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)


#: Tries each write; prints what the kernel answered.  Every protected path is
#: reached by its absolute path, the page also by a relative one after chdir.
ATTACKS = '''\
import os

def attempt(name, act):
    try:
        act()
    except OSError as exc:
        print(f"{{name}}: {{exc.strerror}}")
    else:
        print(f"{{name}}: done")

def write(path, mode="w", data=""):
    with open(path, mode) as f:
        f.write(data)

def remove_page():
    os.chdir({root!r} + "/docs")
    os.remove("victim.md")

start = os.getcwd()  # the run directory
attempt("remove a page", remove_page)
os.chdir(start)
attempt("rename a page", lambda: os.rename({root!r} + "/docs/victim.md", {root!r} + "/docs/moved.md"))
attempt("overwrite another snippet", lambda: write({root!r} + "/snippets/vandal/other.py", data="print('hijacked')\\n"))
attempt("plant a snippet", lambda: write({root!r} + "/snippets/vandal/planted.py", "x"))
attempt("git hook", lambda: write({root!r} + "/.git/hooks/pre-commit", data="#!/bin/sh\\n"))
attempt("git config", lambda: write({root!r} + "/.git/config", "a", "[core]\\n"))
attempt("chmod conf.py", lambda: os.chmod({root!r} + "/conf.py", 0o777))
attempt("build output", lambda: write({outdir!r} + "/sentinel.txt", data="changed"))
attempt("doctrees", lambda: write({doctrees!r} + "/planted", "x"))
attempt("cache", lambda: os.remove({cache!r} + "/sentinel"))
attempt("report", lambda: write({report!r} + "/sentinel", "a", "changed"))
attempt("its own folder", lambda: write("mine.txt", data="x"))
attempt("/tmp", lambda: write("/tmp/{token}", data="x"))
attempt("/dev/shm", lambda: write("/dev/shm/{token}", "wb", b"\\0" * {shm}))
'''

STATED = """\
remove a page: Read-only file system
rename a page: Read-only file system
overwrite another snippet: Read-only file system
plant a snippet: Read-only file system
git hook: Read-only file system
git config: Read-only file system
chmod conf.py: Read-only file system
build output: Read-only file system
doctrees: Read-only file system
cache: Read-only file system
report: Read-only file system
its own folder: done
/tmp: done
/dev/shm: done
"""

REMOVE = '''\
import os
os.chdir({root!r} + "/docs")
os.remove("victim.md")
# /// snipcheck
# expect = "OSError"
# ///
'''

REMOVE_STATED = """\
Traceback (most recent call last):
  File "snippets/vandal/remove.py", line 3, in <module>
    os.remove("victim.md")
OSError: [Errno 30] Read-only file system: 'victim.md'
"""

VICTIM = "---\norphan: true\n---\n# Victim\n\nStill here.\n"

INDEX = """\
# Vandals

```{{snippet}} vandal/attacks
{attacks}```

```{{snippet}} vandal/remove
{remove}```

```{{snippet}} vandal/other
other
```
"""


@dataclass
class Vandalised:
    build: Build
    root: Path
    token: str
    kept: dict[str, dict[str, str]]  # snapshots of the folders outside the sources, before the build

    def shown(self, snippet_id: str) -> str:
        div = html(self.build.outdir / "docs" / "index.html").find(id="snippet-" + snippet_id.replace("/", "-"))
        assert div is not None, snippet_id
        return div.find(class_="snipcheck-output").find("pre").get_text()


def sentinels(tmp: Path) -> dict[str, Path]:
    folders = {"outdir": tmp / "_build" / "html", "doctrees": tmp / "_build" / "doctrees",
               "cache": tmp / "cache", "report": tmp / "report"}  # fmt: skip
    for name, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ("sentinel.txt" if name == "outdir" else "sentinel")).write_text(f"{name} as it was\n")
    return folders


@pytest.fixture(scope="module", params=PYTHON_RUNNERS)
def vandalised(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, probe_cache: Path) -> Iterator[Vandalised]:
    tmp = tmp_path_factory.mktemp(f"vandal-{request.param}")
    root = tmp / "project"
    token = f"snipcheck-test-{uuid.uuid4().hex}"
    folders = sentinels(tmp)
    fresh_cache(folders["cache"], probe_cache)
    (root / "snippets" / "vandal").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "conf.py").write_text(
        'extensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nexclude_patterns = ["_build"]\n'
        "snipcheck_preload = []\nsnipcheck_fork_min_runs = 0\nroot_doc = \"docs/index\"\n"
    )
    (root / "docs" / "victim.md").write_text(VICTIM)
    paths = {"root": str(root), "outdir": str(folders["outdir"]), "doctrees": str(folders["doctrees"]),
             "cache": str(folders["cache"]), "report": str(folders["report"]), "token": token, "shm": SHM_BYTES}  # fmt: skip
    (root / "snippets" / "vandal" / "attacks.py").write_text(ATTACKS.format(**paths))
    (root / "snippets" / "vandal" / "remove.py").write_text(REMOVE.format(root=str(root)))
    (root / "snippets" / "vandal" / "other.py").write_text("print('other')\n")
    (root / "docs" / "index.md").write_text(INDEX.format(attacks=STATED, remove=REMOVE_STATED))
    git_init(root)
    kept = {name: snapshot(folder) for name, folder in folders.items()}
    try:
        build = sphinx_build(
            root, tmp, folders["cache"], {"snipcheck_runner": request.param, "snipcheck_report_dir": str(folders["report"])}
        )
        yield Vandalised(build, root, token, kept)
    finally:
        for left in (Path("/tmp") / token, Path("/dev/shm") / token):
            left.unlink(missing_ok=True)  # only where a test fails


def test_the_build_reports_each_snippets_own_read_only_error_and_does_not_crash(vandalised: Vandalised) -> None:
    build = vandalised.build
    assert build.warnings == [], build.warnings
    assert build.other_warnings == [], build.other_warnings
    assert build.statuscode == 0
    assert vandalised.shown("vandal/attacks") == STATED
    assert vandalised.shown("vandal/remove") == REMOVE_STATED
    assert vandalised.shown("vandal/other") == "other\n"
    assert (build.outdir / "docs" / "victim.html").exists()


def test_every_protected_byte_is_unchanged(vandalised: Vandalised) -> None:
    build = vandalised.build
    assert build.after == build.before  # the sources, snippets and .git (it lies in the project)
    assert (vandalised.root / "docs" / "victim.md").read_text() == VICTIM
    assert (vandalised.root / "snippets" / "vandal" / "other.py").read_text() == "print('other')\n"
    for name, before in vandalised.kept.items():
        folder = {"outdir": build.outdir, "doctrees": build.outdir.parent / "doctrees",
                  "cache": build.cache_dir, "report": build.report_dir}[name]  # fmt: skip
        sentinel = "sentinel.txt" if name == "outdir" else "sentinel"
        assert (folder / sentinel).read_text() == f"{name} as it was\n", name
        assert {k: v for k, v in snapshot(folder).items() if k == sentinel} == {sentinel: before[sentinel]}


def test_files_left_in_tmp_and_dev_shm_are_gone_after_the_build(vandalised: Vandalised) -> None:
    assert not (Path("/tmp") / vandalised.token).exists()
    assert not (Path("/dev/shm") / vandalised.token).exists()


# --- the runners, on their own ------------------------------------------------


def write(root: Path, snippet_id: str, source: str) -> Snippet:
    path = root / "snippets" / f"{snippet_id}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return load(snippet_id, root / "snippets", root)


def stdout(result) -> str:
    return "".join(e.text for e in result.events if e.stream == "stdout")


@pytest.fixture(params=PYTHON_RUNNERS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def runner_for(kind: str, stamp: Stamp, *protect: Path):
    return make_runner(
        "python", python=sys.executable, stamp=stamp, kind=kind, preload=(), protect=sandbox.protected_paths(protect)
    )


LEAVE = """\
import os
print(sorted(n for n in os.listdir("/tmp") if n.startswith("snipcheck-test-")))
print(sorted(n for n in os.listdir("/dev/shm") if n.startswith("snipcheck-test-")))
with open("/dev/shm/{token}", "wb") as f:
    f.write(b"\\0" * {size})
with open("/tmp/{token}", "w") as f:
    f.write("left")
print(os.path.getsize("/dev/shm/{token}"), open("/tmp/{token}").read())
"""


def test_a_runs_tmp_and_dev_shm_are_its_own_and_go_with_it(kind: str, tmp_path: Path, stamp: Stamp) -> None:
    token = f"snipcheck-test-{uuid.uuid4().hex}"
    root = tmp_path / "project"
    snippet = write(root, "leave", LEAVE.format(token=token, size=SHM_BYTES))
    runner = runner_for(kind, stamp, root)
    try:
        first = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        second = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    finally:
        getattr(runner, "close", lambda: None)()
        for left in (Path("/tmp") / token, Path("/dev/shm") / token):
            gone = not left.exists()
            left.unlink(missing_ok=True)
            assert gone, f"{left} outlived its run"
    for result in (first, second):
        assert result.exit_status == 0, result.events
        assert stdout(result) == f"[]\n[]\n{SHM_BYTES} left\n"  # the second run does not see the first's


def test_the_run_directory_stays_writable_where_it_lies_inside_the_project(tmp_path: Path) -> None:
    # TMPDIR inside the project: the run directory lies in a protected folder.
    inside = tmp_path / "p" / "_tmp"
    inside.mkdir(parents=True)
    source = textwrap.dedent(
        f"""\
        import os, tempfile
        open("here.txt", "w").write("cwd\\n")
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("tmp\\n")
        os.makedirs(os.path.expanduser("~/.config"), exist_ok=True)
        print(open("here.txt").read() + open(f.name).read(), end="")
        try:
            open({str(tmp_path / "p" / "conf.py")!r}, "a").write("# changed\\n")
        except OSError as exc:
            print(exc.strerror)
        """
    )
    root = tmp_path / "p"
    for runner in PYTHON_RUNNERS:
        cli_project(root, runner, {"inside": source})
        if runner == PYTHON_RUNNERS[0]:
            git_init(root)
            before = snapshot(root)
        done = subprocess.run(
            [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", "run", "inside"],
            capture_output=True, text=True, env={**cli_env(tmp_path), "TMPDIR": str(inside)}, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "cwd\ntmp\nRead-only file system\n" in plain(done.stdout), done.stdout
    after = snapshot(root)
    assert {k: v for k, v in after.items() if not k.startswith(("_tmp/", "conf.py"))} == {
        k: v for k, v in before.items() if not k.startswith(("_tmp/", "conf.py"))
    }
    assert "# changed" not in (root / "conf.py").read_text()
    assert [p.name for p in inside.iterdir() if p.name.startswith("snipcheck-")] == []


def test_a_project_under_tmp_stays_readable_and_read_only(kind: str, stamp: Stamp) -> None:
    # /tmp is covered by the run's own tmpfs; the project is bound back onto it.
    base = Path(tempfile.mkdtemp(prefix="snipcheck-test-", dir="/tmp"))
    try:
        root = base / "project"
        (root / "data").mkdir(parents=True)
        (root / "data" / "t.csv").write_text("a,b\n1,2\n")
        snippet = write(
            root,
            "under-tmp",
            f"import os\nprint(open({str(root / 'data' / 't.csv')!r}).read(), end='')\n"
            f"try:\n    os.remove({str(root / 'data' / 't.csv')!r})\nexcept OSError as exc:\n    print(exc.strerror)\n"
            f"print(sorted(os.listdir({str(base)!r})))\n",
        )
        runner = runner_for(kind, stamp, root)
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        assert result.exit_status == 0, result.events
        assert stdout(result) == "a,b\n1,2\nRead-only file system\n['project']\n"
        assert (root / "data" / "t.csv").read_text() == "a,b\n1,2\n"
    finally:
        shutil.rmtree(base)


def test_an_interpreter_and_its_imports_under_tmp_still_start_and_stay_read_only(kind: str, stamp: Stamp) -> None:
    """Was: a checkout under ``/tmp`` (its nox virtual environment there too)
    could not start one run: the run's own, empty ``/tmp`` hid the interpreter
    ("could not start the run: FileNotFoundError") and its site-packages.  What
    a run needs to start is bound back read-only (``sandbox.needed_paths``)."""
    base = Path(tempfile.mkdtemp(prefix="snipcheck-test-", dir="/tmp"))
    try:
        venv = base / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                       check=True, capture_output=True, timeout=120)  # fmt: skip
        python = venv / "bin" / "python"
        site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   check=True, capture_output=True, text=True).stdout.strip())  # fmt: skip
        (site / "under_tmp_helper.py").write_text("WHERE = 'from the venv under /tmp'\n")
        (site / "snipcheck_src.pth").write_text(str(Path(sandbox.__file__).parents[2]) + "\n")  # an editable install
        root = Path(tempfile.mkdtemp(prefix="snipcheck-test-", dir="/var/tmp")) / "project"
        snippet = write(
            root,
            "venv-under-tmp",
            "import sys, under_tmp_helper\nprint(under_tmp_helper.WHERE, sys.prefix == sys.base_prefix)\n"
            f"try:\n    open({str(site / 'under_tmp_helper.py')!r}, 'a').write('# changed')\n"
            "except OSError as exc:\n    print(exc.strerror)\n",
        )
        runner = make_runner("python", python=str(python), stamp=stamp, kind=kind, preload=(),
                             protect=sandbox.protected_paths([root]))  # fmt: skip
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
            shutil.rmtree(root.parent)
        assert result.exit_status == 0, result.events
        assert stdout(result) == "from the venv under /tmp False\nRead-only file system\n"
        assert (site / "under_tmp_helper.py").read_text() == "WHERE = 'from the venv under /tmp'\n"
        assert str(venv.resolve()) in sandbox.needed_paths(str(python))
    finally:
        shutil.rmtree(base)


def test_a_folder_made_or_made_anew_after_the_first_run_is_protected_as_it_is_now(
    kind: str, tmp_path: Path, stamp: Stamp
) -> None:
    # A fork server slot makes its read-only views once, for all its runs: a
    # folder that did not exist yet (the cache a first run makes) or was made
    # anew (an output folder removed and made again) must be what the next run
    # sees, read-only.
    root, cache, out = tmp_path / "project", tmp_path / "cache", tmp_path / "out"
    (out / "old").mkdir(parents=True)
    source = textwrap.dedent(
        f"""\
        import os
        for folder in ({str(cache)!r}, {str(out)!r}):
            try:
                print(sorted(os.listdir(folder)), end=" ")
                open(os.path.join(folder, "planted"), "w").close()
                print("planted")
            except OSError as exc:
                print(exc.strerror)
        """
    )
    snippet = write(root, "later", source)
    runner = runner_for(kind, stamp, root, cache, out)
    try:
        first = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        cache.mkdir()
        (cache / "entry").write_text("x")
        shutil.rmtree(out)
        (out / "new").mkdir(parents=True)
        second = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        out.rename(tmp_path / "out.old")  # renamed away: a bind on it goes along
        (out / "newer").mkdir(parents=True)
        third = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    finally:
        getattr(runner, "close", lambda: None)()
    assert stdout(first) == "No such file or directory\n['old'] Read-only file system\n"
    assert stdout(second) == "['entry'] Read-only file system\n['new'] Read-only file system\n"
    assert stdout(third) == "['entry'] Read-only file system\n['newer'] Read-only file system\n"
    assert sorted(p.name for p in cache.iterdir()) == ["entry"]
    assert sorted(p.name for p in out.iterdir()) == ["newer"]


def test_a_chain_shares_its_tmp_between_cells_and_cannot_change_the_project(kind: str, tmp_path: Path, stamp: Stamp) -> None:
    token = f"snipcheck-test-{uuid.uuid4().hex}"
    root = tmp_path / "project"
    page = root / "docs" / "page.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Page\n")
    cells = [
        write(root, "chain/one", f"open('/tmp/{token}', 'w').write('from cell one')\nprint('one')\n"),
        write(
            root,
            "chain/two",
            f"import os\nprint(open('/tmp/{token}').read())\n"
            f"try:\n    os.remove({str(page)!r})\nexcept OSError as exc:\n    print(exc.strerror)\n",
        ),
    ]
    runner = runner_for(kind, stamp, root)
    try:
        results = runner.run_chain(cells, timeouts=[TIMEOUT, TIMEOUT], output_limit=LIMIT)  # type: ignore[attr-defined]
    finally:
        getattr(runner, "close", lambda: None)()
        left = Path("/tmp") / token
        gone = not left.exists()
        left.unlink(missing_ok=True)
    assert [stdout(r) for r in results] == ["one\n", "from cell one\nRead-only file system\n"]
    assert gone
    assert page.read_text() == "# Page\n"


RUST_VANDAL = """\
fn main() {{
    match std::fs::remove_file("{page}") {{
        Ok(()) => println!("removed"),
        Err(e) => println!("{{}}", e),
    }}
    std::fs::write("/dev/shm/{token}", b"left").unwrap();
}}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (a Rust toolchain)")
def test_a_rust_binary_cannot_change_the_project(tmp_path: Path) -> None:
    from snipcheck.run.environment import rustc_version
    from snipcheck.run.python import DEFAULT_MEMORY_LIMIT
    from snipcheck.run.rust import RustRunner

    token = f"snipcheck-test-{uuid.uuid4().hex}"
    root = tmp_path / "project"
    (root / "snippets").mkdir(parents=True)
    (root / "page.md").write_text("# Page\n")
    (root / "snippets" / "vandal.rs").write_text(RUST_VANDAL.format(page=root / "page.md", token=token))
    stamp = Stamp(python="", torch=None, device="CPU", platform="Linux", rustc=rustc_version())
    runner = RustRunner(tmp_path / "build", stamp, DEFAULT_MEMORY_LIMIT, sandbox.protected_paths([root]))
    result = runner.run(load("vandal", root / "snippets", root), timeout=300, output_limit=LIMIT)
    left = Path("/dev/shm") / token
    gone = not left.exists()
    left.unlink(missing_ok=True)
    assert result.exit_status == 0, result.events
    assert stdout(result) == "Read-only file system (os error 30)\n"
    assert (root / "page.md").read_text() == "# Page\n"
    assert gone


# --- the command line ----------------------------------------------------------


def cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(root), *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def cli_vandal(tmp_path: Path, runner: str) -> tuple[Path, str]:
    """A project whose snippets and report folders lie outside its conf.py's
    folder, as the settings allow, with its cache in ``SNIPCHECK_CACHE_DIR``."""
    token = f"snipcheck-test-{uuid.uuid4().hex}"
    root, snippets, report = tmp_path / "p", tmp_path / "snippets-outside", tmp_path / "report-outside"
    out = root / "_build"
    source = ATTACKS.format(root=str(root), outdir=str(out / "html"), doctrees=str(out / "doctrees"),
                            cache=str(tmp_path / "cache"), report=str(report), token=token, shm=SHM_BYTES)  # fmt: skip
    cli_project(root, runner, {}, extensions=["myst_nb", "snipcheck"], nb_execution_mode="off", root_doc="docs/index",
                snipcheck_snippets_dir="../snippets-outside", snipcheck_report_dir="../report-outside")  # fmt: skip
    (snippets / "vandal").mkdir(parents=True)
    (snippets / "vandal" / "attacks.py").write_text(source.replace("/snippets/vandal/", "/../snippets-outside/vandal/"))
    (snippets / "vandal" / "other.py").write_text("print('other')\n")
    (root / "docs").mkdir()
    (root / "docs" / "victim.md").write_text("# Victim\n")
    (root / "docs" / "index.md").write_text("# Vandals\n\n```{snippet} vandal/attacks\n```\n")
    for folder in (out / "html", out / "doctrees", report, tmp_path / "cache"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ("sentinel.txt" if folder.name == "html" else "sentinel")).write_text("as it was\n")
    git_init(root)
    return root, token


@pytest.mark.parametrize("runner", PYTHON_RUNNERS)
def test_record_and_verify_keep_the_project_read_only_to_the_snippets(tmp_path: Path, runner: str) -> None:
    root, token = cli_vandal(tmp_path, runner)
    outside = tmp_path / "snippets-outside" / "vandal"
    env = cli_env(tmp_path)
    try:
        recorded = cli(root, env, "--no-cache", "record", "vandal/attacks")
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        page = (root / "docs" / "index.md").read_text()
        assert page == "# Vandals\n\n```{snippet} vandal/attacks\n" + STATED + "```\n"
        assert (root / "docs" / "victim.md").read_text() == "# Victim\n"
        assert (outside / "other.py").read_text() == "print('other')\n"
        assert not (outside / "planted.py").exists()
        assert not (root / ".git" / "hooks" / "pre-commit").exists()
        for sentinel in (root / "_build" / "html" / "sentinel.txt", tmp_path / "cache" / "sentinel",
                         tmp_path / "report-outside" / "sentinel"):  # fmt: skip
            assert sentinel.read_text() == "as it was\n", sentinel
        before = {"project": snapshot(root), "snippets": snapshot(outside)}
        verified = cli(root, env, "--no-cache", "verify")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "note:" not in verified.stderr
        assert {"project": snapshot(root), "snippets": snapshot(outside)} == before
    finally:
        shm, tmp = Path("/dev/shm") / token, Path("/tmp") / token
        gone = not shm.exists() and not tmp.exists()
        shm.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    assert gone


def test_verify_says_once_when_runs_get_no_mount_namespace(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p", "fork", {"a": "print('a')\n", "b": "print('b')\n"},
                       extensions=["myst_nb", "snipcheck"], nb_execution_mode="off")  # fmt: skip
    (root / "index.md").write_text("# P\n\n```{snippet} a\na\n```\n\n```{snippet} b\nb\n```\n")
    done = cli(root, cli_env(tmp_path, SNIPCHECK_NAMESPACES="0"), "--no-cache", "verify")
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        (
            "note: no PID or mount namespace for the runs here (SNIPCHECK_NAMESPACES=0): each run's supervisor still "
        "ends what the snippet started, but a snippet could signal other processes of this user, change or remove "
            "the project's files and any other its user may change, and leave files in /tmp and /dev/shm"
        )
    ]


def test_protected_paths_add_the_git_work_tree_and_its_directories(tmp_path: Path) -> None:
    main = tmp_path / "main"
    git_init(main)
    (main / "f").write_text("x")
    subprocess.run(["git", "-C", str(main), "add", "f"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "f"],
                   check=True, capture_output=True)  # fmt: skip
    linked = tmp_path / "elsewhere" / "linked"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(linked)], check=True, capture_output=True)
    (linked / "docs").mkdir()
    found = sandbox.protected_paths([linked / "docs", tmp_path / "cache-not-made-yet", "/"])
    # the linked tree holds docs; its own git directory lies inside the common one, main/.git
    assert set(found) == {str(linked), str(main / ".git"), str(tmp_path / "cache-not-made-yet")}
    assert sandbox.protected_paths([main / "f"]) == (str(main),)  # .git inside the work tree, protected whole


def test_without_namespaces_the_runs_see_the_files_as_plain_python(
    tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SNIPCHECK_NAMESPACES=0: no mount namespace, as where the kernel allows none.
    monkeypatch.setenv("SNIPCHECK_NAMESPACES", "0")
    assert sandbox.protection() == "SNIPCHECK_NAMESPACES=0"
    root = tmp_path / "project"
    target = root / "data.txt"
    snippet = write(root, "plain", f"open({str(target)!r}, 'w').write('changed')\nprint('wrote')\n")
    target.write_text("as it was")
    for kind in PYTHON_RUNNERS:
        runner = runner_for(kind, stamp, root)
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        assert stdout(result) == "wrote\n"
        assert target.read_text() == "changed"
        target.write_text("as it was")
    assert "change or remove the project's files" in (sandbox.caveats() or "")


def test_the_pytest_plugin_keeps_the_project_read_only_to_the_snippets(tmp_path: Path) -> None:
    root, token = cli_vandal(tmp_path, "fork")
    (root / "docs" / "index.md").write_text("# Vandals\n\n```{snippet} vandal/attacks\n" + STATED + "```\n")
    before = {"project": snapshot(root), "snippets": snapshot(tmp_path / "snippets-outside")}
    env = dict(cli_env(tmp_path), NO_COLOR="1")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--snipcheck", "docs/"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    finally:
        shm, tmp = Path("/dev/shm") / token, Path("/tmp") / token
        gone = not shm.exists() and not tmp.exists()
        shm.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert {"project": snapshot(root), "snippets": snapshot(tmp_path / "snippets-outside")} == before
    assert gone


def test_where_only_the_mounts_are_refused_the_caveat_says_so_alone(
    tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernel that gives runs a PID namespace but refuses the mounts (as a
    # seccomp profile that blocks mount(2) would): the runs see the files as
    # plain python does, and the note names the mounts only.
    monkeypatch.setitem(sandbox._state, "mounts", "mount /tmp: Operation not permitted")
    assert sandbox.isolation() is None
    assert sandbox.run_mounts(["/x"], None) is None
    assert sandbox.caveats() == (
        "the file system is not read-only to the runs here (mount /tmp: Operation not permitted): a snippet could "
        "change or remove the project's files and any other its user may change, and leave files in /tmp and /dev/shm"
    )
    root = tmp_path / "project"
    target = root / "data.txt"
    snippet = write(root, "plain", f"open({str(target)!r}, 'w').write('changed')\nprint('wrote')\n")
    target.write_text("as it was")
    runner = runner_for("fork", stamp, root)
    try:
        result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    finally:
        runner.close()  # type: ignore[attr-defined]
    assert stdout(result) == "wrote\n"
    assert target.read_text() == "changed"
