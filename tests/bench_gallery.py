"""The benchmark's sphinx-gallery row (issue 36 §8): the script corpus, built both ways.

The sphinx-gallery scripts of ``tests/corpus/scripts`` (every one with a
module docstring: sphinx-gallery needs one; the jupytext scripts are left
out of both builds) are built

* by snipcheck: each placed whole by ``snippet-script`` in one
  reStructuredText page, its stated outputs as the corpus records them;
* by sphinx-gallery: the same files as its examples folder, every one run
  (``filename_pattern = "."``), the modules beside them not.

For each, a cold build (empty output folder and cache, so every script runs)
and a rebuild with nothing changed, in a fresh ``sphinx-build`` process each,
the two tools in turn within each round; the ratio is snipcheck's time over
sphinx-gallery's, per round, and the figure printed is its median over the
rounds.  Both run the scripts on one core (``-j 1``).

``python tests/bench_gallery.py [--rounds N]``, or ``tests/benchmark.py --gallery``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
PY = sys.executable

GALLERY_CONF = """\
project = "gallery"
extensions = ["sphinx_gallery.gen_gallery"]
exclude_patterns = ["_build"]
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": ".",
    "ignore_pattern": r"corpus_|__init__",
    "download_all_examples": False,
}
"""


def gallery_scripts() -> list[str]:
    """The corpus scripts sphinx-gallery can build (a module docstring first)."""
    return sorted(p.stem for p in (CORPUS / "scripts").glob("*.py")
                  if not p.stem.startswith("corpus_") and p.read_text().startswith('"""'))  # fmt: skip


def snipcheck_project(dest: Path, scripts: list[str]) -> Path:
    """The rST corpus project with only ``scripts`` placed."""
    shutil.copytree(CORPUS, dest, ignore=shutil.ignore_patterns("_build"))
    page = (dest / "rst" / "index.rst").read_text()
    head, *blocks = page.split(".. snippet-script:: ")
    kept = [b for b in blocks if b.split("\n", 1)[0].strip() in scripts]
    (dest / "rst" / "index.rst").write_text(head + "".join(".. snippet-script:: " + b for b in kept))
    return dest / "rst"


def gallery_project(dest: Path) -> Path:
    """A sphinx-gallery project whose examples are the corpus scripts."""
    dest.mkdir(parents=True)
    (dest / "conf.py").write_text(GALLERY_CONF)
    (dest / "index.rst").write_text("Gallery\n=======\n\n.. toctree::\n\n   auto_examples/index\n")
    shutil.copytree(CORPUS / "scripts", dest / "examples")
    for stem in {p.stem for p in (dest / "examples").glob("*.py")} - set(gallery_scripts()):
        if not stem.startswith("corpus_"):
            (dest / "examples" / f"{stem}.py").unlink()
    (dest / "examples" / "README.rst").write_text("Examples\n========\n")
    return dest


def build_seconds(project: Path, out: Path, cache: Path | None = None) -> float:
    """Wall seconds of one ``sphinx-build`` of ``project`` into ``out``."""
    cmd = [PY, "-m", "sphinx", "-q", "-j", "1", "-b", "html", "-d", str(out / ".doctrees"), str(project), str(out)]
    if cache is not None:
        cmd[4:4] = ["-D", f"snipcheck_cache_dir={cache}"]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"build of {project} failed:\n{done.stdout}\n{done.stderr}")
    return seconds


def measure(rounds: int) -> dict[str, list[float]]:
    """Per round: cold and no-change seconds of both tools, measured in turn."""
    scripts = gallery_scripts()
    found: dict[str, list[float]] = {k: [] for k in ("sc_cold", "sc_again", "sg_cold", "sg_again")}
    with tempfile.TemporaryDirectory(prefix="snipcheck-bench-gallery-") as tmp:
        base = Path(tmp)
        for n in range(rounds):
            sc = snipcheck_project(base / f"sc{n}", scripts)
            sg = gallery_project(base / f"sg{n}")
            cache = base / f"cache{n}"
            found["sc_cold"].append(build_seconds(sc, base / f"sc_out{n}", cache))
            found["sg_cold"].append(build_seconds(sg, base / f"sg_out{n}"))
            found["sc_again"].append(build_seconds(sc, base / f"sc_out{n}", cache))
            found["sg_again"].append(build_seconds(sg, base / f"sg_out{n}"))
    return found


def report(rounds: int = 3) -> None:
    scripts = gallery_scripts()
    found = measure(rounds)
    cold = statistics.median(a / b for a, b in zip(found["sc_cold"], found["sg_cold"], strict=True))
    again = statistics.median(a / b for a, b in zip(found["sc_again"], found["sg_again"], strict=True))
    print(f"\n== the script corpus ({len(scripts)} sphinx-gallery scripts), snipcheck against sphinx-gallery, "
          f"median of {rounds} rounds")  # fmt: skip
    print(f"  cold build       snipcheck {statistics.median(found['sc_cold']):6.2f} s   sphinx-gallery "
          f"{statistics.median(found['sg_cold']):6.2f} s   ratio {cold:.2f}")  # fmt: skip
    print(f"  nothing changed  snipcheck {statistics.median(found['sc_again']):6.2f} s   sphinx-gallery "
          f"{statistics.median(found['sg_again']):6.2f} s   ratio {again:.2f}")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    report(parser.parse_args().rounds)
