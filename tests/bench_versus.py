"""The fork runner of this checkout against that of a git revision, run for run.

On a shared machine the speed of a run drifts by more than most changes to
the runner make (measured: the same code from 5.6 to 7.6 ms a run of
``pass`` within an hour), so two figures taken one after the other say
little.  Here two runners, each in a process of its own with its own
checkout's snipcheck first on ``sys.path``, run batches of ``pass`` in turn
(the order swapped every round), and what is reported is the median of each
and of the per-round differences, with the number of rounds the checkout won.

``python tests/benchmark.py --overhead --before REV`` prints it
(:func:`report`); ``python tests/bench_versus.py --worker`` is one side.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker() -> None:
    """One side: a fork runner warmed by 10 runs of ``pass``; for each batch
    size read on stdin, run that many and print ``median_ms cpu_ms
    child_faults slot_faults`` (a run's medians and means; CPU and faults of
    the runner's process and of its slot with the runs it reaped)."""
    from snipcheck.run.environment import probe
    from snipcheck.run.fork import ForkRunner
    from snipcheck.sources.snippets import load

    with tempfile.TemporaryDirectory(prefix="snipcheck-versus-") as tmp:
        project = Path(tmp)
        (project / "snippets" / "bench").mkdir(parents=True)
        (project / "snippets" / "bench" / "noop.py").write_text("pass\n")
        (project / "conf.py").write_text("")
        snippet = load("bench/noop", project / "snippets", project)
        runner = ForkRunner(sys.executable, probe(sys.executable, project / ".probe"))
        try:
            for _ in range(10):
                runner.run(snippet, timeout=60, output_limit=1 << 20)
            (slot,) = [s.pid for s in runner._idle]

            def counters() -> tuple[int, int, float]:
                with open(f"/proc/{slot}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                usage = resource.getrusage(resource.RUSAGE_SELF)
                cpu = (
                    sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
                    + usage.ru_utime
                    + usage.ru_stime
                )
                return int(fields[7]), int(fields[8]), cpu  # the slot's minflt, cminflt

            print("ready", flush=True)
            for line in sys.stdin:
                n = int(line)
                own, children, cpu = counters()
                times = []
                for _ in range(n):
                    t = time.perf_counter()
                    runner.run(snippet, timeout=60, output_limit=1 << 20)
                    times.append(time.perf_counter() - t)
                own2, children2, cpu2 = counters()
                print(f"{statistics.median(times) * 1000:.4f} {(cpu2 - cpu) / n * 1000:.4f} "
                      f"{(children2 - children) / n:.1f} {(own2 - own) / n:.1f}", flush=True)  # fmt: skip
        finally:
            runner.close()


def compare(exts: dict[str, Path], rounds: int, batch: int) -> dict[str, list[list[float]]]:
    """Run the workers of ``exts`` (name: the ``_ext`` folder of a checkout)
    in turn, ``rounds`` rounds of ``batch`` runs each; each side's rows."""
    procs = {}
    try:
        for name, ext in exts.items():
            env = dict(os.environ, PYTHONPATH=str(ext))
            procs[name] = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
            assert procs[name].stdout is not None and procs[name].stdout.readline().strip() == "ready"
        rows: dict[str, list[list[float]]] = {name: [] for name in exts}
        for r in range(rounds):
            for name in list(exts) if r % 2 == 0 else list(reversed(exts)):
                p = procs[name]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(f"{batch}\n")
                p.stdin.flush()
                rows[name].append([float(x) for x in p.stdout.readline().split()])
        return rows
    finally:
        for p in procs.values():
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=120)


def report(before: str, rounds: int = 16, batch: int = 60) -> None:
    """Print this checkout's run of ``pass`` against that of git revision ``before``."""
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-rev-") as tmp:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", tmp, before],
            check=True,
            capture_output=True,
        )
        try:
            rows = compare({before[:12]: Path(tmp) / "_ext", "now": ROOT / "_ext"}, rounds, batch)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp], check=False)
    print(
        f"\n== a run of pass, this checkout against {before[:12]} in turn ({rounds} rounds of {batch} runs; tests/bench_versus.py)"
    )
    for name, side in rows.items():
        ms, cpu, faults, slot = (statistics.median(column) for column in zip(*side))
        print(
            f"  {name:12s} {ms:6.2f} ms   CPU {cpu:6.2f} ms   page faults {faults:5.0f} (run), {slot:4.0f} (slot)"
        )
    old, new = rows.values()
    differences = [b[0] - a[0] for a, b in zip(old, new)]
    won = sum(d < 0 for d in differences)
    print(f"  now - {before[:12]}: {statistics.median(differences):+.2f} ms a run (median of the rounds' differences); "
          f"faster in {won} of {rounds} rounds")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        report(sys.argv[1] if len(sys.argv) > 1 else "HEAD")
