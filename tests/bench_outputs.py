"""What large outputs cost a build (issue 23 item 4): one long line, many lines, a flood.

Run by ``tests/benchmark.py`` (``nox -s bench``), or alone::

    python tests/bench_outputs.py                     # every case, both search languages
    python tests/bench_outputs.py --cases line-1MB,flood-2GB --search en
    python tests/bench_outputs.py --profile drift-1MB # where the parent's time goes (cProfile, top 25)

Each case is one snippet on one page of a fresh project (``myst_parser`` and
``snipcheck``; with ``--search zh`` also the chapter's Chinese search, jieba
and its dictionary, as the chapter is built), built once with an empty cache
by ``sphinx-build -b html``.  Its stated output is what the run prints,
except where the case says otherwise, so that the time is the cost of
showing and checking it.  Printed per case: the build's wall time, the CPU
time of the parent (the Sphinx process: reading the output, comparing it,
rendering it, indexing it for search) and of every process of its tree, and
the time of a build of a one-line snippet beside it (what every build costs;
the difference is the case's own).

Cases (the bytes each prints):

* ``line-250kB``, ``line-1MB``: one line of that many ``y``;
* ``lines-1MB``: the same 1,000,000 bytes as 1,000 lines of 1,000;
* ``drift-1MB``: the 1 MB line, against a stated 1 MB line that differs in
  one character in its middle (diffed, shown in the problem box);
* ``wildcard-1MB``: the 1 MB line, against a stated line with ``[..]`` that
  does not match it (the wildcard alignment and its diff);
* ``ansi-1MB``: 1 MB of text on one line with a colour code every 10 bytes;
* ``words-1MB``: 1 MB of 6-letter words, one line (what the search index stems);
* ``mixed-200kB``: one line of 20,000 partial writes to stdout and stderr in
  turn, each flushed (one mixed terminal line of 20,000 parts);
* ``flood-2GB``: 2 GiB written in 1 MiB ``os.write`` calls (the default
  output limit of 1 MiB: the run is stopped once 1 MiB more has come).

This module asserts nothing: it prints figures (speed targets are measured,
never asserted in timed tests).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))

MB = 1_000_000
#: name -> (the snippet's code, its stated output or None for "what it prints").
CASES: dict[str, tuple[str, str | None]] = {
    "small": ('print("hello")\n', None),
    "line-250kB": (f'import sys\nsys.stdout.write("y" * {MB // 4} + "\\n")\n', None),
    "line-1MB": (f'import sys\nsys.stdout.write("y" * {MB} + "\\n")\n', None),
    "lines-1MB": ('import sys\nsys.stdout.write(("y" * 999 + "\\n") * 1000)\n', None),
    "drift-1MB": (
        f'import sys\nsys.stdout.write("y" * {MB} + "\\n")\n',
        "y" * (MB // 2) + "z" + "y" * (MB // 2 - 1) + "\n",
    ),
    "wildcard-1MB": (f'import sys\nsys.stdout.write("y" * {MB} + "\\n")\n', "y[..]y[..]z\n"),
    "ansi-1MB": (f'import sys\nsys.stdout.write("\\x1b[31mred\\x1b[0m.." * {MB // 16} + "\\n")\n', None),
    "words-1MB": (f'import sys\nsys.stdout.write("abcdef " * {MB // 7} + "\\n")\n', None),
    "mixed-200kB": (
        (
            "import sys\nfor n in range(10_000):\n"
            '    print("o" * 9, end="", flush=True)\n'
            '    print("e" * 9, end="", file=sys.stderr, flush=True)\n'
            "print()\n"
        ),
        None,
    ),
    "flood-2GB": ("import os\nchunk = b'x' * (1 << 20)\nfor _ in range(2048):\n    os.write(1, chunk)\n", None),
}

CONF = """\
extensions = ["myst_parser", "snipcheck"{extra}]
exclude_patterns = ["_build"]
snipcheck_preload = []
snipcheck_fail_on_drift = False
snipcheck_timeout = 600.0
"""
ZH = """\
language = "zh_CN"
html_search_language = "zh"
html_search_options = {{"dict": "{dict}"}}
"""

MEASURE = r"""
import cProfile, json, os, resource, sys, time
t, cpu = time.perf_counter(), time.process_time()
out = sys.argv[1]
args = sys.argv[2:]
from sphinx.cmd.build import build_main
if out != "-":
    profile = cProfile.Profile()
    rc = profile.runcall(build_main, args)
    profile.dump_stats(out)
else:
    rc = build_main(args)
wall, own = time.perf_counter() - t, time.process_time() - cpu
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": wall, "parent_cpu": own, "children_cpu": children.ru_utime + children.ru_stime}))
"""


def stated_of(name: str) -> str:
    """The stated output of a case: what it prints (run once, plainly), unless the case names one."""
    code, stated = CASES[name]
    if stated is not None or name.startswith("flood"):
        return stated or ""
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True)
    if name.startswith("mixed"):
        # The terminal text: both streams as the terminal shows them, in order.
        return "".join(("o" * 9 + "e" * 9) for _ in range(10_000)) + "\n"
    if name.startswith("ansi"):
        from snipcheck.judge.compare import (
            strip_ansi,  # the stated output is the terminal text: no colour codes
        )

        return strip_ansi(done.stdout)
    return done.stdout


def make(where: Path, name: str, search: str) -> Path:
    """A project holding case ``name`` on its one page."""
    project = where / f"{name}-{search}"
    (project / "snippets" / "big").mkdir(parents=True)
    (project / "snippets" / "big" / "case.py").write_text(CASES[name][0], encoding="utf-8")
    stated = stated_of(name)
    (project / "index.md").write_text(f"# {name}\n\n```{{snippet}} big/case\n{stated}```\n", encoding="utf-8")
    extra, zh = "", ""
    if search == "zh":
        extra = ', "snipcheck_chapter.search_zh"'
        zh = ZH.format(dict=ROOT / "docs" / "_search" / "userdict.txt")
    (project / "conf.py").write_text(CONF.format(extra=extra) + zh, encoding="utf-8")
    return project


#: The snipcheck that builds (``--ext``: another checkout's ``_ext``, for before and after).
EXT = ROOT / "_ext"


def build(project: Path, profile: Path | None = None) -> dict[str, float]:
    """One cold build of ``project`` (a fresh cache) by the snipcheck in :data:`EXT`; wall and CPU seconds."""
    cache = project / "_cache"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(project / "_build", ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(EXT))
    cmd = [
        PY, "-c", MEASURE, str(profile) if profile else "-",
        "-b", "html", "-q", "-d", str(project / "_build" / "doctrees"),
        "-D", f"snipcheck_cache_dir={cache}", "-D", f"snipcheck_report_dir={project / '_build' / 'report'}",
        str(project), str(project / "_build" / "html"),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=project, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines or json.loads(lines[-1])["rc"]:
        raise RuntimeError(f"the build of {project.name} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def measure(cases: list[str], searches: list[str]) -> list[tuple[str, str, dict[str, float]]]:
    """Build each case with each search language; ``(case, search, figures)`` rows."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-outputs-") as tmp:
        for search in searches:
            for name in ["small", *cases]:
                t = time.perf_counter()
                project = make(Path(tmp), name, search)
                figures = build(project)
                figures["total"] = time.perf_counter() - t
                rows.append((name, search, figures))
                print(f"  {name:14s} {search}  build {figures['wall']:7.2f} s   parent CPU {figures['parent_cpu']:7.2f} s"
                      f"   children CPU {figures['children_cpu']:6.2f} s", flush=True)  # fmt: skip
    return rows


def table(rows: list[tuple[str, str, dict[str, float]]]) -> str:
    """The figures, each case beside the one-line snippet of its search language."""
    base = {search: f for name, search, f in rows if name == "small"}
    lines = ["== large outputs: one cold build each (tests/bench_outputs.py)"]
    for name, search, f in rows:
        if name == "small":
            continue
        extra = f["wall"] - base[search]["wall"]
        lines.append(
            f"  {name:14s} search {search}  build {f['wall']:7.2f} s  ({extra:+6.2f} s over a one-line snippet)"
            f"   parent CPU {f['parent_cpu']:6.2f} s (+{f['parent_cpu'] - base[search]['parent_cpu']:5.2f})"
        )
    return "\n".join(lines)


def report(cases: list[str] | None = None, searches: tuple[str, ...] = ("en", "zh")) -> None:
    """Measure ``cases`` (default: every case) and print the table (what ``tests/benchmark.py`` calls)."""
    print("\n== large outputs (tests/bench_outputs.py), each case as it is built", flush=True)
    rows = measure(cases or [c for c in CASES if c != "small"], list(searches))
    print(table(rows))


def profile(name: str, search: str, top: int = 25) -> None:
    """Print the ``top`` functions of the parent by cumulative and by own time for one case."""
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-outputs-") as tmp:
        project = make(Path(tmp), name, search)
        stats_file = Path(tmp) / "build.prof"
        figures = build(project, stats_file)
        print(f"== {name} (search {search}): build {figures['wall']:.2f} s, parent CPU {figures['parent_cpu']:.2f} s")
        for key in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(str(stats_file), stream=out).sort_stats(key).print_stats(top)
            print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(c for c in CASES if c != "small"))
    parser.add_argument("--search", default="en,zh", help="search languages: en (Sphinx's), zh (the chapter's)")
    parser.add_argument("--profile", metavar="CASE", help="profile one case's build (the first --search) instead")
    parser.add_argument("--ext", type=Path, help="build with the snipcheck in this _ext folder (another checkout's)")
    args = parser.parse_args()
    global EXT
    EXT = args.ext.resolve() if args.ext else EXT
    searches = [s for s in args.search.split(",") if s]
    if args.profile:
        profile(args.profile, searches[0])
        return
    rows = measure([c for c in args.cases.split(",") if c], searches)
    print(table(rows))


if __name__ == "__main__":
    main()
