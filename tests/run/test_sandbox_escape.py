"""A run cannot get out of its sandbox (issue 33 §1): each attack that worked, under both runners and Rust.

Was, with the project read-only by bind mounts but the run root with every
capability and the machine's ``/proc``: ``mount -o remount,rw,bind
<project>`` made the project writable again; ``/proc/<pid of the
build>/root/...`` reached the build's own view and rewrote a snippet file;
the fork server's ``/proc/<pid>/mem`` (the server forks every later run)
opened read-write; files written to ``/etc``, ``/var/tmp``, ``/root`` and
``/usr/local`` outlived the build; a snippet raised its soft memory limit
to the hard one (unlimited) and allocated past it.  Now the whole file
system is read-only to a run but its run directory, ``/tmp`` and
``/dev/shm``, its ``/proc`` is its PID namespace's, and it has no
capability (``run/bootstrap/_snipcheck_mounts.py``).  Each test here
fails on the commit before that change.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.run import PYTHON_RUNNERS, make_runner, sandbox
from snipcheck.sources.snippets import load

TIMEOUT = 60.0
LIMIT = 1 << 20

pytestmark = pytest.mark.skipif(
    sandbox.protection() is not None, reason=f"runs get no mount namespace here: {sandbox.protection()}"
)


def write(root: Path, snippet_id: str, source: str, suffix: str = ".py") -> Snippet:
    path = root / "snippets" / f"{snippet_id}{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return load(snippet_id, root / "snippets", root)


def stdout(result: RunResult) -> str:
    return "".join(e.text for e in result.events if e.stream == "stdout")


@pytest.fixture(params=PYTHON_RUNNERS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "page.md").write_text("# Page\n")
    (root / "snippets").mkdir()
    return root


@pytest.fixture
def runner(kind: str, project: Path, stamp: Stamp) -> Iterator[object]:
    made = make_runner(
        "python", python=sys.executable, stamp=stamp, kind=kind, preload=(), protect=sandbox.protected_paths([project])
    )
    try:
        yield made
    finally:
        getattr(made, "close", lambda: None)()


def run(runner: object, snippet: Snippet) -> RunResult:
    result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)  # type: ignore[attr-defined]
    assert result.exit_status == 0, result.events
    return result


REMOUNT = """\
import ctypes, os, subprocess
PROJECT, PAGE = {project!r}, {page!r}
done = subprocess.run(["mount", "-o", "remount,rw,bind", PROJECT], capture_output=True)
print("mount(8):", "refused" if done.returncode else "done")
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND, MNT_DETACH = 32, 4096, 2
for name, call in [("mount(2)", lambda: libc.mount(None, PROJECT.encode(), None, MS_REMOUNT | MS_BIND, None)),
                   ("umount2(2)", lambda: libc.umount2(PROJECT.encode(), MNT_DETACH)),
                   ("unshare(2)", lambda: libc.unshare(0x00020000))]:
    print(name + ":", os.strerror(ctypes.get_errno()) if call() else "done")
try:
    open(PAGE, "w").write("vandalised\\n")
    print("write: done")
except OSError as exc:
    print("write:", exc.strerror)
"""


@pytest.mark.skipif(shutil.which("mount") is None, reason="needs mount(8)")
def test_a_run_cannot_remount_the_project_writable(runner: object, project: Path) -> None:
    page = project / "docs" / "page.md"
    result = run(runner, write(project, "remount", REMOUNT.format(project=str(project), page=str(page))))
    assert stdout(result) == (
        "mount(8): refused\nmount(2): Operation not permitted\numount2(2): Operation not permitted\n"
        "unshare(2): Operation not permitted\nwrite: Read-only file system\n"
    )
    assert page.read_text() == "# Page\n"


THROUGH_ROOT = """\
import os
for name, pid in [("the build", {build}), ("its supervisor", 1), ("its parent", os.getppid())]:
    try:
        open(f"/proc/{{pid}}/root{page}", "w").write("vandalised\\n")
        print(name + ": done")
    except OSError as exc:
        print(name + ":", type(exc).__name__)
"""


def test_a_run_cannot_reach_a_project_file_through_another_processes_root(runner: object, project: Path) -> None:
    page = project / "docs" / "page.md"
    result = run(runner, write(project, "root", THROUGH_ROOT.format(build=os.getpid(), page=str(page))))
    # The build is not in the run's /proc; its supervisor (in the build's own
    # view of the files) keeps its capabilities, so it cannot be looked into.
    assert stdout(result) == "the build: FileNotFoundError\nits supervisor: PermissionError\nits parent: PermissionError\n"
    assert page.read_text() == "# Page\n"


MEMORY_OF = """\
import os
for name, pid in [("the server", {server}), ("the slot", 1), ("its parent", os.getppid())]:
    try:
        with open(f"/proc/{{pid}}/mem", "r+b") as f:
            print(name + ": done")
    except OSError as exc:
        print(name + ":", type(exc).__name__)
"""


def test_a_run_cannot_open_the_memory_of_the_process_that_forks_the_next_runs(runner: object, project: Path) -> None:
    warm = run(runner, write(project, "warm", "pass\n"))  # the fork server started
    assert warm.runner == runner.name  # type: ignore[attr-defined]
    server = runner._server._proc.pid if runner.name == "fork" else os.getpid()  # type: ignore[attr-defined]
    result = run(runner, write(project, "mem", MEMORY_OF.format(server=server)))
    assert stdout(result) == "the server: FileNotFoundError\nthe slot: PermissionError\nits parent: PermissionError\n"


OUTSIDE = ["/etc", "/var/tmp", "/usr/local", "/root", os.path.expanduser("~")]

WRITE_OUTSIDE = """\
for folder in {folders!r}:
    try:
        with open(folder + "/{token}", "w") as f:
            f.write("left by a snippet")
        print(folder, "done")
    except OSError as exc:
        print(folder, exc.strerror)
"""


def test_files_written_outside_the_run_fail_and_never_survive(runner: object, project: Path) -> None:
    folders = list(dict.fromkeys(f for f in OUTSIDE if os.path.isdir(f)))
    token = f"snipcheck-test-{uuid.uuid4().hex}"
    try:
        result = run(runner, write(project, "outside", WRITE_OUTSIDE.format(folders=folders, token=token)))
    finally:
        left = [f for f in folders if os.path.lexists(os.path.join(f, token))]
        for folder in left:
            os.unlink(os.path.join(folder, token))
    assert stdout(result) == "".join(f"{folder} Read-only file system\n" for folder in folders)
    assert left == []


RAISE_LIMIT = """\
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
print("hard limit", soft == hard == 256 << 20)
for limits in [(hard, hard), (resource.RLIM_INFINITY, resource.RLIM_INFINITY)]:
    try:
        resource.setrlimit(resource.RLIMIT_DATA, limits)
        print("raised to", "unlimited" if limits[0] == resource.RLIM_INFINITY else "the hard limit")
    except (ValueError, OSError):
        print("refused")
try:
    block = bytearray(768 << 20)
    print("allocated")
except MemoryError:
    print("MemoryError")
# /// snipcheck
# memory = "256 MiB"
# ///
"""


def test_a_run_cannot_raise_its_memory_limit(runner: object, project: Path) -> None:
    result = run(runner, write(project, "raise", RAISE_LIMIT))
    # (hard, hard) changes nothing: it is the limit already
    assert stdout(result) == "hard limit True\nraised to the hard limit\nrefused\nMemoryError\n"


OWN_PROC = """\
import os
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("self", os.readlink("/proc/self") == str(os.getpid()))
print("processes", pids == [1, os.getpid()], os.getppid())
print("init", b"python" in open("/proc/1/cmdline", "rb").read())
print("capabilities", [line.split()[1] for line in open("/proc/self/status") if line.startswith("Cap")])
print("no new privileges", [line.split()[1] for line in open("/proc/self/status") if line.startswith("NoNewPrivs")])
"""


def test_a_runs_proc_shows_the_run_and_nothing_else(runner: object, project: Path) -> None:
    result = run(runner, write(project, "proc", OWN_PROC))
    assert stdout(result) == (
        "self True\nprocesses True 1\ninit True\n"
        f"capabilities {['0000000000000000'] * 5}\nno new privileges ['1']\n"
    )


RUST_ESCAPE = """\
use std::fs::OpenOptions;
fn main() {{
    match std::fs::write("/etc/{token}", b"x") {{
        Ok(()) => println!("etc: done"),
        Err(e) => println!("etc: {{}}", e),
    }}
    match OpenOptions::new().read(true).write(true).open("/proc/1/mem") {{
        Ok(_) => println!("mem: done"),
        Err(e) => println!("mem: {{}}", e),
    }}
    let pid = std::fs::read_link("/proc/self").unwrap();
    println!("self: {{}}", pid.to_string_lossy() == std::process::id().to_string());
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    for line in status.lines().filter(|l| l.starts_with("CapEff") || l.starts_with("CapBnd")) {{
        println!("{{}}", line);
    }}
}}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (a Rust toolchain)")
def test_a_rust_binary_is_sealed_as_a_python_run(tmp_path: Path, project: Path) -> None:
    from snipcheck.run.environment import rustc_version
    from snipcheck.run.python import DEFAULT_MEMORY_LIMIT
    from snipcheck.run.rust import RustRunner

    token = f"snipcheck-test-{uuid.uuid4().hex}"
    snippet = write(project, "escape", RUST_ESCAPE.format(token=token), suffix=".rs")
    stamp = Stamp(python="", torch=None, device="CPU", platform="Linux", rustc=rustc_version())
    runner = RustRunner(tmp_path / "build", stamp, DEFAULT_MEMORY_LIMIT, sandbox.protected_paths([project]))
    try:
        result = runner.run(snippet, timeout=300, output_limit=LIMIT)
    finally:
        left = os.path.lexists(f"/etc/{token}")
        if left:
            os.unlink(f"/etc/{token}")
    assert result.exit_status == 0, result.events
    assert stdout(result) == textwrap.dedent(
        """\
        etc: Read-only file system (os error 30)
        mem: Permission denied (os error 13)
        self: true
        CapEff:\t0000000000000000
        CapBnd:\t0000000000000000
        """
    )
    assert not left


PARTS_PROBE = """\
import os
print("own proc", os.readlink("/proc/self") == str(os.getpid()))
print("capabilities", [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff")] != ["0000000000000000"])
try:
    open("/etc/{token}", "w")
except OSError as exc:
    print("/etc", exc.strerror)
"""


def test_where_the_kernel_refuses_a_proc_or_the_capability_drop_the_runs_go_without_and_the_build_says_which(
    kind: str, project: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As a container whose seccomp profile refused mount("proc") and PR_CAPBSET_DROP would.
    monkeypatch.setitem(sandbox._state, "proc", "mount /proc: Operation not permitted")
    monkeypatch.setitem(sandbox._state, "seal", "prctl(PR_CAPBSET_DROP, 0): Operation not permitted")
    assert sandbox.caveats() == (
        "the runs here see the machine's /proc (mount /proc: Operation not permitted): a snippet could read other "
        "processes and reach their files through /proc/PID/root; the runs here keep the build's capabilities "
        "(prctl(PR_CAPBSET_DROP, 0): Operation not permitted): a snippet running as root could undo its read-only "
        "view, write the memory of the process that forks the next runs, and raise its memory limit"
    )
    mounts = sandbox.run_mounts([str(project)], None)
    assert mounts is not None and (mounts["proc"], mounts["seal"]) == (False, False)
    token = f"snipcheck-test-{uuid.uuid4().hex}"
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([project]))  # fmt: skip
    try:
        result = run(runner, write(project, "parts", PARTS_PROBE.format(token=token)))
    finally:
        getattr(runner, "close", lambda: None)()
    assert stdout(result) == "own proc False\ncapabilities True\n/etc Read-only file system\n"
    assert not os.path.lexists(f"/etc/{token}")


SIZES = """\
import os, resource
for folder in ("/tmp", "/dev/shm"):
    st = os.statvfs(folder)
    print(folder, st.f_blocks * st.f_frsize >> 20, sorted(os.listdir(folder)) == [] or sorted(n.split("-")[0] for n in os.listdir(folder)))
print("limit", resource.getrlimit(resource.RLIMIT_DATA)[0] >> 20)
open("/tmp/left", "w").write("x")
"""


def test_each_run_of_a_slot_gets_fresh_tmpfs_of_its_own_memory_limit(runner: object, project: Path) -> None:
    # A fork server slot makes each next run's namespace ahead for the limit of the run
    # before; a run with another limit (its memory tag) must get its own, as fresh.
    small = write(project, "small", SIZES + '# /// snipcheck\n# memory = "256 MiB"\n# ///\n')
    large = write(project, "large", SIZES + '# /// snipcheck\n# memory = "512 MiB"\n# ///\n')
    outs = [stdout(run(runner, snippet)) for snippet in (small, small, large, small, large, large)]
    from snipcheck.run.python import run_root

    shm = "True" if run_root() != "/dev/shm" else "['snipcheck']"  # the run directory's own entry
    # what the interpreter needs under /tmp is bound back (a checkout or virtualenv made by mktemp -d)
    kept = sorted({p.split("/")[2].split("-")[0] for p in sandbox.needed_paths(sys.executable) if p.startswith("/tmp/")})
    tmp = str(kept) if kept else "True"
    expected = {n: f"/tmp {n} {tmp}\n/dev/shm {n} {shm}\nlimit {n}\n" for n in (256, 512)}
    assert outs == [expected[n] for n in (256, 256, 512, 256, 512, 512)]


IPC = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
KEY, QUEUE, IPC_CREAT = {key}, {queue!r}, 0o1000
print("found", libc.shmget(KEY, 0, 0) >= 0, libc.msgget(KEY, 0) >= 0, libc.semget(KEY, 0, 0) >= 0,
      libc.mq_open(QUEUE, os.O_RDONLY) >= 0)
print("made", libc.shmget(KEY, 4096, IPC_CREAT | 0o600) >= 0, libc.msgget(KEY, IPC_CREAT | 0o600) >= 0,
      libc.semget(KEY, 1, IPC_CREAT | 0o600) >= 0, libc.mq_open(QUEUE, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0)
"""


def _ipc_left(key: int, queue: bytes) -> list[str]:
    """The System V objects of ``key`` and the POSIX message queue ``queue``
    left in the build's IPC namespace, removed."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    left = []
    IPC_RMID = 0
    for kind, get, ctl in [("shm", lambda: libc.shmget(key, 0, 0), lambda i: libc.shmctl(i, IPC_RMID, None)),
                           ("msg", lambda: libc.msgget(key, 0), lambda i: libc.msgctl(i, IPC_RMID, None)),
                           ("sem", lambda: libc.semget(key, 0, 0), lambda i: libc.semctl(i, 0, IPC_RMID))]:  # fmt: skip
        found = get()
        if found >= 0:
            left.append(kind)
            ctl(found)
    if libc.mq_unlink(queue) == 0:
        left.append("mqueue")
    return left


def test_what_a_run_leaves_in_system_v_ipc_and_message_queues_goes_with_it(runner: object, project: Path) -> None:
    # Was: a shared memory segment, message queue, semaphore set or POSIX
    # message queue a snippet made outlived its run (ipcs showed it), and the
    # next snippet's run found it by its key.  Now each run has an IPC
    # namespace of its own, gone with its last process.
    key = int.from_bytes(os.urandom(3), "big") + 1
    queue = f"/snipcheck-test-{uuid.uuid4().hex}".encode()
    snippet = write(project, "ipc", IPC.format(key=key, queue=queue))
    try:
        outs = [stdout(run(runner, snippet)) for _ in range(2)]
    finally:
        left = _ipc_left(key, queue)
    assert outs == ["found False False False False\nmade True True True True\n"] * 2
    assert left == []


def test_where_the_kernel_refuses_an_ipc_namespace_the_runs_go_without_and_the_build_says_so(
    kind: str, project: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sandbox._state, "ipc", "unshare(CLONE_NEWIPC): Operation not permitted")
    monkeypatch.setitem(sandbox._state, "proc", "")
    monkeypatch.setitem(sandbox._state, "seal", "")
    assert sandbox.caveats() == (
        "the runs here share the machine's System V IPC objects and POSIX message queues (unshare(CLONE_NEWIPC): "
        "Operation not permitted): what a snippet leaves there outlives its run, and the next runs find it"
    )
    mounts = sandbox.run_mounts([str(project)], None)
    assert mounts is not None and (mounts["proc"], mounts["seal"], mounts["ipc"]) == (True, True, False)
    key = int.from_bytes(os.urandom(3), "big") + 1
    queue = f"/snipcheck-test-{uuid.uuid4().hex}".encode()
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([project]))  # fmt: skip
    try:
        result = run(runner, write(project, "ipc", IPC.format(key=key, queue=queue)))
    finally:
        getattr(runner, "close", lambda: None)()
        left = _ipc_left(key, queue)
    assert stdout(result) == "found False False False False\nmade True True True True\n"
    assert left == ["shm", "msg", "sem", "mqueue"]  # the machine's, as the caveat says


DEVICES = """\
import os, pty
for path in {paths!r}:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY))  # nothing written
        print(path, "opened")
    except OSError as exc:
        print(path, exc.strerror)
print("pty", [os.isatty(fd) for fd in pty.openpty()])
print("random bytes", len(open("/dev/urandom", "rb").read(4)), open("/dev/zero", "rb").read(2))
"""
#: What a program needs of /dev: each run opens them as plain python does.
NEEDED = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
#: Character devices of the machine that no snippet needs (the kernel's log, consoles, control files).
OTHERS = ["/dev/kmsg", "/dev/console", "/dev/tty1", "/dev/loop-control", "/dev/cpu_dma_latency", "/dev/vcs"]


def _devices(kind: int) -> list[str]:
    found = []
    for entry in sorted(Path("/dev").iterdir()):
        try:
            if stat.S_IFMT(entry.lstat().st_mode) == kind:
                found.append(str(entry))
        except OSError:
            continue
    return found


def test_a_run_can_open_the_devices_a_program_needs_and_no_disk_nor_other_device(runner: object, project: Path) -> None:
    # Was: the read-only view left every device file usable, so a run (uid 0,
    # the owner of the machine's device files) opened the machine's block
    # devices for writing (a disk not mounted, a loop device), wrote to the
    # kernel's log and the consoles.  Now the view's mounts are nodev but for
    # the devices a program needs and the accelerators'.
    disks = _devices(stat.S_IFBLK)
    others = [p for p in OTHERS if p in _devices(stat.S_IFCHR)]
    if not disks and not others:
        pytest.skip("no block device and none of the other devices here")
    result = run(runner, write(project, "devices", DEVICES.format(paths=NEEDED + disks + others)))
    assert stdout(result) == "".join(f"{p} opened\n" for p in NEEDED) + "".join(
        f"{p} Permission denied\n" for p in disks + others
    ) + "pty [True, True]\nrandom bytes 4 b'\\x00\\x00'\n"


ACCELERATORS = """\
import json, sys
from pathlib import Path
from snipcheck.run.environment import probe
from snipcheck.run import make_runner, sandbox
from snipcheck.sources.snippets import load

root = Path(sys.argv[1])
stamp = probe(sys.executable, root / "probe")
snippet = load("devices", root / "snippets", root)
outs = []
for kind in ("fork", "subprocess"):
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([root]))
    try:
        result = runner.run(snippet, timeout=60, output_limit=1 << 20)
    finally:
        getattr(runner, "close", lambda: None)()
    outs.append("".join(e.text for e in result.events if e.stream == "stdout"))
print(json.dumps([sandbox.caveats(), *outs]))
"""
#: A /dev of a machine with accelerators, made of copies of /dev/null (1, 3) and of a loop device (7, 0).
FAKE_DEV = [("null", "c"), ("zero", "c 1 5"), ("full", "c 1 7"), ("random", "c 1 8"), ("urandom", "c 1 9"),
            ("nvidia0", "c"), ("nvidiactl", "c"), ("nvidia-caps/nvidia-cap1", "c"), ("dri/renderD128", "c"),
            ("kfd", "c"), ("accel/accel0", "c"), ("disk", "b 7 0"), ("snd/pcm", "c"), ("kvm", "c")]  # fmt: skip


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1)")
def test_a_run_can_open_the_accelerators_devices(tmp_path: Path, project: Path) -> None:
    # On a machine with an accelerator (a /dev of our own here, in a mount
    # namespace of this test's) the runs can open its devices as plain python does.
    made = []
    for name, spec in FAKE_DEV:
        folder = os.path.dirname(name)
        if folder:
            made.append(f"mkdir -p /dev/{folder}")
        made.append(f"mknod /dev/{name} {spec if ' ' in spec else spec + ' 1 3'}")
    paths = [f"/dev/{name}" for name, _ in FAKE_DEV if name not in ("zero", "full", "random", "urandom")]
    write(project, "devices", f"""\
import os
for path in {paths!r}:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        print(path, "opened")
    except OSError as exc:
        print(path, exc.strerror)
""")
    script = tmp_path / "script.py"
    script.write_text(ACCELERATORS)
    setup = " && ".join(["mount -t tmpfs none /dev", "mkdir /dev/shm /dev/pts", *made])
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", f'{setup} && exec "$0" "$@"',
         sys.executable, str(script), str(project)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    caveats, *outs = json.loads(done.stdout.splitlines()[-1])
    assert caveats is None
    opened = ["null", "nvidia0", "nvidiactl", "nvidia-caps/nvidia-cap1", "dri/renderD128", "kfd", "accel/accel0"]
    expected = "".join(f"/dev/{n} opened\n" for n in opened) + "".join(
        f"/dev/{n} Permission denied\n" for n in ("disk", "snd/pcm", "kvm")
    )
    assert outs == [expected, expected]


KEYS = """\
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {calls}
USER, SESSION = -4, -3  # the keyrings of the user (root: every build and run) and of the session
for name, ring in [("user", USER), ("session", SESSION)]:
    made = libc.syscall(ADD_KEY, b"user", {description!r}, b"left", 4, ctypes.c_int(ring))
    print(name, "keyring:", "added" if made >= 0 else os.strerror(ctypes.get_errno()))
found = libc.syscall(KEYCTL, 10, ctypes.c_int(USER), b"user", {description!r}, 0)  # KEYCTL_SEARCH
print("found:", found >= 0 or os.strerror(ctypes.get_errno()))
"""
#: add_key(2) and keyctl(2) by machine.
KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219), "riscv64": (217, 219)}


def _keys_left(description: bytes) -> list[str]:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    _, keyctl = KEY_CALLS[os.uname().machine]
    left = []
    for name, ring in [("user", -4), ("session", -3)]:
        found = libc.syscall(keyctl, 10, ctypes.c_int(ring), b"user", description, 0)  # KEYCTL_SEARCH
        if found >= 0:
            left.append(name)
            libc.syscall(keyctl, 21, ctypes.c_long(found))  # KEYCTL_INVALIDATE
    return left[:1]  # the user's keyring is searched from the session's


@pytest.mark.skipif(os.uname().machine not in KEY_CALLS, reason="no system call numbers for this machine here")
def test_a_run_can_leave_no_key_in_a_keyring_for_later_runs(runner: object, project: Path) -> None:
    # Was: a key a snippet added to root's user keyring outlived its run, and
    # every later run found it (the same for its session's).  Now
    # add_key, request_key and keyctl fail with EPERM in a run (a seccomp
    # filter, as Docker's default profile has).
    description = f"snipcheck-test-{uuid.uuid4().hex}".encode()
    snippet = write(project, "keys", KEYS.format(calls=KEY_CALLS[os.uname().machine], description=description))
    try:
        out = stdout(run(runner, snippet))
    finally:
        left = _keys_left(description)
    assert out == "user keyring: Operation not permitted\nsession keyring: Operation not permitted\nfound: Operation not permitted\n"
    assert left == []


@pytest.mark.skipif(os.uname().machine not in KEY_CALLS, reason="no system call numbers for this machine here")
def test_where_the_kernel_refuses_the_keyring_filter_the_runs_go_without_and_the_build_says_so(
    kind: str, project: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    for part in ("proc", "seal", "ipc"):
        monkeypatch.setitem(sandbox._state, part, "")
    monkeypatch.setitem(sandbox._state, "keys", "prctl(PR_SET_SECCOMP): Invalid argument")
    assert sandbox.caveats() == (
        "the runs here can use the kernel's keyrings (prctl(PR_SET_SECCOMP): Invalid argument): a key a snippet "
        "adds to its user's keyring outlives its run, and the next runs find it"
    )
    mounts = sandbox.run_mounts([str(project)], None)
    assert mounts is not None and (mounts["seal"], mounts["keys"]) == (True, False)
    description = f"snipcheck-test-{uuid.uuid4().hex}".encode()
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                         protect=sandbox.protected_paths([project]))  # fmt: skip
    try:
        out = stdout(run(runner, write(project, "keys", KEYS.format(calls=KEY_CALLS[os.uname().machine], description=description))))
    finally:
        getattr(runner, "close", lambda: None)()
        left = _keys_left(description)
    assert out == "user keyring: added\nsession keyring: added\nfound: True\n"
    assert left == ["user"]  # as the caveat says
