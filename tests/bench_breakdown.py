"""Where a snippet's time goes: the per-snippet breakdown of a cold build (issue 14 §3).

Run by ``tests/benchmark.py`` (``nox -s bench``), or alone::

    python tests/bench_breakdown.py                 # this checkout
    python tests/bench_breakdown.py --ext OLD/_ext  # another checkout's snipcheck (before/after)

Each part is measured on its own, one run at a time (no second job competes
for the cores), as the median of ``--runs`` runs, in milliseconds a snippet:

* fork: ``fork()`` + ``_exit(0)`` + ``waitpid`` of a process that imported
  torch, with its memory in 4 KiB pages and after the fork server's
  ``MADV_COLLAPSE`` (the server of ``--ext`` uses one or the other);
* child set-up and finish: the fork runner's whole run of ``pass`` less the
  fork (the supervisor, the run directory, the capture channel, seeding, the
  exit);
* the run: the runner's run of the corpus snippet (``torch.arange``, an
  in-place ``mul_``, a print) less the run of ``pass`` (its own work and the
  copy-on-write faults of touching torch's state);
* cache write: ``ResultCache.put`` of that result (lock-free; the executor
  holds the entry's lock);
* the parent's bookkeeping: ``Executor._execute`` of a snippet not in the
  cache (key, lock, lookup, run, store) less the run and the cache write;
* Sphinx: a rebuild from scratch (``-E``) of a corpus whose every result is
  in the cache, less the same build with execution off, per snippet: the
  directive's lookups, its nodes, the env's pickling and writing them.

It prints a table and, last, one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
HERE = Path(__file__).resolve().parent

SNIPPET = (
    "import torch\n"
    "x = torch.arange(5.0)\n"
    "before = x.data_ptr()\n"
    "x.mul_(3)\n"
    "print(x.tolist(), x._version, x.data_ptr() == before)\n"
)

FLOOR = r"""
import ctypes, gc, json, os, sys, time
import torch
gc.freeze()
if sys.argv[1] == "huge":  # what the fork server does once it has preloaded (forkserver._huge_pages)
    libc = ctypes.CDLL(None)
    for line in open("/proc/self/maps").read().splitlines():
        parts = line.split()
        if len(parts) < 5 or not parts[1].startswith("rw") or parts[1][3] != "p":
            continue
        if len(parts) > 5 and parts[5] != "[heap]":
            continue
        low, high = (int(x, 16) for x in parts[0].split("-"))
        low, high = (low + (2 << 20) - 1) & ~((2 << 20) - 1), high & ~((2 << 20) - 1)
        if high > low:
            if libc.madvise(ctypes.c_void_p(low), ctypes.c_size_t(high - low), 14) == 0:
                libc.madvise(ctypes.c_void_p(low), ctypes.c_size_t(high - low), 25)
def once():
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return time.perf_counter() - t
for _ in range(20):
    once()
print(json.dumps(sorted(once() for _ in range(int(sys.argv[2])))))
"""


#: FLOOR as a server: preload once, then one line of N on stdin -> one JSON line of N fork times.
FLOOR_SERVER = FLOOR.replace(
    'for _ in range(20):\n    once()\nprint(json.dumps(sorted(once() for _ in range(int(sys.argv[2])))))\n',
    'for _ in range(20):\n    once()\nprint("ready", flush=True)\nfor line in sys.stdin:\n'
    '    print(json.dumps([once() for _ in range(int(line))]), flush=True)\n',
)


class FloorServer:
    """A process that imported torch (its memory in huge pages, as the fork
    server has it) and forks on request: the floor measured beside the
    runner, round after round, in the same load (see ``benchmark.fork_overhead_ms``)."""

    def __init__(self) -> None:
        assert FLOOR_SERVER != FLOOR
        self.proc = subprocess.Popen([PY, "-c", FLOOR_SERVER, "huge", "0"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def times(self, count: int) -> list[float]:
        """``count`` fork + exit + wait times, in seconds."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{count}\n")
        self.proc.stdin.flush()
        return list(json.loads(self.proc.stdout.readline()))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def fork_times(pages: str, runs: int) -> list[float]:
    """``runs`` times (seconds, sorted) of fork + exit + wait of a process that
    imported torch (``pages``: ``"small"``, or ``"huge"`` after the fork
    server's ``MADV_COLLAPSE``), after 20 unmeasured ones."""
    out = subprocess.run([PY, "-c", FLOOR, pages, str(runs)], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def fork_ms(pages: str, runs: int) -> float:
    """Median of :func:`fork_times`, in ms."""
    return median_ms(fork_times(pages, runs))


def has_huge_pages(ext: Path) -> bool:
    """Whether the fork server of ``ext`` moves its memory into huge pages."""
    server = ext / "snipcheck" / "run" / "bootstrap" / "forkserver.py"
    if not server.exists():  # a revision before the layered layout (issue 35)
        server = ext / "snipcheck" / "runner" / "bootstrap" / "forkserver.py"
    return "MADV_COLLAPSE" in server.read_text(encoding="utf-8")


def runner_parts(work: Path, runs: int) -> dict[str, float]:
    """Medians in ms: a run of ``pass``, a run of the corpus snippet, the
    executor's whole handling of a new snippet, and a cache write."""
    import dataclasses

    try:
        from snipcheck.engine.cache import ResultCache
        from snipcheck.engine.execute import Executor, ExecutorConfig
        from snipcheck.run.environment import probe
        from snipcheck.run.fork import ForkRunner
        from snipcheck.sources.snippets import load
    except ImportError:  # a revision before the layered layout (issue 35)
        from snipcheck.cache import ResultCache  # type: ignore[no-redef]
        from snipcheck.environment import probe  # type: ignore[no-redef]
        from snipcheck.execute import Executor, ExecutorConfig  # type: ignore[no-redef]
        from snipcheck.runner.fork import ForkRunner  # type: ignore[no-redef]
        from snipcheck.snippets import load  # type: ignore[no-redef]

    (work / "snippets" / "b").mkdir(parents=True)
    (work / "snippets" / "b" / "noop.py").write_text("pass\n")
    (work / "snippets" / "b" / "corp.py").write_text(SNIPPET)
    noop = load("b/noop", work / "snippets", work)
    corp = load("b/corp", work / "snippets", work)
    stamp = probe(PY, work / "probe")

    def timed(call, count: int) -> list[float]:  # type: ignore[no-untyped-def]
        out = []
        for i in range(count):
            t = time.perf_counter()
            call(i)
            out.append(time.perf_counter() - t)
        return out

    runner = ForkRunner(PY, stamp, preload=("torch",))
    for _ in range(5):
        runner.run(noop, timeout=60, output_limit=1 << 20)
        runner.run(corp, timeout=60, output_limit=1 << 20)
    parts = {
        "noop": median_ms(timed(lambda i: runner.run(noop, timeout=60, output_limit=1 << 20), runs)),
        "corp": median_ms(timed(lambda i: runner.run(corp, timeout=60, output_limit=1 << 20), runs)),
    }
    result = runner.run(corp, timeout=60, output_limit=1 << 20)
    runner.close()

    cache = ResultCache(work / "puts")
    parts["put"] = median_ms(timed(lambda i: cache.put(f"{i:064x}", "b/corp", result), runs))

    executor = Executor(ExecutorConfig(
        python=PY, stamp=stamp, cache=ResultCache(work / "cache"), jobs=1, preload=("torch",), fork_min_runs=0,
    ))  # fmt: skip
    fresh = [dataclasses.replace(corp, source=corp.source + f"# {i}\n") for i in range(runs + 5)]
    executor.map(fresh[:5])  # the fork server started, warm
    parts["execute"] = median_ms(timed(lambda i: executor._execute(fresh[5 + i]), runs))
    executor.close()
    return parts


def sphinx_ms(ext: Path, work: Path, count: int) -> float:
    """Per snippet, in ms: a from-scratch build whose results are all cached,
    less the same build with execution off (best of two each)."""
    sys.path.insert(0, str(HERE))
    from bench_corpus import corpus

    project = corpus(work / "corpus", count, conf=ext.parent / "conf.py")
    env = dict(os.environ, PYTHONPATH=str(ext), SNIPCHECK_CACHE_DIR=str(work / "corpus-cache"))

    def build(*extra: str) -> float:
        t = time.perf_counter()
        done = subprocess.run(
            [PY, "-m", "sphinx", "-q", "-E", "-b", "html", "-c", str(project), "-d", str(project / "_d"), *extra,
             str(project / "docs"), str(project / "_h")],
            env=env, cwd=project, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"the corpus build failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return time.perf_counter() - t

    build()  # fills the result cache
    cached = min(build() for _ in range(2))
    off = min(build("-D", "snipcheck_execute=0") for _ in range(2))
    return (cached - off) / count * 1000


def breakdown(ext: Path, runs: int, count: int) -> dict[str, float]:
    """Every part, in ms a snippet (see the module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="snipcheck-breakdown-") as tmp:
        work = Path(tmp)
        parts = runner_parts(work, runs)
        small, huge = fork_ms("small", runs), fork_ms("huge", runs)
        fork = huge if has_huge_pages(ext) else small
        figures = {
            "fork": fork,
            "fork_small_pages": small,
            "fork_huge_pages": huge,
            "child": parts["noop"] - fork,
            "run": parts["corp"] - parts["noop"],
            "cache_write": parts["put"],
            "bookkeeping": parts["execute"] - parts["corp"] - parts["put"],
            "sphinx": sphinx_ms(ext, work, count),
            "runner_total": parts["corp"],
            "execute_total": parts["execute"],
        }
        shutil.rmtree(work, ignore_errors=True)
    return figures


ROWS = [
    ("fork", "fork + exit + wait of the warm server"),
    ("child", "child set-up and finish (supervisor, run directory, channel, seeds)"),
    ("run", "the run (the snippet's work, copy-on-write of torch's state)"),
    ("cache_write", "cache write (one entry, atomic rename, no fsync)"),
    ("bookkeeping", "parent's bookkeeping (key, lock, lookups, capture read, result)"),
    ("sphinx", "Sphinx: directive, nodes, pickling, writing (per snippet)"),
]


def table(columns: dict[str, dict[str, float]]) -> str:
    """The breakdown as text: a row a part, a column a checkout."""
    names = list(columns)
    lines = ["  " + f"{'part':70s}" + "".join(f"{n:>12s}" for n in names)]
    for key, label in ROWS:
        lines.append("  " + f"{label:70s}" + "".join(f"{columns[n][key]:10.2f} ms" for n in names))
    total = {n: sum(columns[n][k] for k, _ in ROWS) for n in names}
    lines.append("  " + f"{'sum':70s}" + "".join(f"{total[n]:10.2f} ms" for n in names))
    lines.append("  " + f"{'(fork in 4 KiB pages / in huge pages)':70s}" + "".join(
        f"{columns[n]['fork_small_pages']:.2f}/{columns[n]['fork_huge_pages']:.2f} ms".rjust(13) for n in names))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ext", type=Path, default=HERE.parent / "_ext", help="the _ext folder whose snipcheck is measured")
    parser.add_argument("--runs", type=int, default=200, help="runs a part (default 200)")
    parser.add_argument("--snippets", type=int, default=500, help="snippets of the Sphinx corpus (default 500)")
    parser.add_argument("--name", default="this checkout")
    args = parser.parse_args()
    ext = args.ext.resolve()
    sys.path.insert(0, str(ext))
    figures = breakdown(ext, args.runs, args.snippets)
    print(table({args.name: figures}))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
