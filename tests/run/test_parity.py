"""Runner parity: a run is exactly ``python snippets/<id>.py`` (issue 11).

Every snippet of the parity corpus (``tests/roots/parity-corpus``) observes its
own process: exit paths, ``sys.modules``, argv, environment, working
directory, umask, signal dispositions, resource limits, open descriptors,
closed or redirected stdout/stderr, buffering, encoding, stdin, locale, hash
seed, RNG, recursion depth.  Each is run three ways, plain ``python file.py``
as a user runs it in a terminal (:func:`plain`: a clean environment holding
only what the design fixes, stdout and stderr on pseudo-terminals), the
subprocess runner and the fork runner (torch and torch._dynamo preloaded, as
the chapter's conf.py preloads them), each runner with and without a PID
namespace, and must give byte-identical stdout, stderr, terminal order
(stdout and stderr interleaved as a terminal shows them) and exit status.

Two things are normalised on every side alike, because they differ between two
plain runs too: the run directory (a fresh one per run) and object addresses
(``0x7f…``).  What cannot be identical is the short list in
:data:`snipcheck.run.DIFFERENCES`; ``test_documented_differences_*`` keep it true.
"""

from __future__ import annotations

import os
import platform
import random
import re
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from snipcheck.model import RunResult, Snippet, Stamp
from snipcheck.rawbytes import from_bytes
from snipcheck.run import DIFFERENCES, Runner, make_runner
from snipcheck.run.python import BOOTSTRAP_DIR, HASH_SEED, PASSTHROUGH, output_rewrite, prepare_run_dir
from snipcheck.sources.snippets import load
from terminal import on_terminals

CORPUS = Path(__file__).parents[1] / "roots" / "parity-corpus"
IDS = sorted(f"parity/{p.stem}" for p in (CORPUS / "snippets" / "parity").glob("*.py"))
TIMEOUT = 60.0
LIMIT = 16 << 20  # the corpus prints a few megabytes on purpose
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
#: The runner configurations: kind, and whether PID namespaces are allowed.
#: What the fork server preloads: what the chapter's conf.py preloads.
PRELOAD = ("torch", "torch._dynamo")
WAYS = [("subprocess", True), ("fork", True), ("subprocess", False), ("fork", False)]


@dataclass(frozen=True)
class Seen:
    """What one way of running showed: per stream, as a terminal interleaves them, and how it ended."""

    stdout: str
    stderr: str
    terminal: str
    ended: str


def normal(text: str) -> str:
    return _ADDRESS.sub("0x…", text)


def ending(status: int | None, signal_name: str | None) -> str:
    return f"signal {signal_name}" if signal_name else f"exit {status}"


#: What a corpus snippet's first lines may say plain python runs it with: a
#: variable the runs get that plain python lacks, as ``DIFFERENCES`` documents it.
_REFERENCE = re.compile(r"^# plain python runs this with (\w+)=(\S*) \(DIFFERENCES\['([^']+)'\]\)$", re.MULTILINE)


def plain_environment(run_dir: str, snippet: Snippet | None = None) -> dict[str, str]:
    """The environment of ``python snippets/<id>.py`` as a user runs it: the
    variables the design passes through, and the locale, time zone, ``HOME``
    and ``TMPDIR`` it fixes; nothing else (no ``PYTHON*`` variable), but what
    the snippet's ``# plain python runs this with NAME=VALUE (DIFFERENCES[...])``
    lines name."""
    env = {k: os.environ[k] for k in PASSTHROUGH if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(
        HOME=os.path.join(run_dir, "home"), TMPDIR=os.path.join(run_dir, "tmp"), LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC"
    )
    for name, value, difference in _REFERENCE.findall(snippet.source if snippet else ""):
        assert difference in DIFFERENCES, f"{snippet.id if snippet else ''}: no difference {difference!r}"
        env[name] = value
    return env


def plain(snippet: Snippet) -> Seen:
    """``python snippets/<id>.py`` as a user runs it in a terminal: a fresh run
    directory as working directory, :func:`plain_environment`, stdin at
    end-of-file.  Run twice: stdout and stderr on two terminals, then both on
    one, which shows them interleaved."""
    seen = []
    for merged in (False, True):
        run_dir, script = prepare_run_dir(snippet)
        try:
            out, err, code = on_terminals([sys.executable, script], run_dir, plain_environment(run_dir, snippet), merged, TIMEOUT)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

        def text(data: bytes, run_dir: str = run_dir) -> str:
            decoded = from_bytes(data)  # as the runners read bytes (invalid UTF-8 as \x{ff}: snipcheck.rawbytes)
            for old, new in output_rewrite(run_dir).items():  # what the runners do to their output
                decoded = decoded.replace(old, new)
            return normal(decoded)

        seen.append((text(out), text(err), code))
    (out, err, code), (terminal, _, code2) = seen
    assert code == code2, f"{snippet.id} ends differently between two plain runs"
    name = None
    if code < 0:
        import signal

        name = signal.Signals(-code).name
    return Seen(out, err, terminal, ending(code if code >= 0 else None, name))


def observed(result: RunResult) -> Seen:
    out = "".join(e.text for e in result.events if e.stream == "stdout")
    err = "".join(e.text for e in result.events if e.stream == "stderr")
    terminal = "".join(e.text for e in result.events)
    assert not result.timed_out and result.truncated_bytes == 0
    return Seen(normal(out), normal(err), normal(terminal), ending(result.exit_status, result.signal))


@pytest.fixture(scope="module")
def plain_results(stamp: Stamp) -> dict[str, Seen]:
    return {snippet_id: plain(load(snippet_id, CORPUS / "snippets", CORPUS)) for snippet_id in IDS}


@pytest.fixture(scope="module", params=WAYS, ids=[f"{k}-{'pidns' if ns else 'no-pidns'}" for k, ns in WAYS])
def way(request: pytest.FixtureRequest, stamp: Stamp) -> Iterator[Runner]:
    kind, pidns = request.param
    patch = pytest.MonkeyPatch()
    if not pidns:
        patch.setenv("SNIPCHECK_NAMESPACES", "0")
    made = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=PRELOAD)
    try:
        yield made
    finally:
        getattr(made, "close", lambda: None)()
        patch.undo()


def test_the_corpus_covers_the_issue() -> None:
    wanted = {
        "exit_keyboard_interrupt", "exit_sys_exit_message", "exit_custom_excepthook", "exit_atexit", "exit_threads",
        "recursion_limit", "main_module", "sys_modules", "sys_modules_torch", "argv_flags", "environment",
        "working_directory", "umask", "signal_dispositions", "resource_limits", "open_fds", "closerange",
        "close_stdout", "close_both", "dup2_devnull", "stdin_eof", "locale_time", "hash_seed", "rng_seeded",
        # the environment of a run (issue 23 item 3): encoding, buffering, hash order
        "lone_surrogate", "partial_line_os_exit_stdout", "partial_line_os_exit_stderr", "alternating_partial_lines",
        "buffer_sizes", "streams", "c_stdio", "hash_seed_children",
    }  # fmt: skip
    assert wanted <= {i.split("/")[1] for i in IDS}


@pytest.mark.parametrize("snippet_id", IDS)
def test_a_run_is_exactly_plain_python(way: Runner, plain_results: dict[str, Seen], snippet_id: str) -> None:
    snippet = load(snippet_id, CORPUS / "snippets", CORPUS)
    if way.name == "fork":
        assert way.unavailable is None, way.unavailable  # type: ignore[attr-defined]
    result = way.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
    assert result.runner == way.name
    expected = plain_results[snippet_id]
    seen = observed(result)
    assert seen.ended == expected.ended
    assert seen.stdout == expected.stdout
    assert seen.stderr == expected.stderr
    assert seen.terminal == expected.terminal


def test_the_documented_differences_are_few() -> None:
    # 10 until issue 33 sealed the runs: no capability, System V IPC, and stdin and the command line, documented since
    assert 0 < len(DIFFERENCES) <= 13
    assert all(text.strip() and "\n" not in text for text in DIFFERENCES.values())


DIFFERENCE_PROBE = """\
import gc, os, resource, stat, subprocess, sys
print("sockets", stat.S_ISSOCK(os.fstat(1).st_mode), stat.S_ISSOCK(os.fstat(2).st_mode))
print("terminals", sys.stdout.isatty(), sys.stderr.isatty(), os.isatty(1))
child = "import sys; print(sys.stdout.line_buffering, sys.stderr.line_buffering)"
print("a child's line buffering", subprocess.run([sys.executable, "-c", child], capture_output=True).stdout)
print("hash", sys.flags.hash_randomization, hash("snipcheck"), "PYTHONHASHSEED" in os.environ)
print("data limit", *resource.getrlimit(resource.RLIMIT_DATA))
print("frame below", sys._getframe().f_back is not None)
print("frozen objects", gc.get_freeze_count() > 0)
try:
    os.write(2, b"x" * (5 << 20))
except OSError as exc:
    print("a 5 MiB write(2) fails:", exc.errno in (90, 105))
"""


def test_documented_differences_hold_as_documented(tmp_path: Path, stamp: Stamp) -> None:
    # The other side of the parity test: each entry of DIFFERENCES that a snippet
    # can print is exactly as documented (so the list stays true and complete).
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "probe.py").write_text(DIFFERENCE_PROBE)
    snippet = load("probe", tmp_path / "snippets", tmp_path)
    seeded = subprocess.run(
        [sys.executable, "-c", "print(hash('snipcheck'))"], env={"PYTHONHASHSEED": str(HASH_SEED)},
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    plain_hashes = set()
    for _ in range(2):
        first, terminals, child, hashed, *rest = plain(snippet).stdout.splitlines(keepends=True)
        assert first + terminals + child == (
            "sockets False False\nterminals True True True\na child's line buffering b'False True\\n'\n"
        )
        assert "".join(rest) == "data limit -1 -1\nframe below False\nfrozen objects False\n"
        assert hashed.startswith("hash 1 ") and hashed.endswith(" False\n")
        plain_hashes.add(hashed)
    assert len(plain_hashes) == 2  # plain python hashes at random: two runs differ
    common = (
        "sockets True True\nterminals False False False\na child's line buffering b'False True\\n'\n"
        f"hash 0 {seeded} False\ndata limit 4294967296 4294967296\n"
    )
    expected = {
        "subprocess": common + "frame below False\nfrozen objects False\n",
        "fork": common + "frame below True\nfrozen objects True\n",
    }
    for kind, wanted in expected.items():
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        out = "".join(e.text for e in result.events if e.stream == "stdout")
        assert out == wanted + "a 5 MiB write(2) fails: True\n", kind
    assert {"process ids", "stdout and stderr", "memory limit", "hash seed"} <= set(DIFFERENCES)


def identifiers(code: types.CodeType) -> Iterator[str]:
    """The names and identifier-like string constants of ``code`` and the code
    inside it: strings the interpreter interns while the code lives."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from identifiers(const)
        elif isinstance(const, str) and const.isidentifier():
            yield const
    yield from code.co_names
    yield from code.co_varnames


def test_a_set_display_of_strings_the_runner_interned_can_print_otherwise(tmp_path: Path, stamp: Stamp) -> None:
    # DIFFERENCES["hash seed"]: under the very seed of a plain run, a set display of strings
    # prints in another order when its strings were interned before the code was compiled
    # (CPython rebuilds the constant frozenset), and the capture code, alive through the run,
    # holds its own names interned. Sets drawn from those names: some print otherwise, none
    # holds other elements. If none prints otherwise, the difference is gone: update DIFFERENCES.
    child = Path(BOOTSTRAP_DIR, "_snipcheck_child.py")
    pool = sorted(set(identifiers(compile(child.read_text(encoding="utf-8"), str(child), "exec"))))
    rng = random.Random(23)
    (tmp_path / "snippets").mkdir()
    source = "".join(f"print({{{', '.join(map(repr, rng.sample(pool, 4)))}}})\n" for _ in range(400))
    (tmp_path / "snippets" / "sets.py").write_text(source)
    snippet = load("sets", tmp_path / "snippets", tmp_path)
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONHASHSEED": str(HASH_SEED), "LC_ALL": "C.UTF-8"}
    reference = subprocess.run(
        [sys.executable, str(snippet.path)], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=1 << 20)
        finally:
            getattr(runner, "close", lambda: None)()
        lines = "".join(e.text for e in result.events if e.stream == "stdout").splitlines()
        assert len(lines) == len(reference) == 400, kind
        assert [sorted(line[1:-1].split(", ")) for line in lines] == [sorted(line[1:-1].split(", ")) for line in reference]
        assert lines != reference, f"{kind}: every set printed as plain python's: update DIFFERENCES['hash seed']"


FILES_PROBE = """\
import os
print("project writable", os.access({project!r}, os.W_OK))
print("/etc writable", os.access("/etc", os.W_OK))
print("left by the run before", os.path.exists({marker!r}))
open({marker!r}, "w").close()
print("uid", os.getuid())
"""


def test_documented_difference_of_files_holds(tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch) -> None:
    # DIFFERENCES["files"]: the file system read-only, /dev/shm (and /tmp) the run's own;
    # the same uid.  Run twice each: plain python sees the marker the first run
    # left; a run never does.
    from snipcheck.run import sandbox

    monkeypatch.setenv("SNIPCHECK_NAMESPACES", "1")  # whatever a module fixture of this file set
    if sandbox.protection():
        pytest.skip(f"runs get no mount namespace here: {sandbox.protection()}")
    marker = f"/dev/shm/snipcheck-test-{os.getpid()}-{tmp_path.name}"
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "probe.py").write_text(FILES_PROBE.format(project=str(tmp_path), marker=marker))
    snippet = load("probe", tmp_path / "snippets", tmp_path)
    try:
        first, second = (plain(snippet).stdout for _ in range(2))
    finally:
        os.unlink(marker)
    uid = f"uid {os.getuid()}\n"
    writable = os.access("/etc", os.W_OK)  # root's, or not where the tests run unprivileged
    assert first == f"project writable True\n/etc writable {writable}\nleft by the run before False\n{uid}"
    assert second == f"project writable True\n/etc writable {writable}\nleft by the run before True\n{uid}"
    outs = []
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=(),
                             protect=sandbox.protected_paths([tmp_path]))  # fmt: skip
        try:
            for _ in range(2):
                result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
                outs.append("".join(e.text for e in result.events if e.stream == "stdout"))
        finally:
            getattr(runner, "close", lambda: None)()
            left = os.path.exists(marker)
            if left:
                os.unlink(marker)
        assert not left, kind
    assert outs == [f"project writable False\n/etc writable False\nleft by the run before False\n{uid}"] * 4
    assert "files" in DIFFERENCES


SEALED_PROBE = """\
import os, sys
print("own pid in /proc/self", os.readlink("/proc/self") == str(os.getpid()))
print("process 1 is the parent", os.getppid() == 1, "and python", b"python" in open("/proc/1/cmdline", "rb").read())
print("capabilities", [line.split()[1] for line in open("/proc/self/status") if line.startswith(("Cap", "NoNew", "Seccomp:"))])
print("stdin", repr(sys.stdin.read()), sys.stdin.isatty(), os.isatty(0))
try:
    open("/dev/tty")
except OSError as exc:
    print("/dev/tty", exc.strerror)
print("argv", sys.argv, sys.orig_argv[1:], sys.orig_argv[0] == sys.executable)
print("cmdline", open("/proc/self/cmdline", "rb").read().split(b"\\0")[1:2])
print("/dev/shm", [n.split("-")[0] for n in os.listdir("/dev/shm")])
"""


def test_documented_differences_of_processes_capabilities_and_stdin_hold(
    tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DIFFERENCES["process ids"], ["capabilities"] (the keyring filter too), ["stdin and command line"] and
    # ["files"] (the run directory's one entry in /dev/shm), under each runner,
    # against what plain python shows (its /proc is the machine's, its
    # capabilities the user's, its stdin here a pipe at end of file too).
    from snipcheck.run import sandbox

    monkeypatch.setenv("SNIPCHECK_NAMESPACES", "1")  # whatever a module fixture of this file set
    if sandbox.confinement():
        pytest.skip(f"runs are not sealed here: {sandbox.caveats()}")
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "probe.py").write_text(SEALED_PROBE)
    snippet = load("probe", tmp_path / "snippets", tmp_path)
    shown = plain(snippet).stdout.splitlines()
    assert shown[0] == "own pid in /proc/self True" and shown[1].startswith("process 1 is the parent False")
    assert shown[3:5] == ["stdin '' False False", "/dev/tty No such device or address"]  # the test run has no terminal either
    common = [
        "own pid in /proc/self True",
        "process 1 is the parent True and python True",
        f"capabilities {['0000000000000000'] * 5 + ['1', '2']}",  # no_new_privs, a seccomp filter (the keyrings')
        "stdin '' False False",
        "/dev/tty No such device or address",
        "argv ['snippets/probe.py'] ['snippets/probe.py'] True",
    ]
    from snipcheck.run.python import run_root

    shm = "['snipcheck']" if run_root() == "/dev/shm" else "[]"  # the run directory's entry, where it lies there
    cmdline = {"subprocess": "[b'snippets/probe.py']", "fork": f"[{str(Path(BOOTSTRAP_DIR) / 'forkserver.py').encode()!r}]"}
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        out = "".join(e.text for e in result.events if e.stream == "stdout").splitlines()
        assert out == [*common, f"cmdline {cmdline[kind]}", f"/dev/shm {shm}"], kind
    assert {"process ids", "capabilities", "stdin and command line", "files"} <= set(DIFFERENCES)


DEVICES_AND_IPC_PROBE = """\
import ctypes, os
for path in ("/dev/null", {device!r}):
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY))  # nothing written
        print(path, "opened")
    except OSError as exc:
        print(path, exc.strerror)
print("a terminal of the machine", {pty!r} in os.listdir("/dev/pts"))
print("a segment of the machine", ctypes.CDLL(None).shmget({key}, 0, 0) >= 0)
"""


def test_documented_differences_of_devices_and_system_v_ipc_hold(
    tmp_path: Path, stamp: Stamp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DIFFERENCES["files"] (no device but those a program needs, pseudo-terminals
    # of the run's own) and ["System V IPC"], under each runner, against plain
    # python run by the same user (root, where runs are sealed).
    import ctypes
    import pty
    import stat

    from snipcheck.run import sandbox

    monkeypatch.setenv("SNIPCHECK_NAMESPACES", "1")  # whatever a module fixture of this file set
    if sandbox.confinement():
        pytest.skip(f"runs are not sealed here: {sandbox.caveats()}")
    disks = sorted(str(d) for d in Path("/dev").iterdir() if stat.S_ISBLK(d.lstat().st_mode))
    device = "/dev/kmsg" if os.path.exists("/dev/kmsg") else next(iter(disks), None)  # the kernel's log, or a disk
    if device is None:
        pytest.skip("neither /dev/kmsg nor a block device here")
    libc = ctypes.CDLL(None, use_errno=True)
    key = int.from_bytes(os.urandom(3), "big") + 1
    segment = libc.shmget(key, 4096, 0o1000 | 0o600)  # IPC_CREAT
    assert segment >= 0
    ours = pty.openpty()
    try:
        name = os.path.basename(os.ttyname(ours[1]))
        (tmp_path / "snippets").mkdir()
        (tmp_path / "snippets" / "probe.py").write_text(DEVICES_AND_IPC_PROBE.format(device=device, pty=name, key=key))
        snippet = load("probe", tmp_path / "snippets", tmp_path)
        shown = plain(snippet).stdout
        outs = []
        for kind in ("subprocess", "fork"):
            runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
            try:
                result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
            finally:
                getattr(runner, "close", lambda: None)()
            outs.append("".join(e.text for e in result.events if e.stream == "stdout"))
    finally:
        libc.shmctl(segment, 0, None)  # IPC_RMID
        for fd in ours:
            os.close(fd)
    assert shown == f"/dev/null opened\n{device} opened\na terminal of the machine True\na segment of the machine True\n"
    sealed = f"/dev/null opened\n{device} Permission denied\na terminal of the machine False\na segment of the machine False\n"
    assert outs == [sealed, sealed]
    assert {"files", "System V IPC"} <= set(DIFFERENCES)


SIGNAL_33_PROBE = """\
import threading

def signal_33_caught():
    with open("/proc/self/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt"))
    return bool(mask >> 32 & 1)

print("before a thread", signal_33_caught())
thread = threading.Thread(target=lambda: None)
thread.start()
thread.join()
print("after a thread", signal_33_caught())
"""


def test_documented_difference_of_glibcs_signal_33_holds(tmp_path: Path, stamp: Stamp) -> None:
    # DIFFERENCES["fork runner: signal 33"]: a preload that starts a thread (numpy's
    # OpenBLAS) leaves glibc's SIGSETXID caught in every forked run; a plain run
    # catches it once the snippet starts a thread of its own.
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "probe.py").write_text(SIGNAL_33_PROBE)
    snippet = load("probe", tmp_path / "snippets", tmp_path)
    assert plain(snippet).stdout == "before a thread False\nafter a thread True\n"
    expected = {(): "before a thread False\n", ("numpy",): "before a thread True\n"}
    for preload, first in expected.items():
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind="fork", preload=preload)
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        assert result.runner == "fork"
        out = "".join(e.text for e in result.events if e.stream == "stdout")
        assert out == first + "after a thread True\n", preload
    assert "fork runner: signal 33" in DIFFERENCES


C_EXIT_PROBE = """\
import ctypes
libc = ctypes.CDLL(None)
# atexit(3) itself lives in libc_nonshared.a; glibc exports what it calls.
# A C exit handler with an effect one can see: the process dies of SIGABRT.
getattr(libc, "__cxa_atexit")(libc.abort, None, None)
print("registered")
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="registers its handler with glibc's __cxa_atexit")
def test_the_fork_runner_skips_c_exit_handlers_as_documented(tmp_path: Path, stamp: Stamp) -> None:
    # DIFFERENCES["fork runner: C exit handlers"]: plain python (and the
    # subprocess runner, which ends as python does) runs the handler at exit;
    # a forked run ends with _exit after flushing C stdio, and never runs it.
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "cexit.py").write_text(C_EXIT_PROBE)
    snippet = load("cexit", tmp_path / "snippets", tmp_path)
    assert plain(snippet).ended == "signal SIGABRT"
    endings = {}
    for kind in ("subprocess", "fork"):
        runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
        try:
            result = runner.run(snippet, timeout=TIMEOUT, output_limit=LIMIT)
        finally:
            getattr(runner, "close", lambda: None)()
        assert "".join(e.text for e in result.events if e.stream == "stdout") == "registered\n", kind
        endings[kind] = ending(result.exit_status, result.signal)
    assert endings == {"subprocess": "signal SIGABRT", "fork": "exit 0"}
    assert "fork runner: C exit handlers" in DIFFERENCES
