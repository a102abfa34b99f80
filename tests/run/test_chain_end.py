"""A chain cell after which the chain cannot go on (issue 23 §1).

A cell that ends its chain's process while cells after it are due (an exit
with status 0 or any other, a signal, SystemExit, an expected
KeyboardInterrupt, a descriptor 2 the end-of-cell frame cannot be written
to) fails at its own directive, whatever its ``expect`` tag says; the cells
after it are reported as stopped by it, never as an environment's lack.
Every path is checked: the executor and the cache, the Sphinx build (and
its rebuild), ``verify`` (sharded too), ``pytest --snipcheck`` (one cell
selected too), ``record`` and ``run``.  A cell whose requirement is
genuinely missing stays a plain "not run".
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chain_support import KINDS, cells, executor
from helpers import html, snipcheck_cli
from snipcheck.judge.compare import judge, outcome_problem
from snipcheck.model import Outcome, RunResult, Snippet, Stamp

#: Ways a cell ends the process: (code of c/two, its tag block, how the message names the ending).
ENDINGS = {
    "os._exit(0)": ("import os\nprint('two', flush=True)\nos._exit(0)\n", "", "exited normally (status 0)"),
    "sys.exit(0)": ("import sys\nprint('two')\nsys.exit(0)\n", "", "exited normally (status 0)"),
    "raise SystemExit": ("print('two')\nraise SystemExit\n", "", "exited normally (status 0)"),
    "exit 3 as expected": ("import os\nprint('two', flush=True)\nos._exit(3)\n", 'expect = "exit 3"', "exited with status 3"),
    "exit 3 unexpected": ("import sys\nprint('two')\nsys.exit(3)\n", "", "exited with status 3"),
    "SIGKILL as expected": (
        "import os, signal\nprint('two', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n",
        'expect = "signal SIGKILL"',
        "was killed by SIGKILL",
    ),
    "KeyboardInterrupt as expected": (
        "print('two')\nraise KeyboardInterrupt\n", 'expect = "KeyboardInterrupt"', "was killed by SIGINT"
    ),
    "descriptor 2 closed": ("import os\nprint('two', flush=True)\nos.close(2)\n", "", "exited normally (status 0)"),
}


def tagged(code: str, tags: str) -> str:
    return code + (f"# /// snipcheck\n# {tags}\n# ///\n" if tags else "")


def three(root: Path, ending: str) -> list[Snippet]:
    code, tags, _ = ENDINGS[ending]
    return cells(root, {"c/one": "x = 1\nprint('one')\n", "c/two": tagged(code, tags), "c/three": "print('three', x)\n"})


def out(result: RunResult | None) -> str:
    assert result is not None
    return "".join(e.text for e in result.events)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_a_cell_that_ends_the_process_fails_and_the_cells_after_it_are_stopped(
    kind: str, ending: str, stamp: Stamp, tmp_path: Path
) -> None:
    chain = three(tmp_path, ending)
    for _ in range(2):  # nothing was cached: the second time runs again and fails the same way
        ex = executor(stamp, tmp_path / "cache", kind)
        try:
            one, two, end = ex.map(chain)
        finally:
            ex.close()
        assert [one.origin, two.origin, end.origin] == ["run", "run", "not-run"]
        assert out(one.result) == "one\n"
        assert two.result is not None and two.result.ended_chain == ("c/three",)
        assert out(two.result).startswith("two\n")
        found = outcome_problem(chain[1].tags, two.result)
        assert found is not None and found[0] == "exec", found
        assert f"the snippet {ENDINGS[ending][2]}" in found[1]
        assert "ended its chain's process before the cells after it could run (c/three)" in found[1]
        verdict = judge(chain[1].tags, two.result, "two", ())
        assert verdict.status == "exec" and verdict.ended_wrong  # record refuses it
        assert end.result is None and end.missing == () and end.stopped_at == "c/two"
        assert end.stopped.startswith("its chain's process ended before it could run: c/two, a cell before it, ")


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_of_the_first_cells_only_still_checks_that_the_last_of_them_lets_the_process_go_on(
    kind: str, stamp: Stamp, tmp_path: Path
) -> None:
    # record ID, pytest -k and a verify shard run a chain only up to the cells they want;
    # Project.snippet tells each cell which cells come after it (Snippet.later).
    one, two, _ = three(tmp_path, "os._exit(0)")
    ex = executor(stamp, tmp_path / "cache", kind)
    try:
        first, second = ex.map([one, dataclasses.replace(two, later=("c/three",))])
    finally:
        ex.close()
    assert first.origin == "run" and first.result is not None and not first.result.ended_chain
    assert second.result is not None and second.result.ended_chain == ("c/three",)
    assert outcome_problem(two.tags, second.result) is not None
    assert not list((tmp_path / "cache").glob("results/*")), "a chain that did not get through was cached"
    # a first cell alone ends where the next cell begins, as in a run of the whole chain:
    # what the exit sequence prints is the last cell's, not its own
    at_exit = cells(tmp_path / "x", {"e/a": "import atexit\natexit.register(print, 'at exit')\nprint('a')\n",
                                     "e/b": "print('b')\n"})  # fmt: skip
    ex = executor(stamp, tmp_path / "cache-x", kind)
    try:
        (alone,) = ex.map([dataclasses.replace(at_exit[0], later=("e/b",))])
    finally:
        ex.close()
    ex = executor(stamp, tmp_path / "cache-x", kind)
    try:
        whole = ex.map(at_exit)
    finally:
        ex.close()
    assert out(alone.result) == "a\n" and alone.origin == "run"
    assert [out(o.result) for o in whole] == ["a\n", "b\nat exit\n"]
    assert whole[0].origin == "cache"  # the same result under the same key


def test_a_missing_requirement_after_a_cell_is_a_plain_not_run_and_the_cell_before_it_still_must_go_on(
    stamp: Stamp, tmp_path: Path
) -> None:
    needs = '# /// snipcheck\n# requires = ["torch>=99"]\n# ///\nprint("three")\n'
    good = cells(tmp_path, {"r/one": "print('one')\n", "r/two": "print('two')\n", "r/three": needs})
    ex = executor(stamp, tmp_path / "cache")
    try:
        one, two, end = ex.map(good)
    finally:
        ex.close()
    assert out(one.result) == "one\n"
    assert out(two.result) == "two\n" and two.result is not None and not two.result.ended_chain
    assert end.result is None and end.missing == ("torch>=99",) and end.stopped == ""  # legitimately not run
    assert len(list((tmp_path / "cache").glob("results/*"))) == 2  # the chain got through: both cells stored
    bad = cells(tmp_path / "b", {"r/one": "print('one')\n", "r/two": "import os\nos._exit(0)\n", "r/three": needs})
    ex = executor(stamp, tmp_path / "cache-b")
    try:
        _, two, end = ex.map(bad)
    finally:
        ex.close()
    assert two.result is not None and two.result.ended_chain == ("r/three",)
    assert outcome_problem(bad[1].tags, two.result) is not None
    assert end.missing == ("torch>=99",) and end.stopped == ""
    assert not list((tmp_path / "cache-b").glob("results/*"))


def test_a_cell_that_ends_the_process_only_now_is_not_taken_from_the_cache(stamp: Stamp, tmp_path: Path) -> None:
    # c/two prints the same whether or not it then ends the process: its
    # cached result (from a run that went on) must not stand for this one.
    flag = tmp_path / "flag"
    sources = {
        "f/one": "print('one')\n",
        "f/two": f"import os\nprint('two', flush=True)\nif os.path.exists({str(flag)!r}):\n    os._exit(0)\n",
        "f/three": "print('three')\n",
    }
    ex = executor(stamp, tmp_path / "cache")
    try:
        assert all(o.result is not None for o in ex.map(cells(tmp_path, sources)))
    finally:
        ex.close()
    flag.write_text("")
    sources["f/three"] = "print('three, edited')\n"  # a cache miss: the chain runs
    chain = cells(tmp_path, sources)
    ex = executor(stamp, tmp_path / "cache")
    try:
        one, two, end = ex.map(chain)
    finally:
        ex.close()
    assert one.origin == "cache"
    assert two.origin == "run" and two.result is not None and two.result.ended_chain == ("f/three",)
    assert outcome_problem(chain[1].tags, two.result) is not None
    assert end.stopped


def test_a_cell_cached_as_the_last_of_its_chain_runs_again_once_cells_come_after_it(
    stamp: Stamp, tmp_path: Path
) -> None:
    # Ending the process is right for a chain's last cell, and its result is
    # stored; once a cell follows it, a run of the first cells only (record
    # c/two, pytest -k two) must not take that result for one that went on.
    sources = {"l/one": "print('one')\n", "l/two": "import os\nprint('two', flush=True)\nos._exit(0)\n"}
    ex = executor(stamp, tmp_path / "cache")
    try:
        assert [o.result is not None and not o.result.ended_chain for o in ex.map(cells(tmp_path, sources))] == [True] * 2
    finally:
        ex.close()
    one, two = cells(tmp_path, sources)
    ex = executor(stamp, tmp_path / "cache")
    try:
        first, second = ex.map([one, dataclasses.replace(two, later=("l/three",))])
    finally:
        ex.close()
    assert second.origin == "run" and second.result is not None and second.result.ended_chain == ("l/three",)
    assert outcome_problem(two.tags, second.result) is not None


def test_planning_sees_a_cached_chain_as_cached(stamp: Stamp, tmp_path: Path) -> None:
    # A build links each cell as its page is read, before the cells after
    # it (Snippet.later empty): planning must still find their entries, or
    # an unchanged chain would count as runs and start the fork server.
    chain = cells(tmp_path, {"p/one": "x = 1\n", "p/two": "x += 1\n", "p/three": "print(x)\n"})
    ex = executor(stamp, tmp_path / "cache")
    try:
        assert ex.plan(chain) == 3
        assert all(o.result is not None for o in ex.map(chain))
    finally:
        ex.close()
    ex = executor(stamp, tmp_path / "cache")
    try:
        assert ex.plan(chain) == 0
    finally:
        ex.close()


def test_a_result_that_ended_the_chain_reads_back_from_json() -> None:
    stamp = Stamp("3.11", None, "CPU", "Linux")
    result = RunResult((), 0, None, None, 0.1, False, 0, stamp, "fork", ended_chain=("a/b",))
    assert RunResult.from_json(json.loads(json.dumps(result.to_json()))) == result
    assert Outcome(None, "not-run").stopped == ""


# --- the build, verify, pytest --snipcheck, record and run ---------------------------------

PAGE = """\
# Tutorial

```{snippet-chain} c
```

```{snippet-code} c/one
print("one")
```

```{snippet} c/one
one
```

```{snippet-code} c/two
import os
print("two", flush=True)
os._exit(0)
```

```{snippet} c/two
two
```

```{snippet-code} c/three
print("three")
```

```{snippet} c/three
three
```
"""
TWO_AT = 20  # the line of c/two's snippet directive
CONF = 'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_preload = []\n'


def project(root: Path, page: str = PAGE) -> Path:
    root.mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "index.md").write_text(page)
    return root


def sphinx(root: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", str(root), str(root / "_build")],
                          env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def test_the_build_fails_at_the_cell_that_ended_the_chain_and_a_rebuild_fails_the_same_way(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    for attempt in ("cold", "rebuild"):  # the rebuild reads the pickled environment and the cache
        built = sphinx(root, tmp_path / "cache")
        assert built.returncode == 1, (attempt, built.stderr)  # without -W: snipcheck_fail_on_drift
        assert (
            f"index.md:{TWO_AT}: WARNING: snippet 'c/two': the snippet exited normally (status 0) and so ended "
            "its chain's process before the cells after it could run (c/three); a cell of a chain must let the "
            "process go on" in built.stderr
        ), built.stderr
        failures = built.stderr.split("the build fails (snipcheck_fail_on_drift = True):\n")[1]
        assert failures.startswith(f"  index.md:{TWO_AT}: c/two: exec\n"), failures
        assert "1 not run because an earlier cell of their chain failed or ended it (c/two)" in built.stdout
        assert "not run here" not in built.stdout
    page = html(root / "_build" / "index.html")
    assert "its chain stopped at c/two" in page.find(id="snippet-c-three").get_text()
    assert "ended its chain's process, so the cells after it could not run (c/three)" in page.find(
        id="snippet-c-two"
    ).get_text()


def test_verify_fails_whole_and_in_shards(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = snipcheck_cli(root, "verify", "--json", str(tmp_path / "v.json"), cache=tmp_path / "cache")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["holds"] is False
    status = {s["id"]: s["status"] for s in report["snippets"]}
    assert status == {"c/one": "unchanged", "c/two": "failing", "c/three": "failing"}
    # Shards hold other cells of one chain (by id: c/one, c/three, c/two): each fails on its own.
    for shard, failing in (("1/2", "c/two"), ("2/2", "c/three")):
        done = snipcheck_cli(root, "verify", "--shard", shard, cache=tmp_path / f"cache-{shard[0]}")
        assert done.returncode == 1, (shard, done.stdout + done.stderr)
        assert f"FAILING    {failing}" in done.stdout, done.stdout


def pytest_snipcheck(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--snipcheck", "-p", "no:cacheprovider", "-q", *args, str(root / "index.md")],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_pytest_snipcheck_fails_the_cell_that_ended_the_chain_and_the_cell_it_stopped(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = pytest_snipcheck(root, tmp_path / "cache")
    assert done.returncode == 1, done.stdout
    assert "2 failed, 1 passed" in done.stdout, done.stdout
    assert "ended its chain's process before the cells after it could run (c/three)" in done.stdout
    for selected in ("two", "three"):  # one cell selected: the other's item is not there to fail
        done = pytest_snipcheck(root, tmp_path / "cache", "-k", selected)
        assert done.returncode == 1, (selected, done.stdout)
        assert "1 failed, 2 deselected" in done.stdout, done.stdout
        assert f"FAILED index.md::c/{selected}" in done.stdout


def test_record_and_run_refuse_a_chain_that_cannot_run_through(tmp_path: Path) -> None:
    page = PAGE.replace("two\n```\n\n```{snippet-code} c/three", "stale\n```\n\n```{snippet-code} c/three")
    root = project(tmp_path / "p", page)
    for ids in ((), ("c/two",), ("c/three",)):
        done = snipcheck_cli(root, "record", *ids, cache=tmp_path / "cache")
        assert done.returncode == 1, (ids, done.stdout + done.stderr)
        assert "not recorded" in done.stderr and "0 stated output(s) recorded" in done.stdout
        assert (root / "index.md").read_text() == page
    done = snipcheck_cli(root, "run", "c/two", cache=tmp_path / "cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the cells after it did not run (c/three)" in done.stdout
    done = snipcheck_cli(root, "run", "c/three", cache=tmp_path / "cache")
    assert done.returncode == 1 and "its chain's process ended before it could run: c/two" in done.stdout
