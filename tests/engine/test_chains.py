"""Chained snippets (issue 15 §1): cells that share one process, each checked on its own.

State flows along a chain and no further; a cell that fails stops the cells
after it; an edit re-runs the edited cell and those after it; a parallel build
shows what a serial one shows; the command line and the build agree.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from chain_support import KINDS, cells, executor
from helpers import html, snipcheck_cli
from snipcheck.model import RunResult, Stamp
from snipcheck.run import make_runner
from snipcheck.sources.chains import Broken, attach
from snipcheck.sources.snippets import load


def out(result: RunResult) -> str:
    return "".join(e.text for e in result.events)


@pytest.fixture(params=KINDS)
def runner(request: pytest.FixtureRequest, stamp: Stamp):
    made = make_runner("python", python=sys.executable, stamp=stamp, kind=request.param, preload=())
    yield made
    getattr(made, "close", lambda: None)()


def test_state_flows_along_the_chain_and_each_cell_has_its_own_output(runner, tmp_path: Path) -> None:
    chain = cells(tmp_path, {
        "c/a": "import os, sys\nx = [1]\nprint('a', x)\nos.write(2, b'a on fd 2\\n')\n",
        "c/b": "x.append(2)\nprint('b', x, file=sys.stderr)\nos.write(1, b'b on fd 1\\n')\n",
        "c/c": "print('c', x, __file__, sys.argv)\n",
    })  # fmt: skip
    results = runner.run_chain([c for c in chain], timeouts=[30, 30, 30], output_limit=1 << 20)
    assert [out(r) for r in results] == [
        "a [1]\na on fd 2\n",
        "b [1, 2]\nb on fd 1\n",
        "c [1, 2] snippets/c/c.py ['snippets/c/c.py']\n",
    ]
    assert [(e.stream, e.text) for e in results[1].events] == [("stderr", "b [1, 2]\n"), ("stdout", "b on fd 1\n")]
    assert [r.exit_status for r in results] == [0, 0, 0]


def test_an_expected_exception_lets_the_chain_go_on_an_unexpected_one_stops_it(runner, tmp_path: Path) -> None:
    chain = cells(tmp_path, {
        "c/a": "x = 1\n",
        "c/b": 'raise KeyError("shown")\n# /// snipcheck\n# expect = "KeyError"\n# ///\n',
        "c/c": "print('after the expected one', x)\nraise ValueError('not expected')\n",
        "c/d": "print('never')\n",
    })  # fmt: skip
    results = runner.run_chain(chain, timeouts=[30] * 4, output_limit=1 << 20)
    assert len(results) == 3  # the last cell never ran
    assert results[1].exception is not None and results[1].exception.type == "KeyError"
    assert out(results[1]).endswith("KeyError: 'shown'\n")
    assert results[1].exit_status == 1
    assert out(results[2]).startswith("after the expected one 1\nTraceback (most recent call last):\n")
    assert results[2].exit_status == 1 and results[2].exception.type == "ValueError"  # type: ignore[union-attr]


def test_each_cell_has_its_own_timeout_counted_from_the_cell_before(runner, tmp_path: Path) -> None:
    chain = cells(tmp_path, {
        "c/a": "import time\ntime.sleep(1.5)\nprint('slow but in time')\n",
        "c/b": "print('stuck', flush=True)\nwhile True:\n    pass\n",
        "c/c": "print('never')\n",
    })  # fmt: skip
    results = runner.run_chain(chain, timeouts=[20, 1, 20], output_limit=1 << 20)
    assert len(results) == 2
    assert out(results[0]) == "slow but in time\n" and not results[0].timed_out
    assert results[1].timed_out and out(results[1]) == "stuck\n"


def test_the_exit_sequence_belongs_to_the_last_cell_and_sys_exit_ends_the_chain(runner, tmp_path: Path) -> None:
    chain = cells(tmp_path, {
        "c/a": "import atexit\natexit.register(print, 'at exit')\n",
        "c/b": "print('b')\n",
    })  # fmt: skip
    results = runner.run_chain(chain, timeouts=[30, 30], output_limit=1 << 20)
    assert [out(r) for r in results] == ["", "b\nat exit\n"]
    ended = cells(tmp_path / "2", {"e/a": "import sys\nsys.exit(3)\n", "e/b": "print('never')\n"})
    results = runner.run_chain(ended, timeouts=[30, 30], output_limit=1 << 20)
    assert [r.exit_status for r in results] == [3]


def test_the_output_limit_holds_per_cell(runner, tmp_path: Path) -> None:
    chain = cells(tmp_path, {"c/a": "print('x' * 5000)\n", "c/b": "print('short')\n"})
    results = runner.run_chain(chain, timeouts=[30, 30], output_limit=1000)
    assert results[0].truncated_bytes == 4001 and out(results[1]) == "short\n"


def test_state_flows_no_further_than_the_chain(stamp: Stamp, tmp_path: Path) -> None:
    chain = cells(tmp_path, {"c/a": "x = 1\n", "c/b": "print(x)\n"})
    alone = load("c/b", tmp_path / "snippets", tmp_path)
    ex = executor(stamp, tmp_path / "cache")
    try:
        first, second, separate = ex.map([*chain, alone])
    finally:
        ex.close()
    assert out(second.result) == "1\n"  # type: ignore[arg-type]
    assert separate.result.exception.type == "NameError"  # type: ignore[union-attr]


def test_editing_a_cell_reruns_it_and_the_cells_after_it_only(stamp: Stamp, tmp_path: Path) -> None:
    sources = {"c/a": "x = [1]\nprint(x)\n", "c/b": "x.append(2)\nprint(x)\n", "c/c": "print(len(x))\n"}
    for edit, wanted in ((False, ["run", "run", "run"]), (False, ["cache"] * 3), (True, ["cache", "run", "run"])):
        if edit:
            sources["c/b"] = "x.append(3)\nprint(x)\n"
        ex = executor(stamp, tmp_path / "cache")
        try:
            outcomes = ex.map(cells(tmp_path, sources))
        finally:
            ex.close()
        assert [o.origin for o in outcomes] == wanted
    assert [out(o.result) for o in outcomes] == ["[1]\n", "[1, 3]\n", "2\n"]  # type: ignore[arg-type]


def test_a_failing_cell_stops_the_cells_after_it_and_nothing_is_cached(stamp: Stamp, tmp_path: Path) -> None:
    chain = cells(tmp_path, {"c/a": "x = 1\n", "c/b": "1 / 0\n", "c/c": "print(x)\n"})
    for _ in range(2):
        ex = executor(stamp, tmp_path / "cache")
        try:
            a, b, c = ex.map(chain)
        finally:
            ex.close()
        assert a.origin == b.origin == "run"  # failed chains run again next time
        assert b.result.exception.type == "ZeroDivisionError"  # type: ignore[union-attr]
        assert c.result is None and c.missing == () and c.stopped_at == "c/b"


def test_a_cell_after_one_that_cannot_load_is_broken_not_run_out_of_order(tmp_path: Path) -> None:
    (first,) = cells(tmp_path, {"c/a": "x = 1\n"})
    linked = attach([("page", "demo", first), ("page", "demo", None), ("page", "demo", first), ("page", "", first)])
    assert linked[1] is None and isinstance(linked[2], Broken) and "could not be loaded" in linked[2].message
    assert linked[3] == first  # another chain, or none, is not affected


PAGE = """# Tutorial

```{snippet} t/alone
```

```{snippet-chain} demo
```

```{snippet} t/setup
```

```{snippet} t/use
```

```{snippet-chain}
```

```{snippet} t/after
```
"""
SOURCES = {
    "t/alone": "print('on its own', 'x' in globals())\n",
    "t/setup": "import random\nrandom.seed(7)\nx = random.random()\nprint('x =', round(x, 6))\n",
    "t/use": "print('x again =', round(x, 6))\n",
    "t/after": "print('on its own again', 'x' in globals())\n",
}


def project(root: Path) -> Path:
    (root / "snippets" / "t").mkdir(parents=True)
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_preload = []\n')
    (root / "index.md").write_text(PAGE)
    for snippet_id, code in SOURCES.items():
        (root / "snippets" / f"{snippet_id}.py").write_text(code)
    return root


def sphinx(root: Path, out_dir: str, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", *args, str(root), str(root / out_dir)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def outputs(page: Path) -> dict[str, str]:
    soup = html(page)
    return {div["id"]: div.find(class_="snipcheck-output").get_text() for div in soup.select("div.snipcheck-snippet")}


def test_record_then_build_serial_and_parallel_agree(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    recorded = snipcheck_cli(root, "record", cache=tmp_path / "cache-record")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    page = (root / "index.md").read_text()
    assert "```{snippet} t/use\nx again = 0.323833\n```" in page
    assert "on its own False" in page and "on its own again False" in page
    serial = sphinx(root, "serial", tmp_path / "cache-1", "-W")
    assert serial.returncode == 0, serial.stderr
    parallel = sphinx(root, "parallel", tmp_path / "cache-2", "-W", "-j", "2")
    assert parallel.returncode == 0, parallel.stderr
    assert outputs(root / "serial" / "index.html") == outputs(root / "parallel" / "index.html")
    assert len(outputs(root / "serial" / "index.html")) == 4
    # the command line sees the same chain
    verified = snipcheck_cli(root, "verify", cache=tmp_path / "cache-3")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "4 unchanged" in verified.stdout


def test_an_error_mid_chain_is_reported_at_its_cell_and_the_later_cells_are_not_run(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    assert snipcheck_cli(root, "record", cache=tmp_path / "cache-record").returncode == 0
    (root / "snippets" / "t" / "setup.py").write_text(SOURCES["t/setup"] + "raise RuntimeError('broken setup')\n")
    built = sphinx(root, "html", tmp_path / "cache")
    assert built.returncode == 1
    assert "index.md:10: WARNING: snippet 't/setup': the snippet raised RuntimeError: broken setup" in built.stderr
    failures = built.stderr.split("the build fails (snipcheck_fail_on_drift = True):\n")[1]
    # the cell after it is not run, and fails too (a stopped cell never counts as passing: issue 35)
    assert failures == "  index.md:10: t/setup: exec\n  index.md:14: t/use: stopped\n"
    assert "index.md:14: WARNING: snippet 't/use': its chain's process ended before it could run: t/setup" in built.stderr
    page = html(root / "html" / "index.html")
    use = page.find(id="snippet-t-use")
    assert "its chain stopped at t/setup" in use.get_text()
    assert "x again = 0.323833" in use.get_text()  # the stated output, labelled not verified


def test_only_the_first_cell_of_a_chain_may_set_the_seed(tmp_path: Path) -> None:
    cells(tmp_path, {"s/a": "x = 1\n", "s/b": "y = 2\n"})
    first, second = (load(n, tmp_path / "snippets", tmp_path) for n in ("s/a", "s/b"))
    (tmp_path / "snippets" / "s" / "b.py").write_text("y = 2\n# /// snipcheck\n# seed = 1\n# ///\n")
    seeded = load("s/b", tmp_path / "snippets", tmp_path)
    linked = attach([("page", "demo", first), ("page", "demo", seeded), ("page", "demo", second)])
    assert isinstance(linked[1], Broken) and "move the seed tag to 's/a'" in linked[1].message
    assert isinstance(linked[2], Broken)


def test_cells_of_two_versions_of_a_page_run_in_lines_of_their_own(stamp: Stamp, tmp_path: Path) -> None:
    # An incremental build submits the cells of the page as the last build
    # read it (prefetch), then those it reads now: a renamed cell is in one
    # line only, and each line runs as such.
    old = cells(tmp_path, {"c/a": "x = 1\n", "c/old": "print('old', x)\n"})
    new = cells(tmp_path / "n", {"c/a": "x = 1\n", "c/new": "x += 1\n", "c/last": "print('new', x)\n"})
    ex = executor(stamp, tmp_path / "cache")
    try:
        futures = [ex.submit(s) for s in [*old, *new]]
        ex.start_chains()
        outcomes = [f.result() for f in futures]
    finally:
        ex.close()
    assert [out(o.result) for o in outcomes] == ["", "old 1\n", "", "", "new 2\n"]  # type: ignore[arg-type]
