"""The benchmark's one-page reading (issue 33 §8): N snippets on one page, read with nothing run.

A page of many snippets read in worse than linear time (2,000 / 4,000 /
8,000 snippets in 9 / 26 / 166 s; 50,000 still reading after 13 minutes):
each snippet's placement compared the whole page with the text Sphinx read,
and each record was found by a scan of the page's records.  This measures the
read of :func:`bench_corpus.corpus` with every snippet on one page, through
the ``snipcheck-index`` builder (the read every command makes: Sphinx's read
with execution off, nothing written), in a fresh process each time, against
the floor of a page with one snippet (Sphinx's start-up and the extensions').
Time linear in the size shows as a constant ``ms a snippet``.

``python tests/bench_pages.py --sizes 2000,8000,50000 [--before REV]``, or
through ``tests/benchmark.py --one-page``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bench_corpus import corpus

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
#: The largest page a ``--before`` checkout reads (the quadratic read of 50,000 took hours).
BEFORE_CAP = 8000


def read_seconds(project: Path, ext: Path) -> float:
    """Wall seconds of one read of ``project`` (a fresh doctree directory, so
    every page is read) by the snipcheck in ``ext``.

    :raises RuntimeError: if the read fails (its output's tail in the message).
    """
    work = Path(tempfile.mkdtemp(prefix="read-", dir=project))
    env = {**os.environ, "PYTHONPATH": str(ext), "SNIPCHECK_CACHE_DIR": str(project / ".cache")}
    cmd = [PY, "-m", "sphinx", "-b", "snipcheck-index", "-q", "-c", str(project), "-D", "snipcheck_execute=0",
           "-d", str(work / "doctrees"), str(project / "docs"), str(work / "out")]  # fmt: skip
    try:
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=project, check=False)
        seconds = time.perf_counter() - t
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if out.returncode:
        raise RuntimeError(f"the read of {project} failed ({out.returncode}): {(out.stdout + out.stderr)[-2000:]}")
    return seconds


@contextmanager
def checkouts(before: str | None) -> Iterator[dict[str, Path]]:
    """``{"now": this checkout's _ext}``, and with ``before`` the ``_ext`` of a
    temporary worktree of that git revision (removed after)."""
    exts = {"now": ROOT / "_ext"}
    if not before:
        yield exts
        return
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-rev-") as tmp:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", tmp, before], check=True, capture_output=True)
        sha = subprocess.run(["git", "-C", tmp, "rev-parse", "--short=10", "HEAD"], check=True, capture_output=True, text=True)
        try:
            yield {f"{before} ({sha.stdout.strip()})": Path(tmp) / "_ext", **exts}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tmp], check=False, capture_output=True)


def measure(sizes: Sequence[int], rounds: int, before: str | None = None) -> dict[str, dict[int, list[float]]]:
    """Seconds of each read, per checkout and size (size 1: the floor); the
    checkouts and sizes in turn in each round, so the machine's drift over
    minutes falls on all of them alike."""
    seen: dict[str, dict[int, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-pages-") as tmp, checkouts(before) as exts:
        projects = {n: corpus(Path(tmp) / f"page{n}", n, per_page=n) for n in (1, *sizes)}
        for _ in range(rounds):
            for name, ext in exts.items():
                for n, project in projects.items():
                    if name != "now" and n > BEFORE_CAP:
                        continue
                    seen.setdefault(name, {}).setdefault(n, []).append(read_seconds(project, ext))
    return seen


def table(seen: dict[str, dict[int, list[float]]], rounds: int) -> str:
    """The report: per checkout, each size's median seconds, ms a snippet above the floor, and growth."""
    head = (f"\n== one page of N snippets, read with nothing run (sphinx -b snipcheck-index, a fresh process; "
            f"median of {rounds} round(s), checkouts and sizes in turn; tests/bench_pages.py)")  # fmt: skip
    lines = [head]
    for name, by_size in seen.items():
        floor = statistics.median(by_size[1])
        lines.append(f"  {name}: floor (a page of 1 snippet) {floor:6.2f} s")
        first: tuple[int, float] | None = None
        for n in sorted(k for k in by_size if k > 1):
            t = statistics.median(by_size[n])
            per = (t - floor) / n * 1000
            first = first or (n, t - floor)
            growth = f"x{(t - floor) / first[1]:6.2f} time for x{n / first[0]:5.1f} snippets" if first[0] != n else ""
            spread = f"[{min(by_size[n]):.2f}-{max(by_size[n]):.2f}]" if len(by_size[n]) > 1 else ""
            lines.append(f"  {n:7d} snippets  {t:8.2f} s {spread:15s}  {per:6.2f} ms a snippet above the floor  {growth}")
    lines.append("  target: linear, the same ms a snippet at every size")
    return "\n".join(lines)


def report(sizes: Sequence[int], rounds: int = 3, before: str | None = None) -> None:
    """Measure and print (see the module docstring)."""
    print(table(measure(sizes, rounds, before), rounds), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,8000,50000", help="snippets on the one page, e.g. 2000,8000,50000")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each size's figure is their median (default 3)")
    parser.add_argument("--before", metavar="REV", help=f"also read with the snipcheck of git revision REV (pages up to {BEFORE_CAP})")
    args = parser.parse_args()
    report([int(s) for s in args.sizes.split(",") if s], args.rounds, args.before)


if __name__ == "__main__":
    main()
