"""A merge proves where the shards' results came from (issue 33 §4).

A manifest's SHA-256s catch an entry changed by accident, not one changed
on purpose: whoever edits an entry can write its new SHA-256 into the
manifest too, and the merged ``-W`` build was green with a wrong stated
output.  With one secret key in ``SNIPCHECK_SHARD_KEY`` every shard signs its
manifest and the merge refuses a manifest unsigned, signed with another key
or changed since; ``--check`` runs a draw of the shards' units again on the
merge's machine and refuses a result that a run here does not give.  The key
never reaches a snippet.

The project, its shards and the merge are those of ``test_shards.py``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_cache
from faults_support import sphinx_build
from helpers import snipcheck_cli
from shard_support import PAGE_B, entries, manifest, merge, project, ran, run_three, shard, write_manifest
from snipcheck.shard import check as shard_check
from snipcheck.shard import key as shard_key
from snipcheck.shard.plan import Unit
from snipcheck.sources import tags

__all__ = ["project"]  # the fixture, used by name

KEY = "k" * 8 + "0123456789abcdef0123456789abcdef"  # 48 characters
OTHER_KEY = "o" * 48


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Every shard and merge of the test started with ``KEY`` (a subprocess inherits it)."""
    monkeypatch.setenv(shard_key.KEY_VARIABLE, KEY)
    return monkeypatch


def holder(folders: list[Path], unit: str) -> Path:
    """The folder of the shard that ran ``unit``."""
    return next(f for f in folders if unit in ran(f))


def entry_of(folder: Path, snippet_id: str) -> tuple[Path, dict[str, Any]]:
    """The path of ``snippet_id``'s entry in a shard folder, and its manifest record."""
    cell = next(s for u in manifest(folder)["units"] for s in u["snippets"] if s["id"] == snippet_id)
    return next((folder / "results").rglob(f"{cell['key']}.json")), cell


def rewrite_entry(folder: Path, snippet_id: str, data: dict[str, Any]) -> None:
    """Store ``data`` as ``snippet_id``'s entry (under the key the manifest
    names) and write its SHA-256 into the manifest: a forger's work."""
    path, cell = entry_of(folder, snippet_id)
    path.write_bytes(json.dumps({**data, "key": cell["key"]}, ensure_ascii=False, separators=(",", ":")).encode())
    m = manifest(folder)
    for unit in m["units"]:
        for s in unit["snippets"]:
            if s["id"] == snippet_id:
                s["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    write_manifest(folder, m)


def printing(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """An entry whose output says ``new`` where the run printed ``old``."""
    events = data["result"]["events"]
    assert any(e["text"] == old for e in events), events
    return {**data, "result": {**data["result"], "events": [{**e, "text": new if e["text"] == old else e["text"]} for e in events]}}


def stating(root: Path, output: str) -> None:
    """Page B states ``output`` for s/d (its code prints ``d``)."""
    text = PAGE_B.replace(".. snippet:: s/d\n\n   d\n", f".. snippet:: s/d\n\n   {output}\n")
    assert text != PAGE_B
    (root / "b.rst").write_text(text)


def last_error(out: Any) -> str:
    assert out.returncode == 1, out.stdout + out.stderr
    return str(out.stderr.splitlines()[-1])


def test_a_rehashed_entry_is_refused_with_a_key_and_made_a_green_build_without(
    project: Path, tmp_path: Path, keyed: pytest.MonkeyPatch
) -> None:
    """The attack: s/d's entry says ``D`` (its code prints ``d``), its SHA-256
    written into the manifest, and the page states ``D``.  Without a key and
    without a re-run the merged -W build is green with that wrong stated
    output; with the key, the merge refuses the shard."""
    stating(project, "D")
    folders = run_three(project, tmp_path)
    assert all(manifest(f)["signature"]["key_id"] == shard_key.key_id(KEY.encode()) for f in folders)
    folder = holder(folders, "s/d")
    path, _ = entry_of(folder, "s/d")
    rewrite_entry(folder, "s/d", printing(json.loads(path.read_bytes()), "d\n", "D\n"))
    assert last_error(merge(project, tmp_path / "final-cache", *map(str, folders))) == (
        f"error: cannot merge: {folder}: its manifest.json does not match its signature: it was changed after its "
        "shard signed it (an entry's SHA-256, a key, the plan, the environment...); run that shard again, and find "
        "out what changed it"
    )
    assert entries(tmp_path / "final-cache") == []
    # the same forgery, merged without the key and without a re-run: the lie it would have been
    keyed.delenv(shard_key.KEY_VARIABLE)
    out = merge(project, tmp_path / "final-cache", *map(str, folders), "--check", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr.count(f"note: no {shard_key.KEY_VARIABLE}: this merge checks that the shards fit together") == 1
    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0 and "took 8 from the cache" in final.status, final.warnings_text


def test_an_old_revisions_result_under_the_new_key_is_refused_with_a_key_and_by_a_rerun_without(
    project: Path, tmp_path: Path, keyed: pytest.MonkeyPatch, probe_cache: Path
) -> None:
    """s/d printed ``d`` at the revision the page states; its code now prints
    ``new``.  The old revision's entry stored under the new key (its SHA-256
    in the manifest) is refused with the key, and, without one, by a run of
    it here (``--check``), which names it and shows the diff."""
    old = run_three(project, tmp_path)
    path, _ = entry_of(holder(old, "s/d"), "s/d")
    stale = json.loads(path.read_bytes())
    (project / "snippets" / "s" / "d.py").write_text("print('new')\n")
    folders = [fresh_cache(tmp_path / f"new-{k}", probe_cache) for k in (1, 2, 3)]
    for k, folder in enumerate(folders, start=1):
        assert shard(project, k, 3, folder, *(("--provides", "fakegpu") if k == 3 else ())).returncode == 0
    folder = holder(folders, "s/d")
    rewrite_entry(folder, "s/d", stale)
    assert "does not match its signature" in last_error(merge(project, tmp_path / "final-cache", *map(str, folders)))
    keyed.delenv(shard_key.KEY_VARIABLE)
    out = merge(project, tmp_path / "final-cache", *map(str, folders), "--check", "all")
    shown = f"shard {manifest(folder)['shard']['index']}/3"
    assert last_error(out) == (
        f"error: cannot merge: {folder}: {shown}'s result of s/d differs from a run of it here (the diff above): that "
        "shard did not run this code in this environment, or its folder was changed after; run it again (and if the "
        "output varies from run to run, put wildcards [..] where it does)"
    )
    assert f"error: s/d: the result {shown} stored is not what a run of it here gives:" in out.stderr
    assert "    -d\n    +new\n" in out.stderr, out.stderr
    assert entries(tmp_path / "final-cache") == []
    # without the re-run, the lie: a green merged build stating what the code no longer prints
    assert merge(project, tmp_path / "final-cache", *map(str, folders), "--check", "0").returncode == 0
    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0, final.warnings_text


def test_an_unsigned_shard_is_refused_when_the_merge_has_a_key(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders = run_three(project, tmp_path)
    assert "signature" not in manifest(folders[0])
    monkeypatch.setenv(shard_key.KEY_VARIABLE, KEY)
    assert last_error(merge(project, tmp_path / "final-cache", *map(str, folders))) == (
        f"error: cannot merge: {folders[0]}: its manifest.json is not signed, though {shard_key.KEY_VARIABLE} is set "
        f"here: a shard signs its manifest when {shard_key.KEY_VARIABLE} is set; run that shard again with the key "
        "every shard and the merge share"
    )
    # one unsigned among signed ones: named
    monkeypatch.setenv(shard_key.KEY_VARIABLE, KEY)
    assert shard(project, 1, 3, folders[0]).returncode == 0 and shard(project, 3, 3, folders[2], "--provides", "fakegpu").returncode == 0
    assert f"error: cannot merge: {folders[1]}: its manifest.json is not signed" in last_error(
        merge(project, tmp_path / "final-cache", *map(str, folders))
    )
    assert entries(tmp_path / "final-cache") == []
    # nor does record take a result from it
    page = (project / "a.rst").read_bytes()
    out = snipcheck_cli(project, "record", "--from-shard", str(folders[1]), cache=tmp_path / "cache")
    assert last_error(out).startswith(f"error: cannot record from the shard: {folders[1]}: its manifest.json is not signed")
    assert (project / "a.rst").read_bytes() == page


def test_a_shard_signed_with_another_key_is_refused(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(shard_key.KEY_VARIABLE, OTHER_KEY)
    folders = run_three(project, tmp_path)
    monkeypatch.setenv(shard_key.KEY_VARIABLE, KEY)
    theirs, ours = shard_key.key_id(OTHER_KEY.encode()), shard_key.key_id(KEY.encode())
    assert theirs != ours
    assert last_error(merge(project, tmp_path / "final-cache", *map(str, folders))) == (
        f"error: cannot merge: {folders[0]}: its manifest.json is signed with another key (key id {theirs}; the key "
        f"here has id {ours}): give every shard and the merge the same {shard_key.KEY_VARIABLE}, then run that shard "
        "again"
    )
    # a forger who writes the right key id into a signature made with another key is refused all the same
    data = manifest(folders[0])
    data["signature"]["key_id"] = ours
    write_manifest(folders[0], data)
    assert "does not match its signature" in last_error(merge(project, tmp_path / "final-cache", *map(str, folders)))
    # the shards signed with the merge's key are merged, and the merge says so
    folders = run_three(project, tmp_path)
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"signatures: every shard's manifest is signed with this merge's key (key id {ours})" in out.stdout
    assert "note: no " not in out.stderr


SEES = """\
import hashlib, os
print(sorted(os.environ))
found = []
for pid in os.listdir("/proc"):
    try:
        block = open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        continue
    for entry in block.split(b"\\0"):
        name, _, value = entry.partition(b"=")
        if name == b"SNIPCHECK_SHARD_KEY" and hashlib.sha256(value).hexdigest() == "%s":
            found.append(pid)
print("the key in a process's environment:", "yes" if found else "no")
"""


def test_the_key_reaches_no_snippet(project: Path, tmp_path: Path, keyed: pytest.MonkeyPatch) -> None:
    """A snippet run by a shard and again by the merge (``--check all``),
    both started with the key, prints its ``os.environ`` and looks for the
    key in every process's environment it can read (``/proc/*/environ``):
    it finds it nowhere, and the manifest's environment says nothing of it."""
    (project / "snippets" / "s" / "e.py").write_text(SEES % hashlib.sha256(KEY.encode()).hexdigest())
    folders = run_three(project, tmp_path)
    path, _ = entry_of(holder(folders, "s/e"), "s/e")
    printed = "".join(e["text"] for e in json.loads(path.read_bytes())["result"]["events"])
    names = ast.literal_eval(printed.splitlines()[0])  # the snippet's sorted(os.environ)
    assert "PATH" in names and shard_key.KEY_VARIABLE not in names, printed
    assert printed.splitlines()[1] == "the key in a process's environment: no", printed
    text = (holder(folders, "s/e") / "manifest.json").read_text()
    assert shard_key.KEY_VARIABLE not in text and KEY not in text
    out = merge(project, tmp_path / "final-cache", *map(str, folders), "--check", "all")
    assert out.returncode == 0, out.stdout + out.stderr  # the run here printed the same: no key there either
    assert re.search(r"^check: ran 6 of the shards' 6 unit\(s\) this machine can run again here \(every one\)", out.stdout, re.MULTILINE)
    # nor can a snippet ask for it
    assert tags.variable_problem(shard_key.KEY_VARIABLE)


def test_taking_the_key_removes_it_from_the_process_environment_others_read() -> None:
    """``/proc/<pid>/environ`` shows a process's initial environment, which
    ``del os.environ[...]`` leaves as it was: the key is overwritten there."""
    code = (
        "import os, sys\nfrom snipcheck.shard.key import take_key\n"
        f"assert take_key() == {KEY.encode()!r}\n"
        "assert 'SNIPCHECK_SHARD_KEY' not in os.environ\nprint('taken', flush=True)\nsys.stdin.readline()\n"
    )  # fmt: skip
    env = {**os.environ, shard_key.KEY_VARIABLE: KEY}
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "taken\n"
        block = Path(f"/proc/{child.pid}/environ").read_bytes()
        assert KEY.encode() not in block
    finally:
        child.communicate("\n", timeout=60)
    assert child.returncode == 0


def test_a_short_key_is_refused_naming_how_to_make_one(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(shard_key.KEY_VARIABLE, "secret")
    out = shard(project, 1, 3, tmp_path / "one")
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.splitlines()[-1] == (
        f"error: {shard_key.KEY_VARIABLE} holds 6 characters, and a key needs at least 32 random ones (a short one is "
        f"guessed from a signed manifest): make one with {shard_key.MAKE_KEY}"
    )
    assert not (tmp_path / "one" / "manifest.json").exists()
    # an empty one (a pull request from a fork gets an empty secret) is no key
    monkeypatch.setenv(shard_key.KEY_VARIABLE, "")
    folders = run_three(project, tmp_path)
    assert "signature" not in manifest(folders[0])


def test_the_default_check_draws_a_few_of_the_fastest_and_a_seed_draws_them_again(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 0, out.stdout + out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("check: "))
    m = re.fullmatch(
        r"check: ran 5 of the shards' 6 unit\(s\) this machine can run again here \(drawn from the 5 fastest with seed "
        r"(\d+); --check-seed \1 draws them again\): (.+); each gave the shard's output",
        line,
    )
    assert m, line
    again = merge(project, tmp_path / "final-cache", *map(str, folders), "--check-seed", m.group(1))
    assert again.returncode == 0 and line in again.stdout.splitlines(), again.stdout


def test_a_draw_takes_the_faster_half_of_what_can_run_here_and_a_seed_repeats_it() -> None:
    units = [Unit(f"u{i}", (f"u{i}",)) for i in range(10)] + [Unit("gpu", ("gpu",), ("cuda",))]
    durations = {f"u{i}": float(10 - i) for i in range(10)}  # u9 the fastest
    eligible = {f"u{i}" for i in range(10)}
    first = shard_check.draw(units, eligible, durations, 3, seed=7)
    assert first == shard_check.draw(list(reversed(units)), eligible, durations, 3, seed=7)
    assert first.eligible == 10 and first.pool == 5 and len(first.units) == 3
    assert set(first.units) <= {"u5", "u6", "u7", "u8", "u9"}
    seen = {u for seed in range(50) for u in shard_check.draw(units, eligible, durations, 3, seed).units}
    assert seen == {"u5", "u6", "u7", "u8", "u9"}  # every unit of the pool can be drawn
    assert shard_check.draw(units, eligible, durations, None, seed=1).units == tuple(sorted(eligible))
    assert shard_check.draw(units, {"u0"}, durations, 3, seed=1).units == ("u0",)
    assert shard_check.draw(units, set(), durations, 3, seed=1).units == ()
    assert shard_check.draw(units, eligible, durations, 8, seed=1).pool == 8  # never fewer than asked for


def test_a_signature_covers_the_whole_manifest() -> None:
    key = KEY.encode()
    data = {"schema": "snipcheck-shard/1", "plan": "abc", "units": [{"id": "u", "snippets": [{"sha256": "00"}]}], "wall": 1.5}
    signed = {**data, "signature": shard_key.sign(data, key)}
    shard_key.verify(json.loads(json.dumps(signed, indent=3)), key)  # whatever the file's layout
    for change in ({"plan": "abd"}, {"wall": 1.25}, {"units": [{"id": "u", "snippets": [{"sha256": "01"}]}]}, {"extra": 1}):
        with pytest.raises(shard_key.SignatureError, match="does not match its signature"):
            shard_key.verify({**signed, **change}, key)
    with pytest.raises(shard_key.SignatureError, match="damaged signature"):
        shard_key.verify({**data, "signature": "x"}, key)


def test_a_refused_check_lets_every_run_end_before_it_removes_their_folder(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The re-runs write into a cache folder of their own, removed after:
    a refusal at one cell that closed the runner while later cells still ran
    removed the folder under a run writing there, and the merge said
    ``Directory not empty: 'results'`` instead of the refusal (seen once in 40
    runs of this file beside two busy processes).  The check now waits for
    every run's outcome, then closes the runner, then judges."""
    from snipcheck.app import cli
    from snipcheck.engine.execute import Executor

    folders = run_three(project, tmp_path)
    folder = holder(folders, "s/d")
    path, _ = entry_of(folder, "s/d")
    rewrite_entry(folder, "s/d", printing(json.loads(path.read_bytes()), "d\n", "D\n"))
    events: list[tuple[int, str]] = []
    outcome, close = Executor.outcome, Executor.close

    def watched_outcome(self: Executor, snippet: Any) -> Any:
        events.append((id(self), snippet.id))
        return outcome(self, snippet)

    def watched_close(self: Executor) -> None:
        events.append((id(self), "close"))
        close(self)

    monkeypatch.setattr(Executor, "outcome", watched_outcome)
    monkeypatch.setattr(Executor, "close", watched_close)
    monkeypatch.setenv("SNIPCHECK_CACHE_DIR", str(tmp_path / "final-cache"))
    status = cli.main(["--root", str(project), "execute", "--merge", *map(str, folders), "--check", "all"])
    err = capsys.readouterr().err
    assert status == 1 and f"{folder}: shard" in err and "'s result of s/d differs from a run of it here" in err, err
    checker = next(who for who, what in events if what == "s/d")
    seen = [what for who, what in events if who == checker]
    assert seen[-1] == "close" and set(seen[:-1]) == {"s/a", "s/b", "s/one", "s/two", "s/c", "s/d", "s/e"}, seen
