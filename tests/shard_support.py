"""A small project that is built as shards, and the commands that build it:
shared by the shard tests (``tests/shard/``).

Not a test module: test modules import it, never each other.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_cache
from helpers import snipcheck_cli
from snipcheck.shard.files import MERGED

PAGE_A = """\
Page A
======

.. snippet:: s/a

   a

.. snippet:: s/b

   b

.. snippet-chain:: steps

.. snippet:: s/one

   1

.. snippet:: s/two

   2
"""
#: The snippet of page b that needs the requirement ``fakegpu``: only a shard providing it runs it.
GPU_SNIPPET = """\
.. snippet:: s/gpu

   on the fake gpu

"""
PAGE_B = f"""\
Page B
======

.. snippet:: s/c

   c

.. snippet:: s/d

   d

{GPU_SNIPPET}.. snippet:: s/e

   e
"""
SOURCES = {
    "s/a": "import time\ntime.sleep(0.3)\nprint('a')\n",
    "s/b": "import time\ntime.sleep(0.1)\nprint('b')\n",
    "s/one": "x = 1\nprint(x)\n",
    "s/two": "print(x + 1)\n",
    "s/c": "import time\ntime.sleep(0.2)\nprint('c')\n",
    "s/d": "print('d')\n",
    "s/gpu": '# /// snipcheck\n# requires = ["fakegpu"]\n# ///\nprint("on the fake gpu")\n',
    "s/e": "print('e')\n",
}
CONF = """\
extensions = ["snipcheck"]
snipcheck_runner = "subprocess"
snipcheck_jobs = 2
snipcheck_show_durations = False
snipcheck_requirements = ["fakegpu"]
"""


def two_page_project(root: Path, sources: Mapping[str, str], conf: str, *, gpu: bool = True) -> Path:
    """The project of pages a and b at ``root``: ``sources`` (id → code) as its
    snippet files, ``conf`` as its conf.py; page b without :data:`GPU_SNIPPET`
    unless ``gpu``.  Returns ``root``."""
    for snippet_id, code in sources.items():
        path = (root / "snippets" / snippet_id).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
    (root / "conf.py").write_text(conf)
    (root / "index.rst").write_text(".. toctree::\n\n   a\n   b\n")
    (root / "a.rst").write_text(PAGE_A)
    (root / "b.rst").write_text(PAGE_B if gpu else PAGE_B.replace(GPU_SNIPPET, ""))
    return root


@pytest.fixture
def project(tmp_path: Path, probe_cache: Path) -> Path:
    root = two_page_project(tmp_path / "p", SOURCES, CONF)
    for name in ("cache", "one", "two", "three", "final-cache"):
        fresh_cache(tmp_path / name, probe_cache)
    return root


def shard(root: Path, k: int, n: int, out: Path, *extra: str) -> Any:
    return snipcheck_cli(root, "execute", "--shard", f"{k}/{n}", "--out", str(out), *extra, cache=out)


def other_environment(root: Path, tmp: Path) -> Path:
    """"Another machine": a fresh virtual environment without torch (so another
    environment stamp), whose interpreter runs the snippets of a command
    started with ``SHARD_PYTHON`` set to its ``bin/python``; its folder."""
    other = tmp / "other-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(other)], check=True, timeout=120)
    with (root / "conf.py").open("a") as conf:
        conf.write('import os\nsnipcheck_python = os.environ.get("SHARD_PYTHON", "")\n')
    return other


def requirement_shard(root: Path, out: Path, *names: str) -> Any:
    """``execute --provides NAME... --out OUT``: the shard outside the N that runs only what needs NAME."""
    return snipcheck_cli(root, "execute", *(a for name in names for a in ("--provides", name)), "--out", str(out), cache=out)


def merge(root: Path, cache: Path, *args: str) -> Any:
    return snipcheck_cli(root, "execute", "--merge", *args, cache=cache)


def run_three(root: Path, tmp: Path) -> list[Path]:
    """Shards 1/3 and 2/3, and 3/3 providing fakegpu; their folders."""
    folders = [tmp / "one", tmp / "two", tmp / "three"]
    for k, folder in enumerate(folders, start=1):
        out = shard(root, k, 3, folder, *(("--provides", "fakegpu") if k == 3 else ()))
        assert out.returncode == 0, out.stdout + out.stderr
    return folders


def manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "manifest.json").read_text())  # type: ignore[no-any-return]


def write_manifest(folder: Path, data: dict[str, Any]) -> None:
    """Put ``data`` in ``folder``'s manifest, as a damaged or forged shard would."""
    (folder / "manifest.json").write_text(json.dumps(data))


def ran(folder: Path) -> list[str]:
    return [u["id"] for u in manifest(folder)["units"]]


def entries(cache: Path) -> list[str]:
    """What a merge writes into a cache folder: result entries and its record
    (the placement index that every command reads the pages through is kept
    there too, and is no result)."""
    found = [p for p in cache.rglob("*") if p.is_file() and (p.name == MERGED or "results" in p.relative_to(cache).parts)]
    return sorted(str(p.relative_to(cache)) for p in found)
