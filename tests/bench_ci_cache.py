"""Benchmark: a CI run after a one-snippet change, with the CI cache, against a cold CI run (issue 38).

    python tests/bench_ci_cache.py [--shards 2] [--rounds 3] [--size 1000] [--no-chapter]

Each subject (the chapter; the generated corpus of ``--size`` small torch
snippets, :mod:`bench_corpus`) is run as ``.github/workflows/docs.yml`` runs
it: ``--shards`` shards (``snipcheck execute --shard K/N``) one after another,
each with the whole machine as it would have on a machine of its own, then
``snipcheck execute --merge`` and a ``sphinx-build`` with
``snipcheck_execute = "merged"`` that runs nothing.

A round, on a fresh copy of the subject:

1. the **cold** run: no CI cache (every run before issue 38 was this one);
   then ``snipcheck cache key`` and ``snipcheck cache save`` (the steps the
   workflow adds) write the CI cache;
2. one snippet edited (a comment added: its output stays what the page
   states), and the **second** run, every shard and the merge given that CI
   cache (``--ci-cache``).

Every run gets a fresh result cache and a fresh compile cache
(``SNIPCHECK_COMPILE_CACHE_DIR``), as a fresh CI machine has. Printed per subject: each
run's critical path (the slowest shard + merge + final build, what a matrix
of separate machines waits for), its parts, how many units the shards ran,
whether the second run's output panels equal the cold run's, and the ratio;
each figure the median of ``--rounds`` rounds.  Figures are printed, never
asserted: this is a benchmark, not a test.
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

from bench_corpus import corpus
from bs4 import BeautifulSoup

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Run ``cmd``; its wall seconds and its output.  Exits if it fails."""
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds, done.stdout + done.stderr


def panels(html_dir: Path) -> dict[str, list[str]]:
    """The output panels of every built page, as text."""
    return {
        str(page.relative_to(html_dir)): [
            str(node) for node in BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select("div.snipcheck-output")
        ]
        for page in sorted(html_dir.rglob("*.html"))
    }


def ci_run(project: Path, work: Path, shards: int, ci_cache: Path | None, not_run: list[str]) -> dict[str, object]:
    """One run of docs.yml's shard and build jobs on ``project`` in ``work``: its figures."""
    work.mkdir(parents=True)
    # no compile cache of an earlier run, as on a fresh machine (run/compile_cache.py)
    env = dict(os.environ, SNIPCHECK_COMPILE_CACHE_DIR=str(work / "compile"))
    given = ["--ci-cache", str(ci_cache)] if ci_cache is not None else []
    walls, ran = [], 0
    for k in range(1, shards + 1):
        out = work / f"shard-{k}"
        seconds, _ = timed(
            [PY, "-m", "snipcheck", "--root", str(project), "execute", "--shard", f"{k}/{shards}", "--out", str(out), *given],
            project, dict(env, SNIPCHECK_CACHE_DIR=str(out)),
        )  # fmt: skip
        walls.append(seconds)
        ran += len(json.loads((out / "manifest.json").read_text())["units"])
    cache = work / "cache"
    build_env = dict(env, SNIPCHECK_CACHE_DIR=str(cache))
    flags = [a for name in not_run for a in ("--not-run", name)]
    folders = [str(work / f"shard-{k}") for k in range(1, shards + 1)]
    merge, _ = timed([PY, "-m", "snipcheck", "--root", str(project), "execute", "--merge", *folders, *flags, *given], project, build_env)
    final, _ = timed(
        [PY, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-c", ".", "-d", str(work / "doctrees"),
         "-D", f"snipcheck_report_dir={work / 'report'}", "-D", "snipcheck_execute=merged", "docs", str(work / "html")],
        project, build_env,
    )  # fmt: skip
    return {
        "shards": walls, "merge": merge, "final": final, "path": max(walls) + merge + final, "ran": ran,
        "env": build_env, "html": work / "html",
    }  # fmt: skip


def round_of(project: Path, tmp: Path, shards: int, not_run: list[str]) -> dict[str, object]:
    """One round (see the module docstring) on ``project``, a fresh copy."""
    cold = ci_run(project, tmp / "cold", shards, None, not_run)
    env = dict(cold["env"])  # type: ignore[arg-type]
    key, _ = timed([PY, "-m", "snipcheck", "--root", str(project), "cache", "key"], project, env)
    save, _ = timed([PY, "-m", "snipcheck", "--root", str(project), "cache", "save", "--ci-cache", str(tmp / "ci-cache")], project, env)
    edited = sorted((project / "snippets").rglob("*.py"))
    target = edited[len(edited) // 2]
    target.write_text(target.read_text(encoding="utf-8") + "\n# edited by the benchmark\n", encoding="utf-8")
    second = ci_run(project, tmp / "second", shards, tmp / "ci-cache", not_run)
    same = panels(second["html"]) == panels(cold["html"])  # type: ignore[arg-type]
    return {"cold": cold, "second": second, "key": key, "save": save, "same": same, "edited": target.name}


def measure(name: str, make: object, shards: int, rounds: int, not_run: list[str]) -> list[str]:
    """Measure ``rounds`` rounds on fresh copies made by ``make(dest) -> project``;
    print a line per round, return the table's rows (medians)."""
    found = []
    for r in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench-ci-cache-") as tmp:
            project = make(Path(tmp) / "subject")  # type: ignore[operator]
            found.append(round_of(project, Path(tmp), shards, not_run))
            c, s = found[-1]["cold"], found[-1]["second"]
            print(
                f"  {name}, round {r + 1}: cold {c['path']:.1f} s (ran {c['ran']} units), second {s['path']:.1f} s "  # type: ignore[index]
                f"(ran {s['ran']}: {found[-1]['edited']} edited), panels equal: {found[-1]['same']}",
                flush=True,
            )

    def med(run: str, part: str) -> float:
        values = [f[run][part] for f in found]  # type: ignore[index]
        return statistics.median(max(v) if isinstance(v, list) else v for v in values)  # type: ignore[arg-type]

    cold, second = med("cold", "path"), med("second", "path")
    keys = statistics.median(f["key"] for f in found)  # type: ignore[misc]
    saves = statistics.median(f["save"] for f in found)  # type: ignore[misc]
    same = "yes" if all(f["same"] for f in found) else "NO"
    return [
        f"| {name} | cold | {med('cold', 'shards'):.1f} + {med('cold', 'merge'):.1f} + {med('cold', 'final'):.1f} | "
        f"{cold:.1f} | {med('cold', 'ran'):.0f} | 1.00 | cache key {keys:.1f} s, cache save {saves:.1f} s |",
        f"| {name} | second, one snippet edited | {med('second', 'shards'):.1f} + {med('second', 'merge'):.1f} + "
        f"{med('second', 'final'):.1f} | {second:.1f} | {med('second', 'ran'):.0f} | {second / cold:.2f} | "
        f"output panels equal to the cold run's: {same} |",
    ]


def chapter(dest: Path) -> Path:
    """A copy of the chapter (its sources, snippets and configuration)."""
    dest.mkdir(parents=True)
    for name in ("docs", "snippets", "_ext"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "_build"))
    for name in ("conf.py", "pyproject.toml", "snipcheck-timings.json"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


def report(rounds: int = 3, shards: int = 2, size: int = 1000, with_chapter: bool = True) -> None:
    """Measure and print the table (see the module docstring)."""
    print(f"\n== a CI run after a one-snippet change with the CI cache, against a cold CI run ({os.cpu_count()} CPUs; "
          f"{shards} shards run one after another; median of {rounds} rounds)", flush=True)
    rows = []
    if with_chapter:
        rows += measure("chapter", chapter, shards, rounds, ["burn", "cuda"])
    if size:
        rows += measure(f"corpus of {size}", lambda dest: corpus(dest, size), shards, rounds, [])
    print(f"\n| subject | CI run ({shards} shards) | slowest shard + merge + final build (s) | critical path (s) "
          "| units the shards ran | vs cold | |")
    print("|---|---|---:|---:|---:|---:|---|")
    print("\n".join(rows), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2, help="shards of each run (docs.yml: CPU_SHARDS, 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each figure is their median")
    parser.add_argument("--size", type=int, default=1000, help="snippets in the generated corpus (0: none)")
    parser.add_argument("--no-chapter", action="store_true")
    args = parser.parse_args()
    report(args.rounds, args.shards, args.size, not args.no_chapter)


if __name__ == "__main__":
    main()
