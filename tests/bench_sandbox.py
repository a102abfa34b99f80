"""What a run's mount namespace costs (issue 23 item 2): per run, both runners.

Run alone (it asserts nothing)::

    python tests/bench_sandbox.py                 # 300 fork runs, 40 subprocess runs a side
    python tests/bench_sandbox.py --runs 1000

Each runner runs ``pass`` with the project this checkout is (its folder and
its git directories protected, as a build of it protects them; the snippet
lies in its ``_build/``, the run directories where a build makes them), the run with
its mount namespace and the run without it taking turns, so that a machine
busy with other work slows both alike; "without" is the same runner with
``sandbox.run_mounts`` answering ``None``, as where the kernel allows no
mounts.  It prints, in ms a run, the median of each side and the median of
the differences of neighbouring pairs, and the first decile of each side
(on a busy machine the fastest runs are those nothing else slowed), and
the CPU time a run costs on each side (the build's process, and the fork
runner's slot with the runs it forked and reaped: on a machine busy with
other work, wall time is mostly waiting for a core, CPU time is the cost),
then one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "_ext"))

from snipcheck.run import make_runner, sandbox
from snipcheck.run.environment import probe
from snipcheck.sources.snippets import load


def slot_cpu(runner: object) -> float:
    """Seconds of CPU of the fork runner's idle slots and the runs they reaped (0 for the subprocess runner)."""
    total = 0.0
    for slot in getattr(runner, "_idle", ()):
        with open(f"/proc/{slot.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def build_cpu() -> float:
    """Seconds of CPU of this process (the build's side of a run) and of the children it reaped (subprocess runs)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def measure(kind: str, runs: int, work: Path) -> dict[str, float]:
    """Medians in ms of a run of ``pass`` with and without the mount namespace."""
    (work / "snippets").mkdir(parents=True, exist_ok=True)
    (work / "snippets" / "noop.py").write_text("pass\n")
    noop = load("noop", work / "snippets", work)
    protect = sandbox.protected_paths([HERE.parent, work])
    runner = make_runner(
        "python", python=sys.executable, stamp=probe(sys.executable, work / "probe"), kind=kind, preload=("torch",),
        protect=protect,
    )  # fmt: skip
    real = sandbox.run_mounts
    sides = {"with": real, "without": lambda *args, **kwargs: None}
    times: dict[str, list[float]] = {"with": [], "without": []}
    cpu = {"with": 0.0, "without": 0.0}
    try:
        for i in range(runs + 5):
            for name, run_mounts in sides.items():
                sandbox.run_mounts = run_mounts  # type: ignore[assignment]
                before = build_cpu() + slot_cpu(runner)
                start = time.perf_counter()
                result = runner.run(noop, timeout=60, output_limit=1 << 20)
                took = time.perf_counter() - start
                assert result.exit_status == 0, result.events
                if i >= 5:  # the first ones warm the server up
                    times[name].append(took * 1e3)
                    cpu[name] += build_cpu() + slot_cpu(runner) - before
    finally:
        sandbox.run_mounts = real  # type: ignore[assignment]
        getattr(runner, "close", lambda: None)()
    pairs = [a - b for a, b in zip(times["with"], times["without"], strict=True)]
    return {
        "with": statistics.median(times["with"]),
        "without": statistics.median(times["without"]),
        "added": statistics.median(pairs),
        # the fastest tenth: what the runs cost where nothing else competes for the cores
        "with_p10": statistics.quantiles(times["with"], n=10)[0],
        "without_p10": statistics.quantiles(times["without"], n=10)[0],
        "protected": len(protect),
        "runs": runs,
        "cpu_with": cpu["with"] / runs * 1e3,
        "cpu_without": cpu["without"] / runs * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="fork runs a side (the subprocess runner: a tenth, at least 20)")
    args = parser.parse_args()
    why = sandbox.protection()
    if why:
        print(f"runs get no mount namespace here ({why}): nothing to measure")
        return
    figures = {}
    (HERE.parent / "_build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-", dir=HERE.parent / "_build") as tmp:
        for kind, runs in (("fork", args.runs), ("subprocess", max(20, args.runs // 10))):
            figures[kind] = measure(kind, runs, Path(tmp) / kind)
    for kind, f in figures.items():
        print(f"  {kind:10s} a run of pass: {f['without']:7.2f} ms without, {f['with']:7.2f} ms with its mount "
              f"namespace ({f['protected']} folders read-only): {f['added']:+.2f} ms a run (median of pairs); "
              f"fastest tenth {f['without_p10']:.2f} / {f['with_p10']:.2f} ms: "
              f"{f['with_p10'] - f['without_p10']:+.2f} ms; CPU a run {f['cpu_without']:.2f} / {f['cpu_with']:.2f} ms: "
              f"{f['cpu_with'] - f['cpu_without']:+.2f} ms ({f['runs']} runs a side)")  # fmt: skip
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
