"""The CI cache (issue 38): snipcheck's results carried from one CI run to the next.

``.github/workflows/docs.yml`` is run here step by step, as its jobs run on
GitHub, on a small project (the subprocess runner, a chain, two pages: the
shard tests' project, without its snippet that needs a requirement):
``actions/cache`` is a folder of saved caches (:class:`Store`: a key is
looked up exactly, then by the prefixes of ``restore-keys``, newest first),
each job restores into a checkout folder of its own, and each ``nox -s``
session is the ``snipcheck`` command it runs (``shard`` → ``execute
--shard``, ``docs-merged`` → ``execute --merge`` then a build with
``snipcheck_execute = "merged"``, ``cache`` → ``snipcheck cache``).  The
steps and their order are read from the workflow first
(:func:`test_the_docs_workflow_restores_before_the_shards_and_saves_only_after_a_green_push`),
so the run here is the run there.

The interpreter is a wrapper with a fake distribution on its path
(``fakepkg``), so that "a package version change" is an in-place upgrade, as
pip makes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, fresh_cache
from environment_support import fake_site, interpreter_with, upgrade_in_place
from helpers import html
from shard_support import two_page_project
from snipcheck.model import Stamp
from snipcheck.shard.carried import INDEX, environment_key
from faults_support import sphinx_build

SOURCES = {
    "s/a": "print('a')\n",
    "s/b": "print('b')\n",
    "s/one": "x = 1\nprint(x)\n",
    "s/two": "print(x + 1)\n",
    "s/c": "print('c')\n",
    "s/d": "print('d')\n",
    "s/e": "print('e')\n",
}
CONF = """\
import os
extensions = ["snipcheck"]
snipcheck_runner = "subprocess"
snipcheck_jobs = 2
snipcheck_show_durations = False
snipcheck_python = os.environ.get("CI_PYTHON", "")
"""
UNITS = {"s/a", "s/b", "chain:a:steps", "s/c", "s/d", "s/e"}
WORKFLOW = REPO / ".github" / "workflows" / "docs.yml"
KEY = "k" * 64  # a shards' key, as the repository secret SNIPCHECK_SHARD_KEY holds one
#: An age as ``snipcheck cache show`` writes it; a range when its entries were made over more than a second.
AGE = r"\d+ (?:s|min|h|days?)"
AGES = rf"made {AGE}(?: to {AGE})? ago"


@dataclass
class Store:
    """``actions/cache`` on a folder: saved caches by key, in the order saved."""

    root: Path
    saved: list[str] = field(default_factory=list)

    def lookup(self, key: str, restore_keys: list[str]) -> str:
        """The key ``actions/cache/restore`` matches: ``key`` itself, else the
        newest cache whose key starts with ``key`` or a restore key; ``""`` for none."""
        if key in self.saved:
            return key
        for prefix in (key, *restore_keys):
            found = [k for k in reversed(self.saved) if k.startswith(prefix)]
            if found:
                return found[0]
        return ""

    def restore(self, key: str, path: Path) -> None:
        """``actions/cache/restore`` with an exact ``key`` into ``path`` (nothing for ``""``)."""
        if key:
            shutil.copytree(self.root / key, path)

    def save(self, key: str, path: Path) -> None:
        """``actions/cache/save``: a key is never written twice."""
        assert key not in self.saved, f"{key} saved twice"
        shutil.copytree(path, self.root / key)
        self.saved.append(key)


@dataclass
class Run:
    """What one run of the workflow did."""

    key: str
    found: str
    ran: set[str]
    shards: list[subprocess.CompletedProcess[str]]
    merge: subprocess.CompletedProcess[str]
    build: Any
    saved: str | None = None


def cli(root: Path, *args: str, cache: Path, key: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m snipcheck --root ROOT ARGS`` with ``cache`` as the build's
    result cache, and ``key`` as the shards' key (the repository secret a
    workflow step gets; an in-process build takes it out of this process's
    environment, so it is given each time)."""
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_SHARD_KEY"}
    env["SNIPCHECK_CACHE_DIR"] = str(cache)
    if key is not None:
        env["SNIPCHECK_SHARD_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(root), *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "manifest.json").read_text())  # type: ignore[no-any-return]


def ci_run(
    root: Path, tmp: Path, store: Store, probes: Path, *, push: bool, name: str, key: str | None = None, shards: int = 2
) -> Run:
    """One run of docs.yml's cache, shard, build and save-cache jobs (see the module docstring).

    :param push: a push to the default branch (the only run that saves); else a pull request.
    :param key: the repository secret SNIPCHECK_SHARD_KEY, given to the steps that get it.
    """
    work = tmp / name
    work.mkdir()
    # cache job: the environment's key, then the newest cache of this environment (lookup only)
    stem = ok(cli(root, "cache", "key", cache=fresh_cache(work / "cache-job", probes))).stdout.strip().splitlines()[-1]
    found = store.lookup(f"{stem}-{name}", [f"{stem}-"])
    # shard jobs, each in its own checkout: restore exactly what the cache job found, then run
    folders, outs = [], []
    for k in range(1, shards + 1):
        job = work / f"shard-{k}"
        store.restore(found, job / "ci-cache")
        out = fresh_cache(job / f"shard-{k}-of-{shards}", probes)
        outs.append(ok(cli(
            root, "execute", "--shard", f"{k}/{shards}", "--out", str(out), "--ci-cache", str(job / "ci-cache"), cache=out, key=key
        )))  # fmt: skip
        folders.append(out)
    ran = {u["id"] for f in folders for u in manifest(f)["units"]}
    # build job: the shards' folders, the same CI cache, the merge, the merged build
    job = work / "build"
    store.restore(found, job / "ci-cache")
    cache = fresh_cache(job / "doctrees-cache", probes)
    merge = ok(cli(root, "execute", "--merge", *map(str, folders), "--ci-cache", str(job / "ci-cache"), cache=cache, key=key))
    build = sphinx_build(root, job / "sphinx", cache, {"snipcheck_execute": "merged"})
    assert build.statuscode == 0, build.status + build.warnings_text
    run = Run(stem, found, ran, outs, merge, build)
    if push:  # the build job packs the next cache; save-cache (after a green run) saves it
        ok(cli(root, "cache", "save", "--ci-cache", str(job / "ci-cache-next"), cache=cache, key=key))
        run.saved = f"{stem}-{name}-1"
        store.save(run.saved, job / "ci-cache-next")
    return run


def pages(outdir: Path) -> dict[str, str]:
    """The built pages a and b, whole."""
    return {page: (outdir / f"{page}.html").read_text(encoding="utf-8") for page in ("a", "b")}


def report(build: Any) -> dict[str, Any]:
    return json.loads((build.report_dir / "report.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = two_page_project(tmp_path / "p", SOURCES, CONF, gpu=False)
    site = fake_site(tmp_path / "env", "fakepkg", "1.0")
    monkeypatch.setenv("CI_PYTHON", str(interpreter_with(tmp_path / "env", site)))
    monkeypatch.delenv("SNIPCHECK_SHARD_KEY", raising=False)
    return root


@pytest.fixture
def probes(tmp_path: Path) -> Path:
    """An empty cache folder that shards and builds copy (the wrapper is probed where it runs)."""
    folder = tmp_path / "probes"
    (folder / "probes").mkdir(parents=True)
    return folder


def _step(job: dict[str, Any], needle: str) -> int:
    for i, step in enumerate(job["steps"]):
        if needle in str(step.get("run", "")) + str(step.get("uses", "")) + str(step.get("with", {}).get("key", "")):
            return i
    raise AssertionError(f"no step of {job.get('name', job)} holds {needle!r}")


def test_the_docs_workflow_restores_before_the_shards_and_saves_only_after_a_green_push() -> None:
    """The steps :func:`ci_run` runs are the workflow's, in its order: the
    key from snipcheck, one cache picked for the whole run, restored before
    each shard and the merge (which are given it), saved only by a job that
    needs every other one and runs only for a push to the default branch."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    jobs, folder = workflow["jobs"], workflow["env"]["CI_CACHE"]
    cache = jobs["cache"]
    key = cache["steps"][_step(cache, "nox -s cache -- key")]
    look = cache["steps"][_step(cache, "actions/cache/restore@")]
    assert _step(cache, "nox -s cache -- key") < _step(cache, "actions/cache/restore@")
    assert look["with"] == {
        "path": "${{ env.CI_CACHE }}",
        "key": "${{ steps.key.outputs.key }}-${{ github.run_id }}",
        "restore-keys": "${{ steps.key.outputs.key }}-",  # older keys of the same environment only
        "lookup-only": True,
    }
    assert key["id"] == "key" and look["id"] == "look"
    assert cache["outputs"] == {"key": "${{ steps.key.outputs.key }}", "found": "${{ steps.look.outputs.cache-matched-key }}"}
    # one image and one PATH as the shards and the build: one environment, one key
    assert cache["container"] == jobs["shard"]["container"] == jobs["build"]["container"]
    assert any("rust-toolchain" in str(s.get("uses")) for s in cache["steps"])
    for name, command in (("shard", 'nox -s shard -- "${{ matrix.shard }}" --ci-cache "$CI_CACHE"'),
                          ("build", 'nox -s docs-merged -- ${{ needs.plan.outputs.not_run }} --ci-cache "$CI_CACHE"')):  # fmt: skip
        job = jobs[name]
        assert "cache" in job["needs"]
        restore = _step(job, "${{ needs.cache.outputs.found }}")
        step = job["steps"][restore]
        assert step["uses"].startswith("actions/cache/restore@") and step["with"]["path"] == "${{ env.CI_CACHE }}"
        assert step["if"] == "needs.cache.outputs.found != ''" and "restore-keys" not in step["with"]
        assert restore < _step(job, command)
        assert not any(str(s.get("uses", "")).startswith(("actions/cache@", "actions/cache/save@")) and
                       s.get("with", {}).get("path") == "${{ env.CI_CACHE }}" for s in job["steps"])  # fmt: skip
    assert folder == "_build/ci-cache"
    # the next cache is packed by the build job, and saved by save-cache once the whole run is green
    default = "github.event_name == 'push' && github.ref == format('refs/heads/{0}', github.event.repository.default_branch)"
    build = jobs["build"]
    pack = _step(build, "nox -s cache -- save --ci-cache _build/ci-cache-next")
    assert pack > _step(build, "nox -s docs-merged") and build["steps"][pack]["if"] == default
    save = jobs["save-cache"]
    assert save["if"] == default and set(save["needs"]) == {"cache", "build", "tests"}
    assert save["container"] == cache["container"]  # actions/cache keys a cache by path and compression too
    (saving,) = [s for s in save["steps"] if str(s.get("uses", "")).startswith("actions/cache/save@")]
    assert saving["with"]["key"].startswith("${{ needs.cache.outputs.key }}-")
    savers = [
        name for name, job in jobs.items() for s in job["steps"]
        if str(s.get("uses", "")).startswith(("actions/cache/save@", "actions/cache@"))
        and s.get("with", {}).get("path") == "${{ env.CI_CACHE }}"
    ]  # fmt: skip
    assert savers == ["save-cache"]


def test_a_second_run_runs_only_the_changed_snippet_and_builds_the_pages_of_a_cold_run(
    project: Path, tmp_path: Path, probes: Path
) -> None:
    """Done-when of issue 38: the first run fills the cache; after a
    one-snippet change the second run plans and runs exactly that snippet
    (then a chain cell: its whole chain) and builds the pages a cold run
    builds; after a package version change everything runs again."""
    store = Store(tmp_path / "actions-cache")
    first = ci_run(project, tmp_path, store, probes, push=True, name="first")
    assert first.found == "" and first.ran == UNITS
    assert first.key.startswith("snipcheck-results-py") and store.saved == [first.saved]
    index = json.loads((store.root / str(first.saved) / INDEX).read_text())
    assert sorted(e["snippet"] for e in index["entries"].values()) == sorted(SOURCES)
    assert "signature" not in index and index["environment"] == first.key

    # a pull request that changes one snippet (its output stays the stated one)
    (project / "snippets" / "s" / "d.py").write_text("print('d')  # said differently\n")
    second = ci_run(project, tmp_path, store, probes, push=False, name="second")
    assert second.found == first.saved and second.key == first.key
    assert second.ran == {"s/d"}
    for out in second.shards:
        assert "left out 5 unit(s) (6 snippet(s)) whose results the CI cache" in out.stdout
    assert "6 result(s) of 5 unit(s) taken from it (no shard ran them)" in second.merge.stdout
    assert "merged 1 result(s) from 2 shard(s) and 6 from the CI cache" in second.merge.stdout
    assert "; this build ran 0, took 1 from the cache and 6 from the CI cache" in second.build.status
    assert "6 results from the CI cache" in second.build.status
    origins = {s["snippet_id"]: s["origin"] for s in report(second.build)["snippets"]}
    assert origins == {sid: "cache" if sid == "s/d" else "ci-cache" for sid in SOURCES}
    assert store.saved == [first.saved]  # a pull request saves nothing
    cold = ci_run(project, tmp_path, Store(tmp_path / "empty-store"), probes, push=False, name="cold")
    assert cold.ran == UNITS and cold.found == ""
    assert pages(second.build.outdir) == pages(cold.build.outdir)
    assert "snipcheck-output" in pages(cold.build.outdir)["b"]

    # a chain's cell: its whole chain runs, and nothing else
    (project / "snippets" / "s" / "two.py").write_text("print(x+1)\n")
    third = ci_run(project, tmp_path, store, probes, push=True, name="third")
    assert third.found == first.saved and third.ran == {"s/d", "chain:a:steps"}  # s/d: the PR was not saved
    fourth = ci_run(project, tmp_path, store, probes, push=False, name="fourth")
    assert fourth.found == third.saved and fourth.ran == set()  # every unit from the CI cache
    assert "; this build ran 0, took 0 from the cache and 7 from the CI cache" in fourth.build.status

    # a new version of a package the snippets could import: another key; nothing restored, everything runs
    site = tmp_path / "env" / "site"
    upgrade_in_place(site, "fakepkg", "1.0", "1.1")
    fifth = ci_run(project, tmp_path, store, probes, push=False, name="fifth")
    assert fifth.key != first.key and fifth.found == "" and fifth.ran == UNITS
    # and a cache of the old environment, restored all the same (a restore key too wide), gives nothing
    stale = tmp_path / "stale"
    store.restore(str(third.saved), stale)
    out = fresh_cache(tmp_path / "stale-shard", probes)
    ok(cli(project, "execute", "--shard", "1/1", "--out", str(out), "--ci-cache", str(stale), cache=out))
    assert {u["id"] for u in manifest(out)["units"]} == UNITS and manifest(out)["carried"] == []


def _entry(folder: Path, snippet_id: str) -> Path:
    """The entry file of ``snippet_id`` in the CI cache ``folder``."""
    index = json.loads((folder / INDEX).read_text())
    (key,) = [k for k, e in index["entries"].items() if e["snippet"] == snippet_id]
    return folder / "results" / key[:2] / f"{key}.json"


def _forge(path: Path, old: str, new: str) -> None:
    """Change the output an entry holds, keeping it valid JSON (a hand edit)."""
    data = json.loads(path.read_text())
    text = json.dumps(data)
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_damaged_or_hand_edited_entry_is_run_again_not_served(project: Path, tmp_path: Path, probes: Path) -> None:
    store = Store(tmp_path / "actions-cache")
    first = ci_run(project, tmp_path, store, probes, push=True, name="first")
    saved = store.root / str(first.saved)
    _forge(_entry(saved, "s/c"), '"c\\n"', '"forged\\n"')  # a hand edit
    _entry(saved, "s/e").write_bytes(_entry(saved, "s/e").read_bytes()[:40])  # a damaged file
    second = ci_run(project, tmp_path, store, probes, push=False, name="second")
    assert second.ran == {"s/c", "s/e"}
    for out in second.shards:  # each job says so, once per entry
        assert out.stderr.count("warning: CI cache: s/c (key ") == 1
        assert "its entry is not what the cache's index says" in out.stderr
        assert out.stderr.count("warning: CI cache: s/e (key ") == 1
    html_c = html(second.build.outdir / "b.html").get_text()
    assert "forged" not in html_c
    assert {s["snippet_id"]: s["origin"] for s in report(second.build)["snippets"]}["s/c"] == "cache"  # run by a shard


def test_with_the_shards_key_the_cache_is_signed_and_a_rehashed_edit_is_refused(project: Path, tmp_path: Path, probes: Path) -> None:
    """An edit that also rewrites the index's SHA-256 passes the content check;
    with the key the index's signature no longer holds, so nothing is taken."""
    store = Store(tmp_path / "actions-cache")
    first = ci_run(project, tmp_path, store, probes, push=True, name="first", key=KEY)
    saved = store.root / str(first.saved)
    index = json.loads((saved / INDEX).read_text())
    assert index["signature"]["algorithm"] == "hmac-sha256"
    untouched = ci_run(project, tmp_path, store, probes, push=False, name="untouched", key=KEY)
    assert untouched.ran == set()  # signed and checked: every unit from the CI cache
    entry = _entry(saved, "s/c")
    _forge(entry, '"c\\n"', '"forged\\n"')
    index["entries"][entry.stem]["sha256"] = hashlib.sha256(entry.read_bytes()).hexdigest()
    index["entries"][entry.stem]["bytes"] = len(entry.read_bytes())
    (saved / INDEX).write_text(json.dumps(index))
    second = ci_run(project, tmp_path, store, probes, push=False, name="second", key=KEY)
    assert second.ran == UNITS
    for out in second.shards:
        assert out.stderr.count("does not match its signature: it was changed after it was saved") == 1
    assert "forged" not in html(second.build.outdir / "b.html").get_text()
    # a cache saved without the key is not taken by a run with it
    unsigned = ci_run(project, tmp_path, Store(tmp_path / "store-2"), probes, push=True, name="unsigned")
    folder = tmp_path / "store-2" / str(unsigned.saved)
    out = fresh_cache(tmp_path / "keyed-shard", probes)
    proc = ok(cli(project, "execute", "--shard", "1/1", "--out", str(out), "--ci-cache", str(folder), cache=out, key=KEY))
    assert "is not signed, though SNIPCHECK_SHARD_KEY is set here" in proc.stderr
    assert {u["id"] for u in manifest(out)["units"]} == UNITS


def test_the_merge_refuses_shards_that_restored_another_ci_cache(project: Path, tmp_path: Path, probes: Path) -> None:
    store = Store(tmp_path / "actions-cache")
    first = ci_run(project, tmp_path, store, probes, push=True, name="first")
    (project / "snippets" / "s" / "d.py").write_text("print('d')  # said differently\n")
    restored = tmp_path / "restored"
    store.restore(str(first.saved), restored)
    one = fresh_cache(tmp_path / "one", probes)
    two = fresh_cache(tmp_path / "two", probes)
    ok(cli(project, "execute", "--shard", "1/2", "--out", str(one), "--ci-cache", str(restored), cache=one))
    ok(cli(project, "execute", "--shard", "2/2", "--out", str(two), "--ci-cache", str(tmp_path / "none"), cache=two))
    cache = fresh_cache(tmp_path / "final", probes)
    proc = cli(project, "execute", "--merge", str(one), str(two), "--ci-cache", str(restored), cache=cache)
    assert proc.returncode == 1
    assert re.search(
        rf"error: cannot merge: {re.escape(str(two))}: shard 2/2 took 0 unit\(s\) from the CI cache it restored, this "
        r"merge's CI cache \(.*\) holds 5 \(chain:a:steps is only in this merge's\): every shard and the merge must restore the "
        "same CI cache",
        proc.stderr,
    ), proc.stderr
    assert not (cache / "results").exists()
    # a merge given no CI cache refuses shards that left units out for one
    proc = cli(project, "execute", "--merge", str(one), str(two), cache=cache)
    assert proc.returncode == 1 and "shard 1/2 took 5 unit(s) from the CI cache it restored" in proc.stderr


def test_cache_show_plan_and_prune_say_what_a_cache_holds_and_what_a_build_would_run(
    project: Path, tmp_path: Path, probes: Path
) -> None:
    cache = fresh_cache(tmp_path / "cache", probes)
    built = sphinx_build(project, tmp_path / "one", cache)
    assert built.statuscode == 0, built.warnings_text
    (project / "snippets" / "s" / "d.py").write_text("print('d')  # said differently\n")
    plan = ok(cli(project, "cache", "plan", "--shards", "2", cache=cache)).stdout
    assert f"the result cache {cache}: a build would take 6 of 7 results from it (5 of 6 units) and run 1 (1 unit):\n  s/d\n" in plan
    assert re.search(r"^with 2 shard\(s\): shard 1/2 1 unit, 1\.00 s, shard 2/2 0 units, 0\.00 s", plan, re.MULTILINE)
    shown = ok(cli(project, "cache", "show", cache=cache)).stdout
    stamp = Stamp(**json.loads(next((cache / "results").glob("*/*.json")).read_text())["result"]["stamp"])
    assert re.search(rf"^result cache {re.escape(str(cache))}: 7 entries, [\d.]+ (B|KiB), {AGES}$", shown, re.MULTILINE), shown
    assert re.search(
        rf"^  environment {stamp.env} \(.*, this one\): 7 entries, 6 used by a placement here, [\d.]+ (B|KiB), {AGES}$",
        shown, re.MULTILINE,
    ), shown  # fmt: skip
    assert "7 results wanted, 6 of them in it" in shown
    dry = ok(cli(project, "cache", "prune", "--dry-run", cache=cache)).stdout
    assert "would remove 1 of 7 entries" in dry and len(list((cache / "results").glob("*/*.json"))) == 7
    pruned = ok(cli(project, "cache", "prune", cache=cache)).stdout
    assert "removed 1 of 7 entries" in pruned and len(list((cache / "results").glob("*/*.json"))) == 6
    again = sphinx_build(project, tmp_path / "two", cache)
    assert "; this build ran 1, took 6 from the cache" in again.status
    # the CI cache: saved from it, then planned from, in a checkout that has nothing else
    ci = tmp_path / "ci-cache"
    assert "saved 7 result(s)" in ok(cli(project, "cache", "save", "--ci-cache", str(ci), cache=cache)).stdout
    empty = fresh_cache(tmp_path / "empty", probes)
    plan = ok(cli(project, "cache", "plan", "--ci-cache", str(ci), cache=empty)).stdout
    assert f"the CI cache {ci}: a build would take 7 of 7 results from it (6 of 6 units) and run 0 (0 units)\n" in plan
    shown = ok(cli(project, "cache", "show", "--ci-cache", str(ci), cache=empty)).stdout
    assert re.search(rf"^CI cache {re.escape(str(ci))} under key snipcheck-results-\S+, saved {AGE} ago: 7 entries", shown, re.MULTILINE), shown
    restored = ok(cli(project, "cache", "restore", "--ci-cache", str(ci), cache=empty)).stdout
    assert f"restored 7 of 7 result(s) from {ci} into {empty}" in restored
    single = sphinx_build(project, tmp_path / "three", empty)
    assert "; this build ran 0, took 0 from the cache and 7 from the CI cache" in single.status


def test_the_environment_key_follows_the_whole_stamp() -> None:
    stamp = Stamp("3.11.7", "2.13.0+cpu", "CPU", "Linux x86_64", None, "abc")
    key = environment_key(stamp)
    assert re.fullmatch(r"snipcheck-results-py3\.11\.7-torch2\.13\.0-cpu-[0-9a-f]{16}", key), key
    assert environment_key(Stamp("3.11.7", "2.13.0+cpu", "CPU", "Linux x86_64", None, "abc")) == key
    for other in (
        Stamp("3.11.7", "2.13.0+cpu", "CPU", "Linux x86_64", None, "abd"),  # another distribution or variable
        Stamp("3.11.8", "2.13.0+cpu", "CPU", "Linux x86_64", None, "abc"),
        Stamp("3.11.7", "2.14.1+cpu", "CPU", "Linux x86_64", None, "abc"),
    ):
        assert environment_key(other) != key


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("save",), "cache save needs --ci-cache DIR: the CI cache's folder"),
        (("restore",), "cache restore needs --ci-cache DIR: the CI cache's folder"),
        (("prune", "--ci-cache", "ci"), "cache prune takes no --ci-cache"),
        (("show", "--shards", "2"), "--shards is plan's"),
        (("plan", "--shards", "0"), "--shards needs at least 1, not 0"),
        (("plan", "--dry-run"), "--dry-run and --all-environments are prune's"),
    ],
)
def test_cache_usage_errors_name_what_to_give(project: Path, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    proc = cli(project, "cache", *args, cache=tmp_path / "cache")
    assert proc.returncode == 2 and f"error: {message}" in proc.stderr, proc.stderr
    assert not (tmp_path / "cache" / "results").exists()


def test_cache_save_never_replaces_what_is_not_a_ci_cache(project: Path, tmp_path: Path, probes: Path) -> None:
    cache = fresh_cache(tmp_path / "cache", probes)
    assert sphinx_build(project, tmp_path / "one", cache).statuscode == 0
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("mine too\n")
    for target in (notes, a_file):
        proc = cli(project, "cache", "save", "--ci-cache", str(target), cache=cache)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert f"error: cache save: {target} is not a CI cache folder (no index.json in it) and not an empty folder" in proc.stderr
    assert (notes / "todo.txt").read_text() == "mine\n" and a_file.read_text() == "mine too\n"
    # a CI cache is replaced whole, and an empty folder filled
    (tmp_path / "empty").mkdir()
    for target in (tmp_path / "empty", tmp_path / "empty", tmp_path / "new"):
        assert "saved 7 result(s)" in ok(cli(project, "cache", "save", "--ci-cache", str(target), cache=cache)).stdout
        assert (target / INDEX).is_file() and sorted(p.name for p in target.iterdir()) == [INDEX, "results"]
