"""Incremental and parallel builds (issue 5): what re-runs, what is re-read, and
that a parallel build writes the same pages as a serial one.

Each test builds a small generated project with ``sphinx-build`` in a
subprocess (as ``nox -s docs`` does).  Every snippet sends its id to the
test's inbox (``load.Inbox``: the file system is read-only to a run), so the
tests count real runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import fake_python
from load import Inbox

PAGES = 6  # Sphinx reads in parallel only when more than 5 documents are outdated
PER_PAGE = 2


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    with Inbox() as box:
        yield box


def make_project(root: Path, counter: Inbox, *, torch: bool = False) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "snippets" / "inc").mkdir(parents=True)
    (root / "conf.py").write_text(
        'extensions = ["myst_nb", "snipcheck"]\nnb_execution_mode = "off"\nsnipcheck_source_dir = "docs"\n'
        f"snipcheck_preload = {['torch'] if torch else []!r}\n"
    )
    toc = []
    for page in range(PAGES):
        body = [f"# Page {page}\n"]
        for n in range(PER_PAGE):
            sid = f"inc/p{page}s{n}"
            (root / "snippets" / f"{sid}.py").write_text(
                ("import torch\n" if torch else "")
                + counter.send_code(repr(sid)) + "\n"
                + f"print('page {page} snippet {n}:', {page} * 10 + {n})\n"
            )
            body.append(f"```{{snippet}} {sid}\n```\n")
        (root / "docs" / f"page{page}.md").write_text("\n".join(body))
        toc.append(f"page{page}")
    (root / "docs" / "index.md").write_text("# Index\n\n```{toctree}\n" + "\n".join(toc) + "\n```\n")
    return root


def record(root: Path, cache: Path, python: str | None = None) -> None:
    args = [sys.executable, "-m", "snipcheck", "--root", str(root), "record"]
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache))
    if python:
        (root / "conf.py").write_text((root / "conf.py").read_text() + f"snipcheck_python = {python!r}\n")
    subprocess.run(args, env=env, check=True, capture_output=True, text=True)


def build(root: Path, cache: Path, out: str = "_build", *extra: str, seed: str = "0") -> tuple[set[str], str]:
    """Build; return the documents read and the console output."""
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(cache), PYTHONHASHSEED=seed)
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--no-color", "-b", "html", "-c", str(root), "-d", str(root / out / "doctrees"),
         *extra, str(root / "docs"), str(root / out / "html")],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    read = set(re.findall(r"reading sources\.\.\. \[\s*\d+%\] (\S+)", proc.stdout))
    return read, proc.stdout + proc.stderr


def runs(counter: Inbox) -> list[str]:
    return counter.lines()


def test_nothing_changed_runs_nothing_and_reads_nothing(tmp_path: Path, inbox: Inbox) -> None:
    counter = inbox
    root = make_project(tmp_path / "p", counter)
    record(root, tmp_path / "cache")
    counter.clear()
    build(root, tmp_path / "cache")
    assert runs(counter) == []  # record already ran them: the build used the cache
    read, _ = build(root, tmp_path / "cache")
    assert read == set()
    assert runs(counter) == []


def test_editing_one_snippet_reruns_only_it_and_rereads_only_its_page(tmp_path: Path, inbox: Inbox) -> None:
    counter = inbox
    root = make_project(tmp_path / "p", counter)
    record(root, tmp_path / "cache")
    build(root, tmp_path / "cache")
    counter.clear()
    snippet = root / "snippets" / "inc" / "p3s1.py"
    snippet.write_text(snippet.read_text() + "# an edit that changes no output\n")
    read, log = build(root, tmp_path / "cache")
    assert read == {"page3"}
    assert runs(counter) == ["inc/p3s1"]
    assert "this build ran 1, took 1 from the cache" in log


def test_a_new_torch_reruns_everything(tmp_path: Path, inbox: Inbox) -> None:
    counter = inbox
    root = make_project(tmp_path / "p", counter, torch=True)
    old = fake_python(tmp_path, "1.0.0", '__version__ = "1.0.0"\n')
    new = fake_python(tmp_path, "1.1.0", '__version__ = "1.1.0"\n')
    record(root, tmp_path / "cache", str(old))
    build(root, tmp_path / "cache")
    counter.clear()
    conf = root / "conf.py"
    conf.write_text(conf.read_text().replace(str(old), str(new)))
    read, log = build(root, tmp_path / "cache")
    assert read == {f"page{p}" for p in range(PAGES)} | {"index"}
    assert sorted(runs(counter)) == sorted(f"inc/p{p}s{n}" for p in range(PAGES) for n in range(PER_PAGE))


@pytest.mark.parametrize("seed", ["0", "1234"])
def test_a_parallel_build_writes_the_same_pages_as_a_serial_one(tmp_path: Path, seed: str, inbox: Inbox) -> None:
    counter = inbox
    root = make_project(tmp_path / "p", counter)
    cache = tmp_path / "cache"
    record(root, cache)
    build(root, cache, "_serial", seed="0")
    _, log = build(root, cache, "_parallel", "-j", "2", seed=seed)
    # Sphinx really read in parallel: it reports chunks of documents ("page1 .. page3")
    assert re.search(r"reading sources\.\.\. \[\s*\d+%\] \S+ \.\. \S+", log), log
    serial = sorted((root / "_serial" / "html").rglob("*.html"))
    assert serial
    for page in serial:
        twin = root / "_parallel" / "html" / page.relative_to(root / "_serial" / "html")
        assert twin.read_bytes() == page.read_bytes(), page.name


def test_a_parallel_cold_build_runs_each_snippet_once(tmp_path: Path, inbox: Inbox) -> None:
    counter = inbox
    root = make_project(tmp_path / "p", counter)
    record(root, tmp_path / "record-cache")
    counter.clear()
    build(root, tmp_path / "cache", "_b", "-j", "2")
    assert sorted(runs(counter)) == sorted(f"inc/p{p}s{n}" for p in range(PAGES) for n in range(PER_PAGE))


def test_a_build_with_few_runs_uses_plain_subprocesses_and_many_runs_fork(tmp_path: Path, inbox: Inbox) -> None:
    # One edited snippet (a live preview, say) costs one `import torch` in a
    # subprocess, not the start of a fork server that preloads everything.
    counter = inbox
    root = make_project(tmp_path / "p", counter)
    record(root, tmp_path / "cache")  # twelve runs: one warm fork server
    snippet = root / "snippets" / "inc" / "p2s0.py"
    snippet.write_text(snippet.read_text() + "# edited\n")
    build(root, tmp_path / "cache")  # one run
    report = json.loads((root / "_build" / "doctrees" / "snipcheck-report" / "report.json").read_text())
    assert [r["snippet_id"] for r in report["snippets"] if r["origin"] == "run"] == ["inc/p2s0"]
    entries = [json.loads(p.read_text())["result"] for p in (tmp_path / "cache" / "results").rglob("*.json")]
    runners = sorted(r["runner"] for r in entries)
    assert runners == ["fork"] * 12 + ["subprocess"]


def test_editing_a_helper_module_reruns_the_snippets_that_import_it(tmp_path: Path, inbox: Inbox) -> None:
    counter = inbox
    root = make_project(tmp_path / "p", counter)
    helper = root / "snippets" / "inc" / "_shared.py"
    helper.write_text("GREETING = 'hello v1'\n")
    user = root / "snippets" / "inc" / "p4s0.py"
    user.write_text(user.read_text() + "from _shared import GREETING\nprint(GREETING)\n")
    record(root, tmp_path / "cache")
    build(root, tmp_path / "cache")
    helper.write_text("GREETING = 'hello v2'\n")
    env = dict(os.environ, SNIPCHECK_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--no-color", "-b", "html", "-c", str(root), "-d",
         str(root / "_build" / "doctrees"), str(root / "docs"), str(root / "_build" / "html")],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode != 0  # the page states "hello v1": the helper's change is drift
    assert "snippet 'inc/p4s0'" in proc.stderr and "+hello v2" in proc.stderr
