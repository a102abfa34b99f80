"""The benchmark's notebook row (issue 37): one notebook of 50 small cells, checked three ways.

The notebook (written with nbformat, executed once for real with nbclient,
so its stored outputs are Jupyter's) is

* built by snipcheck: a page of a Sphinx project with myst-nb's execution
  off, its cells run as one chain and compared with the stored outputs;
* built by myst-nb with ``nb_execution_mode = "force"``: every cell run in a
  Jupyter kernel on every build, its outputs shown unchecked;
* run by ``pytest --nbval``: every cell run in a kernel and compared with the
  stored outputs (no Sphinx build).

For the two builds, a cold build (empty output folder and cache) and a
rebuild with nothing changed, each in a fresh ``sphinx-build`` process; nbval
has no cache, so one run of it stands against both.  Within each round the
tools run in turn; a ratio is snipcheck's time over the other tool's, per
round, and the figure printed is its median over the rounds (as are the
seconds).  The builds run on one core (``-j 1``).

``python tests/bench_notebooks.py [--rounds N]``, or ``tests/benchmark.py --notebooks``.
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
from pathlib import Path

PY = sys.executable
CELLS = 50
INDEX = "Notebook\n========\n\n.. toctree::\n\n   nb\n"
SNIPCHECK_CONF = (
    'project = "nb"\nextensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\n'
    'snipcheck_preload = []\nexclude_patterns = ["_build"]\n'
)
MYSTNB_CONF = 'project = "nb"\nextensions = ["myst_nb"]\nnb_execution_mode = "force"\nexclude_patterns = ["_build"]\n'


def notebook_text(cells: int = CELLS) -> str:
    """A notebook of ``cells`` small code cells (state carried from cell to
    cell, a print, a shown value), executed once with nbclient."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_markdown_cell("# Fifty cells"))
    for k in range(cells):
        if k == 0:
            source = "total = 0"
        elif k % 2:
            source = f"total += {k}\nprint('total', total)"
        else:
            source = f"[total, {k} * 2]"
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"c{k}"))
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return str(nbformat.writes(nb))


def project(dest: Path, conf: str, text: str) -> Path:
    dest.mkdir(parents=True)
    (dest / "conf.py").write_text(conf)
    (dest / "index.rst").write_text(INDEX)
    (dest / "nb.ipynb").write_text(text)
    return dest


def build_seconds(src: Path, out: Path, cache: Path | None = None) -> float:
    """Wall seconds of one ``sphinx-build`` of ``src`` into ``out`` (fails loudly on a failed build)."""
    cmd = [PY, "-m", "sphinx", "-q", "-j", "1", "-b", "html", "-d", str(out / ".doctrees"), str(src), str(out)]
    if cache is not None:
        cmd[4:4] = ["-D", f"snipcheck_cache_dir={cache}"]
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"build of {src} failed:\n{done.stdout}\n{done.stderr}")
    return seconds


def nbval_seconds(folder: Path) -> float:
    """Wall seconds of ``pytest --nbval nb.ipynb`` in ``folder`` (fails loudly unless every cell passes)."""
    cmd = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "nb.ipynb"]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0 or f"{CELLS} passed" not in done.stdout:
        raise SystemExit(f"pytest --nbval in {folder} did not pass every cell:\n{done.stdout}\n{done.stderr}")
    return seconds


def measure(rounds: int) -> dict[str, list[float]]:
    """Per round: snipcheck's and myst-nb's cold and no-change builds and one nbval run, in turn."""
    names = ("sc_cold", "nb_cold", "nbval", "sc_again", "nb_again")
    found: dict[str, list[float]] = {k: [] for k in names}
    text = notebook_text()
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-notebooks-") as tmp:
        base = Path(tmp)
        for n in range(rounds):
            sc = project(base / f"sc{n}", SNIPCHECK_CONF, text)
            nb = project(base / f"nb{n}", MYSTNB_CONF, text)
            val = base / f"nbval{n}"
            val.mkdir()
            shutil.copy(sc / "nb.ipynb", val / "nb.ipynb")
            cache = base / f"cache{n}"
            found["sc_cold"].append(build_seconds(sc, base / f"sc_out{n}", cache))
            found["nb_cold"].append(build_seconds(nb, base / f"nb_out{n}"))
            found["nbval"].append(nbval_seconds(val))
            found["sc_again"].append(build_seconds(sc, base / f"sc_out{n}", cache))
            found["nb_again"].append(build_seconds(nb, base / f"nb_out{n}"))
    return found


def report(rounds: int = 3) -> None:
    found = measure(rounds)

    def ratio(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(found[a], found[b], strict=True))

    med = {k: statistics.median(v) for k, v in found.items()}
    print(f"\n== a notebook of {CELLS} small cells: snipcheck against myst-nb (force) and pytest --nbval, "
          f"median of {rounds} rounds")  # fmt: skip
    print(f"  cold build       snipcheck {med['sc_cold']:6.2f} s   myst-nb force {med['nb_cold']:6.2f} s   "
          f"ratio {ratio('sc_cold', 'nb_cold'):.2f}   nbval {med['nbval']:6.2f} s   ratio {ratio('sc_cold', 'nbval'):.2f}")  # fmt: skip
    print(f"  nothing changed  snipcheck {med['sc_again']:6.2f} s   myst-nb force {med['nb_again']:6.2f} s   "
          f"ratio {ratio('sc_again', 'nb_again'):.2f}   nbval {med['nbval']:6.2f} s   ratio {ratio('sc_again', 'nbval'):.2f}")  # fmt: skip
    print("  (myst-nb force runs every cell on every build and checks no output; nbval has no cache: one run each round)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    report(parser.parse_args().rounds)
