"""The seed policy (issue 15 §3): fresh randomness as under plain python, or a documented seed.

``snipcheck_seed`` (or a snippet's ``seed`` tag) seeds Python's ``random``,
numpy's global generator and torch at the start of each run (of each chain):
random outputs are then the same on every run, under both runners, ``record``
accepts them, the stamp says so and two builds give byte-identical pages.
"""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import html, snipcheck_cli
from snipcheck.model import Stamp
from snipcheck.pending.variation import SEED_HINT
from snipcheck.run import make_runner
from snipcheck.settings import Settings
from snipcheck.sources.snippets import load
from snipcheck.sources.tags import TagError, parse

DRAW = "import random\nimport numpy as np\nimport torch\nprint(random.random(), np.random.rand(), torch.rand(1).item())\n"
#: What the documented seeding gives for seed 0: random.seed(0), numpy.random.seed(0), torch.manual_seed(0).
SEED_0 = "0.8444218515250481 0.5488135039273248 0.49625658988952637\n"


def stdout(result) -> str:
    return "".join(e.text for e in result.events if e.stream == "stdout")


@pytest.mark.parametrize("kind", ["subprocess", "fork"])
def test_a_seed_tag_gives_the_documented_draws_on_every_run(kind: str, stamp: Stamp, tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "draw.py").write_text(DRAW + "# /// snipcheck\n# seed = 0\n# ///\n")
    (tmp_path / "snippets" / "fresh.py").write_text(DRAW)
    seeded, fresh = (load(n, tmp_path / "snippets", tmp_path) for n in ("draw", "fresh"))
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=("torch",))
    try:
        runs = [runner.run(seeded, timeout=60, output_limit=1 << 20) for _ in range(2)]
        others = [runner.run(fresh, timeout=60, output_limit=1 << 20) for _ in range(2)]
    finally:
        getattr(runner, "close", lambda: None)()
    assert [stdout(r) for r in runs] == [SEED_0, SEED_0]
    assert [r.seed for r in runs] == [0, 0]
    assert stdout(others[0]) != stdout(others[1]) and others[0].seed is None  # fresh: as plain python


@pytest.mark.parametrize("kind", ["subprocess", "fork"])
@pytest.mark.parametrize(
    "imports",
    ["import numpy as np\nimport torch\nimport random", "import torch\nimport numpy as np\nimport random",
     "import numpy.random\nimport numpy as np\nimport random\nimport torch"],
)  # fmt: skip
def test_a_seed_holds_whatever_order_the_snippet_imports_in(kind: str, imports: str, stamp: Stamp, tmp_path: Path) -> None:
    """Found with a tutorial script: ``import numpy`` first (nothing
    preloaded) ended every seeded run in a RecursionError: numpy's import
    loads ``random``, whose load seeded numpy through its half-imported
    ``numpy.random``.  The draws must be plain python's with the three
    generators seeded by hand."""
    draw = "print(random.random(), np.random.rand(), torch.rand(1).item())\n"
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "draw.py").write_text(f"# /// snipcheck\n# seed = 7\n# ///\n{imports}\n{draw}")
    by_hand = subprocess.run(
        [sys.executable, "-c", f"{imports}\nrandom.seed(7); np.random.seed(7); torch.manual_seed(7)\n{draw}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    runner = make_runner("python", python=sys.executable, stamp=stamp, kind=kind, preload=())
    try:
        result = runner.run(load("draw", tmp_path / "snippets", tmp_path), timeout=60, output_limit=1 << 20)
    finally:
        getattr(runner, "close", lambda: None)()
    assert stdout(result) == by_hand.stdout, "".join(e.text for e in result.events)


def test_seed_values_are_checked_in_tags_and_configuration(tmp_path: Path) -> None:
    assert parse("# /// snipcheck\n# seed = \"fresh\"\n# ///\npass\n").tags.seed == "fresh"
    for bad in ("-1", "1.5", '"zero"', "true", str(2**32)):
        with pytest.raises(TagError, match="bad value for 'seed'"):
            parse(f"# /// snipcheck\n# seed = {bad}\n# ///\npass\n")
    _, messages = Settings.from_mapping(tmp_path, {"snipcheck_seed": -3})
    assert messages == ["invalid snipcheck_seed = -3: expected a whole number from 0 to 4294967295; using the default None"]


PAGE = "# Random\n\n```{snippet} r/draw\n```\n\n```{snippet-chain} c\n```\n\n```{snippet} r/first\n```\n\n```{snippet} r/second\n```\n"
SOURCES = {
    "r/draw": DRAW,
    "r/first": "import torch\na = torch.rand(2)\nprint(a)\n",
    "r/second": "print(a + torch.rand(2))\n",
}


def project(root: Path, conf: str) -> Path:
    (root / "snippets" / "r").mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\n' + conf)
    (root / "index.md").write_text(PAGE)
    for snippet_id, code in SOURCES.items():
        (root / "snippets" / f"{snippet_id}.py").write_text(code)
    return root


def sphinx(root: Path, out: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-b", "html", str(root), str(root / out)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def test_seed_mode_records_random_outputs_and_two_builds_give_identical_pages(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "snipcheck_seed = 0\nsnipcheck_show_durations = False\n")
    recorded = snipcheck_cli(root, "record", cache=tmp_path / "cache-0")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert f"```{{snippet}} r/draw\n{SEED_0}```" in (root / "index.md").read_text()
    for n in (1, 2):  # two cold builds, each with a cache of its own
        built = sphinx(root, f"html{n}", tmp_path / f"cache-{n}")
        assert built.returncode == 0, built.stderr
    pages = sorted(p.name for p in (root / "html1").glob("*.html"))
    _, mismatch, errors = filecmp.cmpfiles(root / "html1", root / "html2", pages, shallow=False)
    assert (mismatch, errors) == ([], [])
    stamps = [p.get_text() for p in html(root / "html1" / "index.html").select(".snipcheck-stamp")]
    # r/draw and the chain's first cell name the seed; its second cell ran in that seeded process
    assert [" · random seed 0 · " in s for s in stamps] == [True, True, False]
    assert not any(" s · " in s for s in stamps)  # no duration


def test_fresh_randomness_is_refused_by_record_and_the_tag_overrides_the_configuration(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "snipcheck_seed = 0\n")
    (root / "snippets" / "r" / "draw.py").write_text(DRAW + '# /// snipcheck\n# seed = "fresh"\n# ///\n')
    recorded = snipcheck_cli(root, "record", "r/draw", cache=tmp_path / "cache")
    assert recorded.returncode == 1
    assert "its output differs between two runs of the same code" in recorded.stdout + recorded.stderr
    # it names both ways to seed it
    assert "a seed = 0 line in its tag block (or snipcheck_seed = 0 in conf.py" in recorded.stderr


def test_a_drift_warning_of_an_unseeded_random_snippet_says_how_to_seed_it(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "")
    (root / "index.md").write_text("# Random\n\n```{snippet} r/draw\n0.5 0.5 0.5\n```\n\n```{snippet} r/plain\nnone\n```\n")
    (root / "snippets" / "r" / "plain.py").write_text("print('plain')\n")
    built = sphinx(root, "html", tmp_path / "cache")
    assert built.returncode == 1
    warnings = built.stderr.split("WARNING: ")
    (draw,) = [w for w in warnings if "snippet 'r/draw'" in w]
    (plain,) = [w for w in warnings if "snippet 'r/plain'" in w]
    assert f"\n{SEED_HINT}\nif the new output is right, record it: snipcheck record r/draw" in draw
    assert SEED_HINT not in plain  # it draws nothing


def test_the_seed_is_part_of_the_cache_key(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "snipcheck_seed = 0\n")
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache").returncode == 0
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_seed = 1\n')
    built = sphinx(root, "html", tmp_path / "cache")
    assert built.returncode == 1  # a new seed: new draws, the old stated outputs drift
    assert "this build ran 3, took 0 from the cache" in built.stdout
    assert "snippet 'r/draw'" in built.stderr and SEED_HINT not in built.stderr  # seeded already
