"""Benchmark: figures and ratios for the design's performance targets (design §10).

Run with ``nox -s bench`` (or ``python tests/benchmark.py`` in an environment
with the project, torch, numpy and ipykernel installed).  It prints figures
and ratios; it asserts nothing.  Two subjects, each in a scratch copy:

* the real chapter (every page under docs/);
* a generated corpus of small torch snippets (100, 300 and 1,000 of them, on
  pages of 100 snippets), for scaling.

Measured per subject: the Sphinx build with execution off; one ``import
torch``; the snippets' own run time (each executed in one warm process with a
fresh HOME and TMPDIR, as the build's runs have, so neither interpreter
start-up nor ``import torch`` is counted, and no cache of an earlier run is
found); a cold build
(empty cache); a rebuild with nothing changed; a rebuild after editing one
snippet; the naive way (``python snippets/x.py`` per snippet, serially); and
myst-nb's ``force`` execution of the same code as ``code-cell`` blocks.  Also
the per-snippet overhead of the fork runner next to the floor of a fork (fork
and exit of a process that imported torch), the CPU the cold build's
processes used (every process of its tree, those that outlived their parent
too: the measuring process is their subreaper) and how busy that kept the
cores, with how busy the whole machine was (``/proc/stat``), and its peak RSS.  Last,
where one snippet's time goes (:mod:`bench_breakdown`: fork, child set-up, the
run, cache write, the parent's bookkeeping, Sphinx's part); ``--before REV``
adds a column for the snipcheck of git revision REV (checked out in a
temporary worktree; the two are measured in turn, ``--rounds`` times, and each
part is the median of its rounds), ``--breakdown`` prints that table alone.
And what large outputs cost a build (:mod:`bench_outputs`: a 1 MB line, one
that drifts, many long lines, colours, mixed streams, a 2 GB flood);
``--outputs`` prints that table alone.
And the read of one page of 2,000, 8,000 and 50,000 snippets with nothing
run (:mod:`bench_pages`; with ``--before``, that revision's too, up to 8,000);
``--one-page [SIZES]`` prints that table alone.
And a CI run of the chapter and of the 1,000-snippet corpus after a
one-snippet change, given the CI cache the cold run before it saved, against
that cold run (:mod:`bench_ci_cache`; issue 38); ``--ci-cache`` prints that
table alone.
And the script corpus built by snipcheck and by sphinx-gallery, cold and
with nothing changed (:mod:`bench_gallery`); ``--gallery`` prints that row alone.
``--overhead --before REV`` adds this checkout's run of ``pass`` against that
of revision REV, the two runners in turn, round after round
(:mod:`bench_versus`): on a shared machine the only comparison of two
runners that a drift of the machine's speed does not decide.
And a notebook of 50 small cells checked by snipcheck, built by myst-nb's
``force`` execution and run by ``pytest --nbval`` (:mod:`bench_notebooks`);
``--notebooks`` prints that row alone.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# SNIPCHECK_BENCH_EXT: measure another checkout's snipcheck (its _ext folder) with this benchmark.
sys.path.insert(0, os.environ.get("SNIPCHECK_BENCH_EXT") or str(ROOT / "_ext"))

import bench_ci_cache
import bench_gallery
import bench_notebooks
import bench_outputs
import bench_pages
import bench_versus
from bench_breakdown import fork_times
from bench_corpus import corpus
from snipcheck.app.project import Project
from snipcheck.sources import tags

PY = sys.executable
#: Snippets on the one page of the reading benchmark (issue 33 §8).
ONE_PAGE = "2000,8000,50000"

OWN_TIME = r"""
import io, json, os, sys, time, contextlib, warnings, runpy
import torch
paths = json.loads(sys.stdin.read())
total = 0.0
for path in paths:
    code = compile(open(path, encoding="utf-8").read(), path, "exec")
    sink = io.StringIO()
    t = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, {"__name__": "__main__", "__file__": path})
    except BaseException:
        pass
    total += time.perf_counter() - t
    torch.autograd.set_detect_anomaly(False)
print(json.dumps(total))
"""

MEASURE = r"""
import ctypes, os, resource, subprocess, sys, time
# A subreaper: processes of the build that outlive their parent (the fork
# server's slots, which the server does not wait for) are reparented here and
# reaped below, so that their CPU and peak RSS count in RUSAGE_CHILDREN.
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
def busy():  # machine-wide busy and total jiffies (/proc/stat), for the utilisation
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle, sum(fields[:8])
b0 = busy()
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
dt = time.perf_counter() - t
b1 = busy()
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
import json
print(json.dumps({"seconds": dt, "rc": rc.returncode, "peak_kib": usage.ru_maxrss,
                  "cpu": usage.ru_utime + usage.ru_stime, "machine_busy": (b1[0] - b0[0]) / max(1, b1[1] - b0[1]),
                  "stderr": rc.stdout[-4000:]}))
"""


def measured(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
    """Run ``cmd`` under a wrapper that reports wall seconds and the peak RSS of its process tree."""
    out = subprocess.run([PY, "-c", MEASURE, *cmd], capture_output=True, text=True, env=env, cwd=cwd, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def sphinx(project: Path, out: str, cache: Path, *extra: str) -> dict:
    # Each subject keeps its snippets' compile caches in a folder of its own: the
    # first cold build finds none, as on a fresh machine (run/compile_cache.py).
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), SNIPCHECK_COMPILE_CACHE_DIR=str(project / ".compile-cache"))
    cmd = [PY, "-m", "sphinx", "-b", "html", "-c", str(project), "-d", str(project / out / "doctrees"),
           *extra, str(project / "docs"), str(project / out / "html")]
    result = measured(cmd, env=env, cwd=project)
    m = re.findall(r"this build ran (\d+), took (\d+) from the cache", result["stderr"])
    result["ran"] = int(m[-1][0]) if m else 0
    return result


def copy_project(dest: Path) -> Path:
    for name in ("conf.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "docs", dest / "docs")
    shutil.copytree(ROOT / "snippets", dest / "snippets")
    return dest


def python_snippets(project: Path) -> list[Path]:
    """Placed Python snippets with no requirement (Rust and burn ones are left out)."""
    out = []
    for p in Project.load(project)[0].placements():
        path = project / "snippets" / f"{p.snippet_id}.py"
        if path.is_file() and not tags.parse(path.read_text(encoding="utf-8")).tags.requires:
            out.append(path)
    return out


def import_torch_seconds() -> float:
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([PY, "-c", "import torch"], check=True)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def own_seconds(paths: list[Path], project: Path, home: str | None = None) -> float:
    """The snippets' own run time, in one warm process with ``home`` as its
    HOME and TMPDIR (default: a fresh one, as the first run of every snippet
    has: torch.compile would otherwise find the C++ kernels it compiled before
    in /tmp/torchinductor_<user> and take a third of its real cold time;
    given again, its compile caches are warm, as a snippet's later runs find
    them, see ``run/compile_cache.py``)."""
    home = home or tempfile.mkdtemp(prefix="snipcheck-bench-own-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR")}
    env.update(PYTHONWARNINGS="ignore", HOME=home, TMPDIR=home)
    out = subprocess.run(  # the paths on stdin: 10,000 of them are too long for an argument list
        [PY, "-c", OWN_TIME], input=json.dumps([str(p) for p in paths]),
        capture_output=True, text=True, check=True, cwd=home, env=env,
    )
    return float(out.stdout.strip().splitlines()[-1])


def naive_seconds(paths: list[Path], project: Path) -> float:
    t = time.perf_counter()
    for path in paths:
        subprocess.run([PY, str(path.relative_to(project))], cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def mystnb_force_seconds(
    paths: list[Path], project: Path, per_page: int = 100, tmpdir: str | None = None
) -> tuple[float, float] | None:
    """myst-nb executing the same code as code-cells (one kernel per page):
    ``(cold build, rebuild after editing one cell)`` in seconds; ``tmpdir``:
    the kernels' TMPDIR (where inductor keeps its cache: one warmed by
    :func:`own_seconds`, as a notebook kernel finds the machine's)."""
    try:
        import ipykernel  # noqa: F401
    except ImportError:
        return None
    nb = project / "mystnb"
    (nb / "docs" / "_search").mkdir(parents=True)
    # The same configuration (theme, Chinese search, extensions), with myst-nb
    # executing the code cells instead of snipcheck running snippets.
    shutil.copy2(ROOT / "docs" / "_search" / "userdict.txt", nb / "docs" / "_search" / "userdict.txt")
    (nb / "conf.py").write_text(
        (project / "conf.py").read_text()
        + '\nnb_execution_mode = "force"\nnb_execution_allow_errors = True\nnb_execution_timeout = 600\n'
    )
    pages = [paths[i : i + per_page] for i in range(0, len(paths), per_page)]
    header = "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
    names = []
    for n, page in enumerate(pages):
        cells = [f"```{{code-cell}} python\n{p.read_text(encoding='utf-8')}\n```\n" for p in page]
        (nb / "docs" / f"p{n}.md").write_text(header + f"# Page {n}\n\n" + "\n".join(cells))
        names.append(f"p{n}")
    (nb / "docs" / "index.md").write_text("# Index\n\n```{toctree}\n" + "\n".join(names) + "\n```\n")
    cmd = [PY, "-m", "sphinx", "-b", "html", "-q", "-c", str(nb), "-d", str(nb / "_doctrees"), str(nb / "docs"), str(nb / "_build")]
    env = dict(os.environ, TMPDIR=tmpdir) if tmpdir else None
    cold = measured(cmd, env=env, cwd=nb)["seconds"]
    page = nb / "docs" / f"p{len(pages) // 2}.md"
    page.write_text(page.read_text(encoding="utf-8").replace("```\n", "# edited by the benchmark\n```\n", 1))
    return cold, measured(cmd, env=env, cwd=nb)["seconds"]


#: Runs (and floor forks) a round of the runner's overhead; rounds at least and at most.
OVERHEAD_BATCH, OVERHEAD_ROUNDS = 100, (4, 16)


def fork_overhead_ms(project: Path, cache: Path) -> dict:
    """The fork runner's overhead for a snippet that does nothing, above the
    server floor, measured in rounds: each round times :data:`OVERHEAD_BATCH`
    runs of ``pass`` (``ForkRunner.run`` as a build's worker calls it: the run
    directory, the capture, the slot's fork, the sandbox, the run's exit, the
    report) and as many forks of the floor (a process that imported torch,
    its memory in huge pages, as the warm server's: :class:`bench_breakdown.FloorServer`),
    one after the other, so both see the same load; a round's overhead is the
    difference of its two medians.  Rounds go on until the medians of the odd
    and of the even rounds agree within 10 % (the figure repeats), at least
    and at most :data:`OVERHEAD_ROUNDS`.  Also: the CPU a run costs (the
    build's process, and the slot with the runs it reaped: on a busy machine
    wall time is mostly waiting for a core), the page faults a run costs in
    its own process (copy-on-write of the server's memory, mostly) and in the
    slot that forks it (its own writes after each fork), and a plain
    subprocess run for comparison.

    :return: ``overhead`` (ms, the median over rounds), ``rounds``,
        ``agreement`` (odd against even rounds, a fraction), ``run`` and
        ``floor`` (ms, medians over rounds), ``cpu`` (ms a run) and its parts
        ``cpu_build``, ``cpu_slot``, ``cpu_runs`` (the build's process, the
        slot itself, the runs it reaped), ``cpu_floor_parent`` and
        ``cpu_floor_child`` (ms a fork of the floor: the fork, the child's
        exit), ``faults`` and ``slot_faults`` (a run), ``subprocess`` (ms).
    """
    from bench_breakdown import FloorServer
    from snipcheck.run.environment import probe
    from snipcheck.run.fork import ForkRunner
    from snipcheck.run.python import SubprocessRunner
    from snipcheck.sources.snippets import load

    (project / "snippets" / "bench").mkdir(exist_ok=True)
    (project / "snippets" / "bench" / "noop.py").write_text("pass\n")
    snippet = load("bench/noop", project / "snippets", project)
    stamp = probe(PY, cache)
    runner = ForkRunner(PY, stamp)
    floor = FloorServer()
    for _ in range(10):
        runner.run(snippet, timeout=60, output_limit=1 << 20)
    (slot,) = [slot.pid for slot in runner._idle]  # the slot reaps the runs: its cminflt and cutime count them

    tick = os.sysconf("SC_CLK_TCK")

    def cpu_of(pid: int) -> tuple[float, float]:
        """Seconds of CPU of ``pid`` itself and of the children it reaped (stat(5) fields 14-17)."""
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick

    def counters() -> dict[str, float]:
        with open(f"/proc/{slot}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        slot_cpu, runs_cpu = cpu_of(slot)
        floor_cpu, forks_cpu = cpu_of(floor.proc.pid)
        return {
            "own": int(fields[7]), "children": int(fields[8]),  # field 10 of stat(5) on: minflt, cminflt
            "build": usage.ru_utime + usage.ru_stime, "slot": slot_cpu, "runs": runs_cpu,
            "floor_parent": floor_cpu, "floor_child": forks_cpu,
        }  # fmt: skip

    rounds: list[tuple[float, float]] = []
    runs = 0
    before = counters()
    try:
        while True:
            times = []
            for _ in range(OVERHEAD_BATCH):
                t = time.perf_counter()
                runner.run(snippet, timeout=60, output_limit=1 << 20)
                times.append(time.perf_counter() - t)
            runs += OVERHEAD_BATCH
            forks = floor.times(OVERHEAD_BATCH)
            rounds.append((statistics.median(times) * 1000, statistics.median(forks) * 1000))
            overheads = [run - fork for run, fork in rounds]
            odd, even = statistics.median(overheads[0::2]), statistics.median(overheads[1::2] or overheads)
            agreement = abs(odd - even) / max(abs(statistics.median(overheads)), 1e-9)
            if len(rounds) >= OVERHEAD_ROUNDS[1] or (len(rounds) >= OVERHEAD_ROUNDS[0] and agreement <= 0.10):
                break
        after = counters()
        assert [s.pid for s in runner._idle] == [slot], "the runs went to another slot"
    finally:
        runner.close()
        floor.close()
    sub = SubprocessRunner(PY, stamp)
    plain = [sub.run(snippet, timeout=60, output_limit=1 << 20).duration for _ in range(3)]
    return {
        "overhead": statistics.median(overheads), "rounds": len(rounds), "agreement": agreement,
        "run": statistics.median(r for r, _ in rounds), "floor": statistics.median(f for _, f in rounds),
        **{f"cpu_{k}": (after[k] - before[k]) / runs * 1000 for k in ("build", "slot", "runs", "floor_parent", "floor_child")},
        "cpu": sum(after[k] - before[k] for k in ("build", "slot", "runs")) / runs * 1000,
        "faults": (after["children"] - before["children"]) / runs,
        "slot_faults": (after["own"] - before["own"]) / runs, "subprocess": statistics.median(plain) * 1000,
    }  # fmt: skip


def fork_floor_ms() -> tuple[float, float, float]:
    """The physical floor of a forked run: ``fork()`` + ``_exit(0)`` + ``waitpid`` of a
    process that imported torch (the warm server's size), with nothing else
    (no capture, no supervisor, no run directory); see
    :func:`bench_breakdown.fork_times`.

    :return: ms: the median and best decile with its memory in 4 KiB pages (a
        plain process), and the median after the warm server's ``MADV_COLLAPSE``
        into huge pages (the server's own floor)."""
    times = fork_times("small", 200)
    huge = fork_times("huge", 200)
    return statistics.median(times) * 1000, times[len(times) // 10] * 1000, statistics.median(huge) * 1000


CAPTURE_CHILD = "import os\nfor i in range({n}):\n    os.write(1, b'o%d\\n' % i)\n    os.write(2, b'e%d\\n' % i)\n"


def capture_overhead() -> dict:
    """What exact order costs (issue 11): the datagram channel of ``runner.capture``
    against two pipes read in turn (the capture before it), for the same child
    (``python -S``: ``n`` writes to fd 1 and fd 2 in turn), without supervisor.

    :return: per-run setup cost (µs), median wall time of a run (ms) with 0 and
        2,000 writes, the order breaks each shows in the 2,000-write run, and
        the build's own CPU time per run (ms; wall time on a busy machine is
        mostly waiting, CPU time is what the capture costs).
    """
    import selectors
    import time as _time

    from snipcheck.run.channel import Channel, Reader, Sink

    def via_pipes(code: str) -> tuple[float, list[tuple[str, bytes]]]:
        start = _time.perf_counter()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        proc = subprocess.Popen([PY, "-S", "-c", code], stdout=out_w, stderr=err_w, stdin=subprocess.DEVNULL)
        os.close(out_w)
        os.close(err_w)
        sel = selectors.DefaultSelector()
        sel.register(out_r, selectors.EVENT_READ, "stdout")
        sel.register(err_r, selectors.EVENT_READ, "stderr")
        seen = []
        while sel.get_map():
            for key, _ in sel.select():
                data = os.read(key.fd, 1 << 20)
                if data:
                    seen.append((key.data, data))
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
        proc.wait()
        return _time.perf_counter() - start, seen

    def via_datagrams(code: str) -> tuple[float, list[tuple[str, bytes]]]:
        start = _time.perf_counter()
        channel = Channel()
        sink = Sink(1 << 24)
        reader = Reader(channel, sink, b"\0" * 16)
        proc = subprocess.Popen([PY, "-S", "-c", code], stdout=channel.senders[0].fileno(),
                                stderr=channel.senders[1].fileno(), stdin=subprocess.DEVNULL)
        for sender in channel.senders:
            sender.close()
        pidfd = os.pidfd_open(proc.pid)
        sel = selectors.DefaultSelector()
        sel.register(channel.receiver, selectors.EVENT_READ)
        sel.register(pidfd, selectors.EVENT_READ)
        done = False
        while not done:
            for key, _ in sel.select():
                if key.fileobj == pidfd:
                    done = True
                reader.drain()
        reader.drain()
        sel.close()
        os.close(pidfd)
        proc.wait()
        channel.close()
        return _time.perf_counter() - start, [(where[0], bytes(data)) for where, data in sink.chunks]

    def breaks(seen: list[tuple[str, bytes]], n: int) -> int:
        lines = [(stream, line) for stream, data in seen for line in data.decode().splitlines()]
        wanted = [pair for i in range(n) for pair in (("stdout", f"o{i}"), ("stderr", f"e{i}"))]
        return sum(a != b for a, b in zip(lines, wanted)) + abs(len(lines) - len(wanted))

    setup = []
    for _ in range(200):
        t = _time.perf_counter()
        Channel().close()
        setup.append(_time.perf_counter() - t)
    pipes_setup = []
    for _ in range(200):
        t = _time.perf_counter()
        fds = [*os.pipe(), *os.pipe()]
        for fd in fds:
            os.close(fd)
        pipes_setup.append(_time.perf_counter() - t)
    r: dict = {"setup_us": statistics.median(setup) * 1e6, "pipes_setup_us": statistics.median(pipes_setup) * 1e6}
    def cpu() -> float:
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    for n in (0, 2000):
        code = CAPTURE_CHILD.format(n=n)
        p_times, d_times, p_breaks, d_breaks, p_cpu, d_cpu = [], [], [], [], 0.0, 0.0
        runs = 15 if n else 40
        for _ in range(runs):
            c = cpu()
            t, seen = via_pipes(code)
            p_cpu += cpu() - c
            p_times.append(t)
            p_breaks.append(breaks(seen, n))
            c = cpu()
            t, seen = via_datagrams(code)
            d_cpu += cpu() - c
            d_times.append(t)
            d_breaks.append(breaks(seen, n))
        r[n] = (statistics.median(p_times) * 1000, statistics.median(d_times) * 1000, max(p_breaks), max(d_breaks))
        r[f"cpu{n}"] = (p_cpu / runs * 1000, d_cpu / runs * 1000)
    return r


def edit_one(paths: list[Path]) -> None:
    target = paths[len(paths) // 2]
    target.write_text(target.read_text(encoding="utf-8") + "\n# edited by the benchmark\n", encoding="utf-8")


def bench_subject(name: str, project: Path, *, naive_sample: int | None = None, mystnb: bool = True) -> dict:
    cache = project / ".cache"
    paths = python_snippets(project)
    n = len(paths)
    r: dict = {"subject": name, "snippets": n}
    r["exec_off"] = sphinx(project, "_off", cache, "-D", "snipcheck_execute=0")["seconds"]
    r["import_torch"] = import_torch_seconds()
    home = tempfile.mkdtemp(prefix="snipcheck-bench-own-")
    r["own_cold"] = own_seconds(paths, project, home)  # compile caches empty
    r["own"] = own_seconds(paths, project, home) if compiles(paths) else r["own_cold"]  # and warm
    if compiles(paths):  # the first cold build compiles, the next one finds each snippet's compile cache
        r["cold_fresh"] = sphinx(project, "_f", project / ".cache-fresh")["seconds"]
    cold = sphinx(project, "_b", cache)
    r["cold"], r["peak_mib"], r["cold_rc"] = cold["seconds"], cold["peak_kib"] / 1024, cold["rc"]
    r["cold_cpu"] = cold["cpu"]  # every process of the build's tree: sphinx, fork server, slots, snippets
    r["cold_busy"] = cold["machine_busy"]  # every core of the machine, whoever used it
    nochange = sphinx(project, "_b", cache)
    r["nochange"], r["nochange_ran"] = nochange["seconds"], nochange["ran"]
    edit_one(paths)
    edit = sphinx(project, "_b", cache)
    r["edit"], r["edit_ran"] = edit["seconds"], edit["ran"]
    sample = paths if naive_sample is None or naive_sample >= n else paths[:naive_sample]
    naive = naive_seconds(sample, project)
    r["naive"] = naive * n / len(sample)
    r["naive_extrapolated"] = len(sample) != n
    r["mystnb"] = mystnb_force_seconds(paths, project, tmpdir=home) if mystnb else None
    return r


def compiles(paths: list[Path]) -> bool:
    """Whether any of these snippets calls ``torch.compile``."""
    return any("torch.compile(" in p.read_text(encoding="utf-8") for p in paths)


def print_overhead(o: dict, floor: float | None = None, floor_best: float | None = None) -> None:
    """Print :func:`fork_overhead_ms`'s figures (and the 4 KiB-page floor, where measured)."""
    print(f"\n== per-snippet overhead of the fork runner (a snippet that does nothing; median of {o['rounds']} rounds "
          f"of {OVERHEAD_BATCH} runs, each beside {OVERHEAD_BATCH} forks of the floor)")
    print(f"  overhead      {o['overhead']:7.2f} ms   above the server floor   target <= 3 ms   "
          f"(odd and even rounds agree within {o['agreement']:.0%})")
    print(f"  fork runner   {o['run']:7.2f} ms   a run of pass, as a build's worker waits for it (the run directory, "
          "capture, slot, sandbox, fork and exit, report)")
    print(f"  server floor  {o['floor']:7.2f} ms   fork + exit + wait of a process that imported torch, its memory in "
          "huge pages as the warm server has it")
    if floor is not None and floor_best is not None:
        print(f"  4 KiB floor   {floor:7.2f} ms   (best decile {floor_best:.2f} ms; 200 forks): the same fork with its "
              "memory in 4 KiB pages, as a plain process has it")
    print(f"  CPU           {o['cpu']:7.2f} ms   a run: the build's process {o['cpu_build']:.2f}, the slot {o['cpu_slot']:.2f} "
          f"(its fork of the run, its bookkeeping), the run's process {o['cpu_runs']:.2f} (set-up, run, exit); "
          "wall time on a busy machine is mostly waiting")
    print(f"  floor's CPU   {o['cpu_floor_parent'] + o['cpu_floor_child']:7.2f} ms   a fork of the floor: the parent "
          f"{o['cpu_floor_parent']:.2f} (fork), the child {o['cpu_floor_child']:.2f} (its exit)")
    print(f"  page faults   {o['faults']:7.0f}      a run, in its own process (copy-on-write of the server's memory, mostly)")
    print(f"                {o['slot_faults']:7.0f}      a run, in the slot that forks it (its own writes after each fork)")
    print(f"  subprocess    {o['subprocess']:7.1f} ms   (python start-up + sitecustomize; median of 3; "
          f"{o['subprocess'] / o['run']:4.1f}x the fork runner)")


def table(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        base = r["exec_off"] + r["import_torch"] + r["own"]
        lines.append(f"\n== {r['subject']}: {r['snippets']} Python snippets")
        lines.append(f"  build, execution off            {r['exec_off']:8.2f} s")
        lines.append(f"  one `import torch`              {r['import_torch']:8.2f} s")
        if "cold_fresh" in r:
            fresh = r["exec_off"] + r["import_torch"] + r["own_cold"]
            lines.append(f"  snippets' own run time          {r['own']:8.2f} s   ({r['own_cold']:.2f} s with compile caches empty)")
            lines.append(f"  cold build, no compile cache    {r['cold_fresh']:8.2f} s   ratio to (off + import + own with compile "
                         f"caches empty) = {r['cold_fresh'] / fresh:5.2f}   (a machine's first build)")
        else:
            lines.append(f"  snippets' own run time          {r['own']:8.2f} s")
        lines.append(f"  cold build (empty cache)        {r['cold']:8.2f} s   ratio to (off + import + own) = {r['cold'] / base:5.2f}   target <= 1.2")
        lines.append(f"  rebuild, nothing changed        {r['nochange']:8.2f} s   ratio to execution off = {r['nochange'] / r['exec_off']:5.2f}   target <= 1.1   (snippets run: {r['nochange_ran'] or 0})")
        lines.append(f"  rebuild, one snippet edited     {r['edit']:8.2f} s   snippets run: {r['edit_ran']}")
        naive = " (extrapolated from a sample)" if r["naive_extrapolated"] else ""
        lines.append(f"  naive `python x.py`, serial     {r['naive']:8.2f} s{naive}   cold build is {r['naive'] / r['cold']:5.1f}x faster")
        if r["mystnb"] is not None:
            nb_cold, nb_edit = r["mystnb"]
            lines.append(f"  myst-nb force (code-cells)      {nb_cold:8.2f} s   cold build is {nb_cold / r['cold']:5.1f}x faster")
            lines.append(f"  myst-nb force, one cell edited  {nb_edit:8.2f} s   one-snippet rebuild is {nb_edit / r['edit']:5.1f}x faster")
        else:
            lines.append("  myst-nb force                   (run on the chapter and the largest corpus only)")
        per = (r["cold"] - r["exec_off"] - r["import_torch"] - r["own"]) / max(r["snippets"], 1) * 1000
        lines.append(f"  cold-build overhead per snippet {per:8.1f} ms  (cold - off - import - own) / n")
        lines.append(f"  peak RSS of the cold build      {r['peak_mib']:8.0f} MiB  (the largest process of the build's tree)")
        cores = os.cpu_count() or 1
        lines.append(f"  CPU of the cold build           {r['cold_cpu']:8.2f} s   utilisation {r['cold_cpu'] / (r['cold'] * cores):5.0%} of {cores} cores"
                     f"   (the whole machine: {r['cold_busy']:4.0%} busy)")
        if r["cold_rc"]:
            lines.append(f"  (the cold build exited with status {r['cold_rc']})")
    return "\n".join(lines)


def fingerprint_ms(repeat: int = 20) -> None:
    """Print what the environment fingerprint costs a build (issue 10 §3: at most 50 ms).

    Cold: no stored probe answer (the quick probe starts the interpreter once).
    Warm: a build with nothing changed (stored answer, sys.path listed again).
    The listing alone: the part that runs on every build.
    """
    from snipcheck.run import fingerprint
    from snipcheck.run.environment import probe_environment

    def timed(fn: Callable[[], object]) -> list[float]:
        out = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1000)
        return out

    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-fp-") as tmp:
        found = probe_environment(PY, Path(tmp) / "warm")
        cold = timed(lambda: probe_environment(PY, Path(tempfile.mkdtemp(dir=tmp))))
        warm = timed(lambda: probe_environment(PY, Path(tmp) / "warm"))
        listing = timed(lambda: fingerprint.scan(found.fingerprint.paths))
    print(f"== environment fingerprint ({len(found.fingerprint.paths)} sys.path entries, "
          f"{len(found.fingerprint.distributions)} distributions; median of {repeat})")
    print(f"  warm (nothing changed)   {statistics.median(warm):7.1f} ms   max {max(warm):6.1f} ms   target <= 50 ms")
    print(f"  listing sys.path alone   {statistics.median(listing):7.1f} ms")
    print(f"  cold (no stored answer)  {statistics.median(cold):7.1f} ms   (starts the interpreter once; "
          "a fresh cache or a changed environment)")


def breakdown_of(ext: Path, name: str) -> dict[str, float]:
    """:mod:`bench_breakdown` run on the snipcheck in ``ext`` (its own process: that snipcheck is imported)."""
    out = subprocess.run(
        [PY, str(ROOT / "tests" / "bench_breakdown.py"), "--ext", str(ext), "--name", name],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_breakdown(before: str | None, rounds: int = 3) -> None:
    """Where a snippet's time goes, for this checkout and (``before``) a git revision of it.

    With ``before``, the two checkouts are measured in turn, ``rounds`` times,
    and each part is the median of its rounds: this machine's speed drifts
    over minutes, and one column measured after the other read that drift as
    a difference between them."""
    from bench_breakdown import table as breakdown_table

    seen: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-rev-") as tmp:
        exts = {"now": ROOT / "_ext"}
        if before:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", tmp, before],
                           check=True, capture_output=True)  # fmt: skip
            exts = {before[:12]: Path(tmp) / "_ext", **exts}
        try:
            for _ in range(rounds if before else 1):
                for name, ext in exts.items():
                    seen.setdefault(name, []).append(breakdown_of(ext, name))
        finally:
            if before:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp], check=False)
    columns = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]} for name, runs in seen.items()}
    taken = f"; the checkouts in turn, median of {rounds} rounds" if before and rounds > 1 else ""
    print(f"\n== where a snippet's time goes (one run at a time, median ms a snippet{taken}; tests/bench_breakdown.py)")
    print(breakdown_table(columns))


def corpus_rows(sizes: list[int], *, mystnb: bool) -> None:
    """Build the generated corpus of each size (cold, rebuilt, edited) and print its rows."""
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-") as tmp:
        for size in sizes:
            project = corpus(Path(tmp) / f"corpus{size}", size)
            print(table([bench_subject(f"corpus of {size}", project, naive_sample=20, mystnb=mystnb and size == 1000)]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="corpus sizes for the scaling run (pages of 25 snippets)")
    parser.add_argument("--no-mystnb", action="store_true")
    parser.add_argument(
        "--corpus", action="store_true",
        help="only build the generated corpus of each of --sizes (the cold build's ratio to its floor)",
    )  # fmt: skip
    parser.add_argument("--fingerprint", action="store_true", help="only measure the environment fingerprint")
    parser.add_argument("--breakdown", action="store_true", help="only measure where a snippet's time goes")
    parser.add_argument("--outputs", action="store_true", help="only measure what large outputs cost a build")
    parser.add_argument("--overhead", action="store_true", help="only measure the fork runner's overhead above its floor")
    parser.add_argument(
        "--ci-cache", dest="ci_cache", action="store_true",
        help="only measure a CI run after a one-snippet change with the CI cache against a cold one (tests/bench_ci_cache.py)",
    )  # fmt: skip
    parser.add_argument("--gallery", action="store_true", help="only build the script corpus by snipcheck and sphinx-gallery")
    parser.add_argument(
        "--notebooks", action="store_true",
        help="only check a notebook of 50 cells by snipcheck, myst-nb (force) and pytest --nbval (tests/bench_notebooks.py)",
    )  # fmt: skip
    parser.add_argument(
        "--before", metavar="REV",
        help="also break down the snipcheck of git revision REV (with --overhead: its runner against this one's, in turn)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="with --before: rounds of the two checkouts in turn (default 3)")
    parser.add_argument(
        "--one-page", metavar="SIZES", nargs="?", const=ONE_PAGE,
        help=f"only measure the read of one page of that many snippets (default {ONE_PAGE}; tests/bench_pages.py)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.one_page:
        bench_pages.report([int(s) for s in args.one_page.split(",") if s], args.rounds, args.before)
        return
    if args.fingerprint:
        fingerprint_ms()
        return
    if args.breakdown:
        print_breakdown(args.before, args.rounds)
        return
    if args.outputs:
        bench_outputs.report()
        return
    if args.ci_cache:
        bench_ci_cache.report(args.rounds)
        return
    if args.gallery:
        bench_gallery.report(args.rounds)
        return
    if args.notebooks:
        bench_notebooks.report(args.rounds)
        return
    if args.overhead:
        with tempfile.TemporaryDirectory(prefix="snipcheck-bench-") as tmp:
            print_overhead(fork_overhead_ms(copy_project(Path(tmp)), Path(tmp) / ".probe-cache"))
        if args.before:  # the two runners in turn: on a shared machine the only fair comparison
            bench_versus.report(args.before)
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.corpus:
        corpus_rows(sizes, mystnb=not args.no_mystnb)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-") as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "chapter").mkdir()
        chapter = copy_project(tmp_path / "chapter")
        overhead = fork_overhead_ms(chapter, chapter / ".probe-cache")
        floor, floor_best, _ = fork_floor_ms()
        capture = capture_overhead()
        rows.append(bench_subject("chapter", chapter, mystnb=not args.no_mystnb))
        print(table(rows[-1:]), flush=True)  # each subject as it is done: a long run keeps what it measured
        scaling = []
        for size in sizes:
            project = corpus(tmp_path / f"corpus{size}", size)
            row = bench_subject(f"corpus of {size}", project, naive_sample=20, mystnb=not args.no_mystnb and size == 1000)
            rows.append(row)
            print(table([row]), flush=True)
            scaling.append((size, row["cold"], row["exec_off"]))
    print("\n== all subjects" + table(rows))
    print_overhead(overhead, floor, floor_best)
    print("\n== exact order: the datagram capture against two pipes read in turn (same child, no supervisor)")
    print(f"  channel set-up and removal    {capture['setup_us']:7.1f} us   (three pipes: {capture['pipes_setup_us']:.1f} us)")
    for n in (0, 2000):
        pipes_ms, dgram_ms, pipe_breaks, dgram_breaks = capture[n]
        pipes_cpu, dgram_cpu = capture[f"cpu{n}"]
        print(f"  run with {n:4d} writes to fd 1/2 {dgram_ms:7.2f} ms   (pipes {pipes_ms:.2f} ms; difference "
              f"{dgram_ms - pipes_ms:+.2f} ms)   order breaks: pipes {pipe_breaks}, datagrams {dgram_breaks}")
        print(f"    the build's CPU per run     {dgram_cpu:7.2f} ms   (pipes {pipes_cpu:.2f} ms; difference "
              f"{dgram_cpu - pipes_cpu:+.2f} ms)")
    print("  target: exact order costs <= 1 ms a snippet (the 0-write difference)")
    print()
    fingerprint_ms()
    bench_outputs.report()
    print_breakdown(args.before, args.rounds)
    bench_pages.report([int(s) for s in ONE_PAGE.split(",")], args.rounds, args.before)
    bench_ci_cache.report(args.rounds)
    bench_gallery.report(args.rounds)
    bench_notebooks.report(args.rounds)
    if len(scaling) > 1:
        print("\n== scaling of the cold build")
        (n0, c0, o0) = scaling[0]
        for n, cold, off in scaling:
            print(f"  {n:5d} snippets  cold {cold:7.2f} s  per snippet {cold / n * 1000:6.1f} ms  "
                  f"(execution off {off:6.2f} s)  x{cold / c0:5.2f} time for x{n / n0:5.1f} snippets")


if __name__ == "__main__":
    main()
