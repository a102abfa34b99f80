"""Benchmark: one machine's cold build against N shards, their merge and a final build.

    python tests/bench_shards.py [--size 10000] [--shards 4] [--busy SECONDS]

The generated corpus of ``--size`` small torch snippets (:mod:`bench_corpus`,
pages of 25) is built

1. cold, on one machine: ``sphinx-build`` with an empty result cache;
2. as ``--shards`` shards, ``snipcheck execute --shard K/N``, one after
   another, so each has the whole machine as it would on a machine of its
   own; then ``snipcheck execute --merge`` and a ``sphinx-build`` with
   ``snipcheck_execute = "merged"`` that runs nothing;
3. again as shards, planned from the timing file the first merge wrote.

It prints each step's wall time, each round's spread of shard times, the
critical path of a matrix of separate machines (the slowest shard + merge +
final build) and its ratio to the cold build; it checks that the final
build ran nothing and that its pages' output panels equal the cold build's.
Figures are printed, never asserted: this is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_corpus import corpus
from bs4 import BeautifulSoup

PY = sys.executable


def timed(cmd: list[str], cwd: Path, cache: Path) -> tuple[float, str]:
    """Run ``cmd``; its wall seconds and its output. Exits if it fails."""
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache))
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds, done.stdout + done.stderr


def sphinx(project: Path, out: Path, cache: Path, *extra: str) -> tuple[float, str]:
    return timed(
        [PY, "-m", "sphinx", "-b", "html", "-c", ".", "-d", str(out / "doctrees"),
         "-D", f"snipcheck_report_dir={out / 'report'}", *extra, "docs", str(out / "html")],
        project, cache,
    )  # fmt: skip


def panels(html_dir: Path) -> dict[str, list[str]]:
    return {
        page.name: [str(node) for node in BeautifulSoup(page.read_text(), "html.parser").select("div.snipcheck-output")]
        for page in sorted(html_dir.glob("page*.html"))
    }


def shards(project: Path, tmp: Path, n: int, name: str) -> list[float]:
    """Run the N shards one after another into ``tmp/name-K``; their wall times."""
    walls = []
    for k in range(1, n + 1):
        out = tmp / f"{name}-{k}"
        seconds, text = timed(
            [PY, "-m", "snipcheck", "--root", str(project), "execute", "--shard", f"{k}/{n}", "--out", str(out)], project, out
        )
        walls.append(seconds)
        print(f"  shard {k}/{n}: {seconds:7.1f} s   {text.strip().splitlines()[-1][:150]}", flush=True)
    return walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="snippets in the corpus")
    parser.add_argument("--shards", type=int, default=4, help="shards of the sharded build")
    parser.add_argument("--busy", type=float, default=0.0, help="seconds of CPU work each snippet does before it prints")
    args = parser.parse_args()
    n = args.shards
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as name:
        tmp = Path(name)
        project = corpus(tmp / "corpus", args.size, busy=args.busy)
        work = f", each busy {args.busy} s first" if args.busy else ""
        print(f"corpus of {args.size} snippets{work}, {os.cpu_count()} CPUs; shards run one after another", flush=True)
        cold, _ = sphinx(project, tmp / "single", tmp / "single-cache")
        print(f"one machine, cold build: {cold:7.1f} s", flush=True)
        rounds = []
        for label in ("first", "second"):
            print(f"{label} round ({'no timing file: every unit planned as 1 s' if label == 'first' else 'planned from the timing file'}):")
            walls = shards(project, tmp, n, label)
            folders = [str(tmp / f"{label}-{k}") for k in range(1, n + 1)]
            cache = tmp / f"{label}-cache"
            merge, _ = timed([PY, "-m", "snipcheck", "--root", str(project), "execute", "--merge", *folders], project, cache)
            final, text = sphinx(project, tmp / f"{label}-final", cache, "-D", "snipcheck_execute=merged")
            ran = re.findall(r"this build ran (\d+), took (\d+) from the cache", text)
            report = json.loads((tmp / f"{label}-final" / "report" / "report.json").read_text())
            same = panels(tmp / f"{label}-final" / "html") == panels(tmp / "single" / "html")
            path = max(walls) + merge + final
            rounds.append((label, walls, merge, final, path))
            print(
                f"  merge {merge:.1f} s, final build {final:.1f} s (ran {ran[-1][0] if ran else '?'}, "
                f"runs in report.json {report['execution']['runs']}; output panels equal to the cold build's: {same})",
                flush=True,
            )
        print()
        print(f"| build ({args.size} snippets{work}, {os.cpu_count()} CPUs) | wall (s) | vs one machine |")
        print("|---|---:|---:|")
        print(f"| one machine, cold | {cold:.1f} | 1.00 |")
        for label, walls, merge, final, path in rounds:
            spread = max(walls) - min(walls)
            print(
                f"| {n} shards, {label} round: slowest shard {max(walls):.1f} + merge {merge:.1f} + final build {final:.1f} "
                f"(spread {spread:.1f}; shards {', '.join(f'{w:.1f}' for w in walls)}) | {path:.1f} | {path / cold:.2f} |"
            )


if __name__ == "__main__":
    main()
