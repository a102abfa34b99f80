"""A build on several machines (issue 24 §1): ``snipcheck execute --shard K/N``,
``snipcheck execute --merge`` and a final build that runs nothing.

A small project of its own (the subprocess runner; snippets that print and
sleep a little, a chain, one snippet that needs a fake requirement
``fakegpu``) is run as three shards, merged, and built with
``snipcheck_execute = "merged"``; each refusal of the merge is checked
word for word, with the cache left untouched.  The plan itself
(:mod:`snipcheck.shard.plan`) is tested as a pure function.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_cache
from faults_support import sphinx_build
from helpers import html, snipcheck_cli
from shard_support import (
    PAGE_B,
    SOURCES,
    entries,
    manifest,
    merge,
    other_environment,
    project,  # noqa: F401 - a fixture
    ran,
    requirement_shard,
    run_three,
    shard,
    write_manifest,
)
from snipcheck.model import Snippet, Stamp
from snipcheck.run.requirements import routed
from snipcheck.shard.files import MERGED, read_timings
from snipcheck.shard.plan import DEFAULT_SECONDS, Unit, plan, units
from snipcheck.sources.tags import Tags


def panels(outdir: Path) -> dict[str, list[str]]:
    """The output panels of each built page, as text."""
    found = {}
    for page in ("a", "b"):
        soup = html(outdir / f"{page}.html")
        found[page] = [str(panel) for panel in soup.select("div.snipcheck-output")]
    return found


def test_three_shards_merge_and_the_final_build_runs_nothing(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    # every unit ran in exactly one shard; the chain whole; the fakegpu one where it is provided
    every = [u for folder in folders for u in ran(folder)]
    assert sorted(every) == sorted(["s/a", "s/b", "chain:a:steps", "s/c", "s/d", "s/gpu", "s/e"])
    assert "s/gpu" in ran(folders[2])
    chain = next(u for f in folders for u in manifest(f)["units"] if u["id"] == "chain:a:steps")
    assert [s["id"] for s in chain["snippets"]] == ["s/one", "s/two"]
    for k, folder in enumerate(folders, start=1):
        m = manifest(folder)
        assert m["schema"] == "snipcheck-shard/1" and m["shard"] == {"index": k, "count": 3}
        assert m["wall"] > 0 and all(s["status"] == "ok" for u in m["units"] for s in u["snippets"])
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 0, out.stdout + out.stderr
    for k, folder in enumerate(folders, start=1):
        assert re.search(rf"^shard {k}/3 \({re.escape(str(folder))}\): \d+ result\(s\), \d+\.\d\d s wall$", out.stdout, re.MULTILINE)
    assert re.search(r"^spread: \d+\.\d\d s \(slowest shard \d+\.\d\d s, fastest \d+\.\d\d s\)$", out.stdout, re.MULTILINE)
    assert "merged 8 result(s) from 3 shard(s)" in out.stdout
    timings = read_timings(project / "snipcheck-timings.json")
    assert set(timings) == {"s/a", "s/b", "chain:a:steps", "s/c", "s/d", "s/gpu", "s/e"}
    assert timings["s/a"] >= 0.3
    record = json.loads((tmp_path / "final-cache" / MERGED).read_text())
    assert record["count"] == 3 and record["provides"] == ["fakegpu"] and len(record["keys"]) == 8

    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0, final.status + final.warnings_text
    assert "; this build ran 0, took 8 from the cache" in final.status
    assert "taking the merged shards' results... " in final.status and "running snippets" not in final.status
    counts = {k: len([u for u in manifest(folders[k - 1])["units"] for _ in u["snippets"]]) for k in (1, 2, 3)}
    words = ", ".join(f"{counts[k]} result{'s' if counts[k] != 1 else ''} from shard {k}/3" for k in (1, 2, 3))
    assert words + ", 0 runnable snippets without a result (this build runs nothing)" in final.status
    report = json.loads((final.report_dir / "report.json").read_text())
    assert report["execution"]["runs"] == 0
    assert {s["origin"] for s in report["snippets"]} == {"cache"}
    # the pages are those of one machine's build (it provides fakegpu, as the shards did)
    single = sphinx_build(project, tmp_path / "single", tmp_path / "cache", {"snipcheck_provides": ["fakegpu"]})
    assert single.statuscode == 0, single.status + single.warnings_text
    assert "; this build ran 8, took 0 from the cache" in single.status
    assert panels(final.outdir) == panels(single.outdir)
    assert panels(final.outdir)["b"]  # the panels were found


def test_a_merged_build_fails_for_a_snippet_no_shard_ran(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    assert merge(project, tmp_path / "final-cache", *map(str, folders)).returncode == 0
    (project / "snippets" / "s" / "d.py").write_text("print('d')\nprint('new line')\n")  # edited after the merge
    final = sphinx_build(
        project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged", "snipcheck_fail_on_drift": False}
    )
    assert final.statuscode == 1
    assert "1 runnable snippet without a result (this build runs nothing)" in final.status
    assert "s/d: no result" in final.warnings_text
    assert "; this build ran 0," in final.status


def _refused(project: Path, tmp_path: Path, folders: list[Path], message: str, *extra: str) -> None:
    cache = tmp_path / "final-cache"
    before = entries(cache)
    timings = project / "snipcheck-timings.json"
    had = timings.read_bytes() if timings.exists() else None
    out = merge(project, cache, *map(str, folders), *extra)
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stderr.splitlines()[-1] == f"error: cannot merge: {message}"
    assert entries(cache) == before == []
    assert (timings.read_bytes() if timings.exists() else None) == had


def test_merge_refuses_a_missing_shard(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    _refused(project, tmp_path, folders[:2], "shard 3/3 missing: give the --out folder of each of the 3 shards")


def test_merge_refuses_a_shard_given_twice(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(folders[1], copy)
    _refused(
        project, tmp_path, [*folders, copy],
        f"{copy}: shard 2/3 given twice (also {folders[1]}): give each shard's folder once",
    )  # fmt: skip


def test_merge_refuses_a_shard_of_another_revision(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    before = manifest(folders[0])["fingerprint"]
    (project / "snippets" / "s" / "e.py").write_text("print('e')  # edited\n")
    now = manifest(folders[0])["fingerprint"]
    assert now == before
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    match = re.fullmatch(
        rf"error: cannot merge: {re.escape(str(folders[0]))}: shard 1/3 ran another revision of the pages and snippets "
        rf"\(fingerprint {before}, this checkout (\w+)\): run it again on this checkout",
        out.stderr.splitlines()[-1],
    )
    assert match and match.group(1) != before, out.stderr
    assert entries(tmp_path / "final-cache") == []


def test_merge_refuses_a_shard_of_another_environment(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    data = manifest(folders[1])
    here = dict(data["stamp"])
    data["stamp"]["env"] = "0123456789ab"
    write_manifest(folders[1], data)

    def env(stamp: dict[str, Any]) -> str:
        parts = [f"{n} {stamp[n]}" for n in ("python", "torch", "device", "platform", "rustc") if stamp.get(n)]
        return ", ".join(parts) + f", environment {stamp['env']}"

    _refused(
        project, tmp_path, folders,
        f"{folders[1]}: shard 2/3 ran in another environment ({env(data['stamp'])}; here {env(here)}): "
        "run every shard and the merge in one environment (only a shard started with --provides may run "
        "in one of its own)",
    )  # fmt: skip


def test_merge_refusing_another_environment_names_what_differs(project: Path, tmp_path: Path) -> None:
    """The refusal of a shard of another environment says what differs: the
    manifest holds what its environment id was made from (distributions,
    interpreter, sys.path, a digest of each passed-through variable's value,
    never the value)."""
    folders = run_three(project, tmp_path)
    data = manifest(folders[1])
    described = data["environment"]
    assert described["variables"]["PATH"] != os.environ["PATH"] and len(described["variables"]["PATH"]) == 12
    numpy = described["distributions"]["numpy"]
    data["stamp"]["env"] = "0123456789ab"
    described["distributions"] = {**described["distributions"], "numpy": "1.0.0", "left-pad": "0.1"}
    described["variables"] = {**described["variables"], "PATH": "000000000000"}
    write_manifest(folders[1], data)
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 1, out.stdout + out.stderr
    last = out.stderr.splitlines()[-1]
    assert f"; it differs in: numpy 1.0.0 there, {numpy} here; variable PATH; only there: left-pad 0.1): run every" in last
    # an older manifest, without the description, is refused as before: by its id
    del data["environment"]
    write_manifest(folders[1], data)
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 1 and "ran in another environment" in out.stderr and "differs in" not in out.stderr


def test_a_provides_shard_may_run_in_an_environment_of_its_own_and_its_pages_name_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 24 §1: the shard that provides ``fakegpu`` runs on "another
    machine" (another interpreter: a fresh virtual environment without torch,
    so its stamp differs from the merge's); the merge takes its results,
    keyed by its stamp; the final build takes them from the cache, runs
    nothing, and the page of the snippet that needed it names the
    environment it ran in, not the build's."""
    other = other_environment(project, tmp_path)
    folders = [tmp_path / "one", tmp_path / "two", tmp_path / "three"]
    for k, folder in enumerate(folders[:2], start=1):
        assert shard(project, k, 3, folder).returncode == 0
    monkeypatch.setenv("SHARD_PYTHON", str(other / "bin" / "python"))
    gpu = shard(project, 3, 3, folders[2], "--provides", "fakegpu")
    monkeypatch.delenv("SHARD_PYTHON")
    assert gpu.returncode == 0, gpu.stdout + gpu.stderr
    there, here = manifest(folders[2])["stamp"], manifest(folders[0])["stamp"]
    assert there != here and there["torch"] is None, (there, here)
    assert "s/gpu" in ran(folders[2])

    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 0, out.stdout + out.stderr
    label = f"Python {there['python']} · {there['device']}"
    assert f"shard 3/3 ran in an environment of its own: {label}; its pages say so" in out.stdout
    record = json.loads((tmp_path / "final-cache" / MERGED).read_text())
    assert record["shards"]["3"]["stamp"] == there and record["shards"]["1"]["stamp"] == here
    assert set(record["elsewhere"]) == {s["id"] for u in manifest(folders[2])["units"] for s in u["snippets"]}

    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0, final.status + final.warnings_text
    assert "; this build ran 0, took 8 from the cache" in final.status
    assert f"from shard 3/3 (run in {label})" in final.status
    assert "0 runnable snippets without a result" in final.status
    stamps = {}
    for page in ("a", "b"):
        for block in html(final.outdir / f"{page}.html").select("div.snipcheck-snippet"):
            stamp = block.select_one("p.snipcheck-stamp")
            if stamp is not None and block.get("id"):
                stamps[block["id"]] = stamp.get_text(" ", strip=True)
    gpu_stamp = next(text for sid, text in stamps.items() if "gpu" in sid)
    assert label in gpu_stamp and "torch" not in gpu_stamp, stamps
    others = [text for sid, text in stamps.items() if "gpu" not in sid and "torch" in text]
    assert others, stamps  # the shards that ran here: the build's own environment (torch in it)
    # a shard without --provides in that environment is still refused
    again = tmp_path / "two-elsewhere"
    monkeypatch.setenv("SHARD_PYTHON", str(other / "bin" / "python"))
    assert shard(project, 2, 3, again).returncode == 0
    monkeypatch.delenv("SHARD_PYTHON")
    out = merge(project, tmp_path / "cache", str(folders[0]), str(again), str(folders[2]))
    assert out.returncode == 1 and "shard 2/3 ran in another environment" in out.stderr, out.stderr
    # ... naming what differs, from what each environment id was made from
    ours, theirs = manifest(folders[0])["environment"], manifest(again)["environment"]
    only_here = sorted(set(ours["distributions"]) - set(theirs["distributions"]))
    assert "torch" in only_here and len(only_here) > 3
    assert f"; it differs in: interpreter {other / 'bin' / 'python'} there, " in out.stderr, out.stderr
    first = ", ".join(f"{d} {ours['distributions'][d]}" for d in only_here[:3])
    assert f"; only here: {first} and {len(only_here) - 3} more" in out.stderr, out.stderr


def test_merge_refuses_a_unit_run_in_two_shards(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    one, two = manifest(folders[0]), manifest(folders[1])
    stolen = one["units"][0]
    two["units"].append(stolen)
    write_manifest(folders[1], two)
    _refused(
        project, tmp_path, folders,
        f"{folders[1]}: shard 2/3 ran {stolen['id']}, which shard 1/3 ({folders[0]}) ran too: "
        "a snippet must run once; run both shards again on one commit",
    )  # fmt: skip


def test_merge_refuses_a_unit_run_in_no_shard(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    data = manifest(folders[0])
    dropped = data["units"].pop()
    write_manifest(folders[0], data)
    _refused(
        project, tmp_path, folders,
        f"{folders[0]}: shard 1/3 did not run {dropped['id']}, which the plan gives it: run that shard again",
    )  # fmt: skip


def test_the_fakegpu_snippet_runs_only_where_provided_and_merge_needs_it_or_not_run(project: Path, tmp_path: Path) -> None:
    folders = [tmp_path / "one", tmp_path / "two", tmp_path / "three"]
    for k, folder in enumerate(folders, start=1):
        assert shard(project, k, 3, folder).returncode == 0
    assert "s/gpu" not in [u for f in folders for u in ran(f)]
    assert all(m["provides"] == [] for m in map(manifest, folders))
    _refused(
        project, tmp_path, folders,
        "s/gpu needs fakegpu, which no shard provides: start a shard with --provides fakegpu, "
        "or merge with --not-run fakegpu to build without it",
    )  # fmt: skip
    out = merge(project, tmp_path / "final-cache", *map(str, folders), "--not-run", "fakegpu")
    assert out.returncode == 0, out.stderr
    assert "merged 7 result(s) from 3 shard(s)" in out.stdout and "not run here on purpose: s/gpu" in out.stdout
    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0, final.status + final.warnings_text
    assert "1 not run here (needs fakegpu)" in final.status and "this build ran 0, took 7 from the cache" in final.status
    # the shard that provides it runs it, and only that one
    again = tmp_path / "again"
    fresh = shard(project, 2, 3, again, "--provides", "fakegpu")
    assert fresh.returncode == 0 and "s/gpu" in ran(again) and manifest(again)["provides"] == ["fakegpu"]


def test_merge_refuses_two_shards_providing_one_requirement(project: Path, tmp_path: Path) -> None:
    folders = [tmp_path / "one", tmp_path / "two", tmp_path / "three"]
    for k, folder in enumerate(folders, start=1):
        assert shard(project, k, 3, folder, *(("--provides", "fakegpu") if k > 1 else ())).returncode == 0
    assert "s/gpu" in ran(folders[1]) and "s/gpu" in ran(folders[2])
    _refused(
        project, tmp_path, folders,
        f"{folders[2]}: shard 3/3 provides fakegpu, as does shard 2/3 ({folders[1]}): give --provides fakegpu to one shard only",
    )  # fmt: skip


def test_a_snippet_that_fails_in_its_shard_has_no_result_and_the_merge_says_so(project: Path, tmp_path: Path) -> None:
    (project / "snippets" / "s" / "e.py").write_text("raise ValueError('boom')\n")
    folders = [tmp_path / "one", tmp_path / "two", tmp_path / "three"]
    outs = [shard(project, k, 3, f, *(("--provides", "fakegpu") if k == 3 else ())) for k, f in enumerate(folders, 1)]
    k = next(k for k, f in enumerate(folders, 1) if "s/e" in ran(f))
    assert outs[k - 1].returncode == 1 and "error: s/e: raised ValueError: boom" in outs[k - 1].stderr
    (cell,) = [s for u in manifest(folders[k - 1])["units"] if u["id"] == "s/e" for s in u["snippets"]]
    assert cell["status"] == "failed"
    cache = tmp_path / "final-cache"
    out = merge(project, cache, *map(str, folders))
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1].startswith(
        f"error: cannot merge: {folders[k - 1]}: s/e has no result in shard {k}/3 (it raised ValueError: boom"
    )
    assert out.stderr.splitlines()[-1].endswith("): fix it, then run that shard again")
    assert entries(cache) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --shard K/N --out DIR (run one shard), --provides NAME --out DIR (run what needs NAME) "
             "or --merge DIR... (merge the shards)"),
        (("--shard", "1/2"), "--shard needs --out DIR, and takes no --not-run (that is the merge's)"),
        (("--merge", "x", "--provides", "fakegpu"), "--merge takes no --out or --provides (those are a shard's)"),
        (("--shard", "3/2", "--out", "x"), "bad shard '3/2': write k/n with 1 <= k <= n, e.g. 2/8"),
    ],
)
def test_execute_usage_errors(project: Path, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    out = snipcheck_cli(project, "execute", *args, cache=tmp_path / "cache")
    assert out.returncode == 2 and out.stderr.splitlines()[-1] == f"error: {message}"


def test_execute_refuses_an_unknown_requirement(project: Path, tmp_path: Path) -> None:
    out = snipcheck_cli(project, "execute", "--shard", "1/2", "--out", "x", "--provides", "fakegpo", cache=tmp_path / "cache")
    assert out.returncode == 2 and "unknown requirement 'fakegpo'" in out.stderr
    assert not (project / "x").exists()


def test_execute_refuses_provides_cuda_where_torch_sees_no_gpu(project: Path, tmp_path: Path) -> None:
    out = snipcheck_cli(project, "execute", "--shard", "1/2", "--out", "x", "--provides", "cuda", cache=tmp_path / "cache")
    assert out.returncode == 2, out.stdout + out.stderr
    assert re.fullmatch(
        r"error: --provides cuda, but the snippet interpreter's torch sees no CUDA device here \(.* · CPU\): "
        r"start this shard on a machine with a GPU, or route a feature of your own \(snipcheck_requirements\)",
        out.stderr.splitlines()[-1],
    ), out.stderr
    assert not (project / "x").exists()


def test_cuda_and_the_projects_own_names_are_routed_alike_on_a_gpu_machine_and_a_cpu_one() -> None:
    """Every shard plans alike only if a unit's routed requirements do not
    depend on the machine: a GPU shard must not take a ``cuda`` unit for a
    free one while the CPU shards route it (their plans would differ)."""
    cpu = Stamp("3.11.7", "2.13.0+cpu", "CPU", "Linux x86_64")
    gpu = Stamp("3.11.7", "2.15.0+cu128", "CUDA (NVIDIA H200)", "Linux x86_64")
    needs = ("cuda", "fakegpu", "torch>=2.14")
    assert routed(needs, cpu, (), ("fakegpu",)) == ("cuda", "fakegpu", "torch>=2.14")
    assert routed(needs, gpu, (), ("fakegpu",)) == ("cuda", "fakegpu")  # a torch specifier: as this machine meets it
    assert routed(needs, gpu, ("fakegpu",), ("fakegpu",)) == ("cuda",)  # snipcheck_provides: the same on every machine
    assert routed(("cuda",), gpu, ("cuda",)) == ()


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs a Rust toolchain")
def test_a_rust_snippet_is_keyed_alike_by_its_shard_the_merge_and_the_merged_build(project: Path, tmp_path: Path) -> None:
    (project / "snippets" / "s" / "rust.rs").write_text('fn main() {\n    println!("hello from rust");\n}\n')
    (project / "b.rst").write_text(PAGE_B + "\n.. snippet:: s/rust\n\n   hello from rust\n")
    folders = run_three(project, tmp_path)
    assert "s/rust" in [u for f in folders for u in ran(f)]
    out = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert out.returncode == 0, out.stderr
    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0, final.status + final.warnings_text
    assert "this build ran 0, took 9 from the cache" in final.status


# --- the plan, a pure function ---------------------------------------------------------


def _units(*specs: tuple[str, tuple[str, ...]]) -> list[Unit]:
    return [Unit(uid, (uid,), req) for uid, req in specs]


def test_lpt_packs_longest_first_onto_the_least_loaded_shard() -> None:
    found = plan(_units(("a", ()), ("b", ()), ("c", ()), ("d", ()), ("e", ())), 2, {"a": 5, "b": 4, "c": 3, "d": 3, "e": 2})
    # a→1 (0 vs 0: the lower shard), b→2, c→2 (4 < 5), d→1 (5 < 7), e→2 (7 < 8)
    assert dict(found.assignment) == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 2}
    assert found.loads == (8.0, 9.0) and found.spread == 1.0


def test_plan_is_the_same_in_any_input_order_and_ties_go_by_id() -> None:
    specs = [(f"u{i}", ()) for i in range(9)]
    one = plan(_units(*specs), 3, {})
    two = plan(list(reversed(_units(*specs))), 3, {})
    assert dict(one.assignment) == dict(two.assignment) and one.digest == two.digest
    # every unit unknown: DEFAULT_SECONDS each, dealt out by id
    assert dict(one.assignment) == {f"u{i}": i % 3 + 1 for i in range(9)}
    assert one.loads == (3 * DEFAULT_SECONDS,) * 3


def test_routed_units_go_only_to_a_shard_that_provides_them_and_leave_the_rest_alone() -> None:
    all_units = _units(("a", ()), ("b", ()), ("g", ("fakegpu",)), ("h", ("fakegpu", "other")))
    bare = plan(all_units, 2, {"a": 2, "b": 1, "g": 9})
    routed = plan(all_units, 2, {"a": 2, "b": 1, "g": 9}, {2: {"fakegpu"}})
    assert bare.assignment["g"] is None and routed.assignment["g"] == 2
    assert routed.assignment["h"] is None  # no shard provides both
    assert {u: routed.assignment[u] for u in "ab"} == {u: bare.assignment[u] for u in "ab"}
    assert routed.digest == bare.digest  # the part every shard computes alike


def test_units_keep_a_chain_whole_and_know_its_cells_a_build_would_still_run() -> None:
    def cell(sid: str, chain: str = "", requires: tuple[str, ...] = ()) -> Snippet:
        return Snippet(sid, f"{sid}.py", f"/{sid}.py", "python", "", "", 1, Tags(requires=requires), chain=chain)

    found = units(
        [cell("x"), cell("c1", "p:steps"), cell("c2", "p:steps", ("fakegpu",)), cell("c3", "p:steps"), cell("x")],
        lambda s: tuple(r for r in s.tags.requires if r == "fakegpu"),
    )
    assert found == [
        Unit("chain:p:steps", ("c1", "c2", "c3"), ("fakegpu",), ("c1",)),
        Unit("x", ("x",)),
    ]


def test_plan_digest_changes_with_the_timings() -> None:
    specs = _units(("a", ()), ("b", ()), ("c", ()))
    assert plan(specs, 2, {"a": 1, "b": 2, "c": 3}).digest != plan(specs, 2, {"a": 3, "b": 2, "c": 1}).digest


def test_record_from_shard_writes_what_a_shard_elsewhere_ran_for_a_cell_this_machine_cannot_run(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 24 §1: a cell that needs what this machine lacks (``fakegpu``)
    is recorded from the result a ``--provides`` shard left in its folder,
    run in an environment of its own, with no hand-editing; the page names
    that environment (``stated-env``)."""
    other = other_environment(project, tmp_path)
    page = project / "b.rst"
    page.write_text(PAGE_B.replace("   on the fake gpu\n", "   stale text\n"))
    here = snipcheck_cli(project, "record", "s/gpu", cache=tmp_path / "cache")
    assert here.returncode == 0 and "s/gpu: not run here (lacks fakegpu); left as is" in here.stdout, here.stdout + here.stderr
    assert "stale text" in page.read_text()
    monkeypatch.setenv("SHARD_PYTHON", str(other / "bin" / "python"))
    gpu = requirement_shard(project, tmp_path / "three", "fakegpu")
    assert gpu.returncode == 0, gpu.stdout + gpu.stderr
    monkeypatch.delenv("SHARD_PYTHON")
    there = manifest(tmp_path / "three")["stamp"]
    label = f"Python {there['python']} · {there['device']}"
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and p.suffix in (".rst", ".py")}

    missing = snipcheck_cli(project, "record", "--from-shard", str(tmp_path / "three"), "s/a", cache=tmp_path / "cache")
    assert missing.returncode == 1 and missing.stderr.splitlines()[-1] == (
        f"error: s/a: no result in {tmp_path / 'three'}: no shard there ran it, or it failed there; "
        "give the folder of the shard that ran it"
    ), missing.stderr
    assert {p: p.read_bytes() for p in before} == before

    out = snipcheck_cli(project, "record", "--from-shard", str(tmp_path / "three"), "s/gpu", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"s/gpu: recorded from the shard for fakegpu ({label}) (run once there" in out.stdout
    text = page.read_text()
    assert "stale text" not in text and "   on the fake gpu\n" in text
    assert f":stated-env: {label} · {there['platform']}" in text
    assert {p: p.read_bytes() for p in before if p != page} == {p: b for p, b in before.items() if p != page}

    # a shard of another revision is refused, and nothing is written
    (project / "snippets" / "s" / "gpu.py").write_text(SOURCES["s/gpu"] + "print('edited')\n")
    kept = page.read_bytes()
    stale = snipcheck_cli(project, "record", "--from-shard", str(tmp_path / "three"), cache=tmp_path / "cache")
    assert stale.returncode == 1 and "the shard for fakegpu ran another revision of the pages and snippets" in stale.stderr
    assert page.read_bytes() == kept


def test_a_requirement_shard_runs_only_what_needs_what_it_provides_and_merges_with_the_n(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 24 §1: ``execute --provides fakegpu`` without ``--shard`` (the
    GPU machine of a CI matrix, here another interpreter) runs the one
    snippet that needs it and nothing else, so no output of a snippet that
    needs nothing is made in its environment; two ``--shard K/2`` run the
    rest; the merge takes the three, and the final build runs nothing."""
    other = other_environment(project, tmp_path)
    one, two, gpu = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    assert shard(project, 1, 2, one).returncode == 0 and shard(project, 2, 2, two).returncode == 0
    assert "s/gpu" not in ran(one) + ran(two)
    assert sorted(ran(one) + ran(two)) == ["chain:a:steps", "s/a", "s/b", "s/c", "s/d", "s/e"]
    monkeypatch.setenv("SHARD_PYTHON", str(other / "bin" / "python"))
    out = requirement_shard(project, gpu, "fakegpu")
    monkeypatch.delenv("SHARD_PYTHON")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("the shard for fakegpu: 1 unit(s), 1 snippet(s) (1 ran, 0 already in ")
    assert ran(gpu) == ["s/gpu"] and manifest(gpu)["shard"] == {"index": 0, "count": 0}

    # the merge refuses it where it ran what it should not, or not what it should
    data = manifest(gpu)
    stolen = manifest(one)["units"][0]
    write_manifest(gpu, {**data, "units": [*data["units"], stolen]})
    _refused(
        project, tmp_path, [one, two, gpu],
        f"{gpu}: the shard for fakegpu ran {stolen['id']}, which shard 1/2 ({one}) ran too: "
        "a snippet must run once; run both shards again on one commit",
    )  # fmt: skip
    write_manifest(gpu, {**data, "units": []})
    _refused(
        project, tmp_path, [one, two, gpu],
        f"{gpu}: the shard for fakegpu did not run s/gpu, which needs fakegpu: run that shard again",
    )  # fmt: skip
    write_manifest(gpu, data)
    _refused(
        project, tmp_path, [gpu],
        "no --shard K/N folder given, only requirement shards (--provides without --shard, which run only what "
        "needs what they provide): give the --out folder of each --shard K/N run too",
    )  # fmt: skip

    out = merge(project, tmp_path / "final-cache", str(one), str(two), str(gpu))
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(rf"^the shard for fakegpu \({re.escape(str(gpu))}\): 1 result\(s\), \d+\.\d\d s wall$", out.stdout, re.MULTILINE)
    assert "the shard for fakegpu ran in an environment of its own: Python " in out.stdout
    assert "merged 8 result(s) from 3 shard(s)" in out.stdout
    final = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert final.statuscode == 0, final.status + final.warnings_text
    assert "; this build ran 0, took 8 from the cache" in final.status
    assert "1 result from the shard for fakegpu (run in Python " in final.status, final.status
    # a drift there is recorded from that shard's folder: record here cannot run it
    (project / "b.rst").write_text(PAGE_B.replace("   on the fake gpu\n", "   stale text\n"))
    drifted = sphinx_build(project, tmp_path / "final", tmp_path / "final-cache", {"snipcheck_execute": "merged"})
    assert drifted.statuscode == 1
    assert f"if the new output is right, record it: snipcheck record --from-shard {gpu} s/gpu" in drifted.warnings_text


def test_a_merged_build_judges_every_page_anew_whatever_an_earlier_build_kept(
    project: Path, tmp_path: Path, probe_cache: Path
) -> None:
    """A merged build's results come from the last merge, not the sources:
    one that keeps an earlier build's doctrees must not show what that build
    took (a helper's green that lied: a new merge, an emptied cache, a
    requirement now merged as not run, and the pages stayed as they were)."""
    folders = run_three(project, tmp_path)
    cache = tmp_path / "final-cache"
    assert merge(project, cache, *map(str, folders)).returncode == 0
    merged = {"snipcheck_execute": "merged"}
    first = sphinx_build(project, tmp_path / "final", cache, merged)
    assert first.statuscode == 0 and "this build ran 0, took 8 from the cache" in first.status, first.warnings_text
    # merged again without the shard that provided fakegpu: s/gpu is not run here now
    out = merge(project, cache, *map(str, folders[:2]), "--not-run", "fakegpu")
    assert out.returncode == 1  # shard 3/3 is one of the three: it cannot be left out
    again = [tmp_path / "one-of-2", tmp_path / "two-of-2"]
    for k, folder in enumerate(again, start=1):
        fresh_cache(folder, probe_cache)
        assert shard(project, k, 2, folder).returncode == 0
    out = merge(project, cache, *map(str, again), "--not-run", "fakegpu")
    assert out.returncode == 0, out.stdout + out.stderr
    second = sphinx_build(project, tmp_path / "final", cache, merged)
    assert second.statuscode == 0, second.warnings_text
    assert "1 not run here (needs fakegpu)" in second.status, second.status
    assert "this build re-read no page" not in second.status
    # the cache emptied: no result for anything, and the build fails
    shutil.rmtree(cache / "results")
    third = sphinx_build(project, tmp_path / "final", cache, merged)
    assert third.statuscode == 1
    assert "7 runnable snippets without a result (this build runs nothing)" in third.status, third.status


def test_merge_refuses_an_entry_changed_after_its_shard_wrote_it(project: Path, tmp_path: Path) -> None:
    """A result whose bytes are not those the shard wrote (its output edited by
    hand, another entry copied over it) is refused: the manifest holds each
    entry's SHA-256."""
    folders = run_three(project, tmp_path)
    unit = manifest(folders[0])["units"][0]
    cell = unit["snippets"][0]
    entry = next((folders[0] / "results").rglob(f"{cell['key']}.json"))
    data = json.loads(entry.read_text())
    text = json.dumps(data)
    assert '"text": "' in text
    entry.write_text(text.replace('"text": "', '"text": "edited ', 1))
    found = hashlib.sha256(entry.read_bytes()).hexdigest()
    _refused(
        project, tmp_path, folders,
        f"{folders[0]}: the result of {cell['id']} (key {cell['key'][:12]}) is not what the shard stored (its bytes "
        f"changed since, sha256 {found[:12]}, the manifest says {cell['sha256'][:12]}): copy the shard's whole folder "
        "again, or run that shard again",
    )  # fmt: skip


def test_a_merge_run_again_takes_the_same_shards_though_the_first_rewrote_the_timing_file(
    project: Path, tmp_path: Path
) -> None:
    folders = run_three(project, tmp_path)
    first = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert first.returncode == 0 and "timing file" in first.stdout and "updated" in first.stdout, first.stdout
    again = merge(project, tmp_path / "final-cache", *map(str, folders))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "merged 8 result(s) from 3 shard(s)" in again.stdout
    # shards that planned from two timing files are still refused
    shutil.rmtree(tmp_path / "final-cache")
    data = manifest(folders[1])
    write_manifest(folders[1], {**data, "timings": {**data["timings"], "s/a": 9.0}})
    _refused(
        project, tmp_path, folders,
        f"{folders[1]}: shard 2/3 planned from another timing file than shard 1/3 ({folders[0]}): run every shard on one commit",
    )  # fmt: skip


def test_merge_names_a_contradiction_a_missing_folder_and_a_damaged_manifest(project: Path, tmp_path: Path) -> None:
    folders = run_three(project, tmp_path)
    _refused(
        project, tmp_path, folders,
        f"--not-run fakegpu, but shard 3/3 ({folders[2]}) provides it: drop --not-run fakegpu, or leave that shard out",
        "--not-run", "fakegpu",
    )  # fmt: skip
    gone = tmp_path / "nowhere"
    _refused(project, tmp_path, [*folders[:2], gone], f"{gone}: no such folder: give the --out folder of each shard")
    data = manifest(folders[0])
    del data["units"]
    write_manifest(folders[0], data)
    _refused(
        project, tmp_path, folders,
        f"{folders[0]}: manifest.json is damaged (it has no key 'units'); run that shard again",
    )  # fmt: skip
    (folders[0] / "manifest.json").unlink()
    _refused(
        project, tmp_path, folders,
        f"{folders[0]}: no manifest.json: the shard did not finish (a shard writes it last: was it stopped?) or this "
        "is not the --out folder of a snipcheck execute --shard run; run the shard again, or give its folder",
    )  # fmt: skip
