"""``snipcheck execute --shard K/N`` and ``snipcheck execute --merge``: a build on several machines.

:func:`run_shard` runs the snippets the plan (:mod:`snipcheck.shard.plan`) gives
to shard ``K`` through the executor a build uses, with the shard's ``--out``
folder as its result cache, so the entries it leaves there are the ones the
build looks up; then it writes the folder's manifest
(:mod:`snipcheck.shard.files`).  :func:`merge_shards` checks every shard's
manifest against this checkout and copies their entries into the build's
result cache (``snipcheck_cache_dir`` / ``SNIPCHECK_CACHE_DIR``); a build
with ``snipcheck_execute = "merged"`` then runs nothing.

Both read the project through its placement index, as ``verify`` does;
the command line calls them (:mod:`snipcheck.app.cli`).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snipcheck.app.project import Project
from snipcheck.engine.cache import ResultCache
from snipcheck.engine.execute import Executor
from snipcheck.files import write_atomic
from snipcheck.judge.compare import ending, outcome_problem
from snipcheck.model import Outcome, RunResult, Snippet, Stamp
from snipcheck.report.verify import chapter_fingerprint
from snipcheck.run import requirements
from snipcheck.run.environment import ProbeError, probe_environment
from snipcheck.run.fingerprint import describe
from snipcheck.settings import Settings
from snipcheck.shard import carried as ci
from snipcheck.shard import check as shard_check
from snipcheck.shard import files as shard_files
from snipcheck.shard import key as shard_key
from snipcheck.shard import manifest_check
from snipcheck.shard.plan import Unit, for_provided, plan, units
from snipcheck.sources.snippets import SnippetError

#: Makes the executor of a command (``settings``, ``stamp``, extra provided requirements).
MakeExecutor = Callable[[Settings, Stamp, tuple[str, ...]], Executor]


@dataclass(frozen=True)
class View:
    """The project as a sharded build sees it.

    :param units: its units (:func:`snipcheck.shard.plan.units`).
    :param snippets: unit id → its snippets, as loaded (a chain's in page order).
    :param keys: ``(unit id, snippet id)`` → the cache key the executor computes here.
    :param fingerprint: the project fingerprint (placements and sources).
    :param stated: snippet id → the output its first placement states.
    """

    units: tuple[Unit, ...]
    snippets: dict[str, tuple[Snippet, ...]]
    keys: dict[tuple[str, str], str]
    fingerprint: str
    stated: dict[str, str] = field(default_factory=dict)


def view(project: Project, stamp: Stamp, executor: Executor) -> View:
    """The units of ``project``: every placement that loads (one that does
    not is reported by the build, and runs nowhere).

    :raises snipcheck.app.project.ProjectError: if the project cannot be read.
    """
    settings = project.settings
    placements = project.placements()
    loaded: list[Snippet] = []
    for p in placements:
        try:
            loaded.append(project.snippet(p))
        except SnippetError:
            continue

    def unmet(snippet: Snippet) -> tuple[str, ...]:
        implied = ("cargo",) if snippet.language == "rust" else ()
        return requirements.routed(snippet.tags.requires + implied, stamp, settings.provides, settings.requirements)

    found = units(loaded, unmet)
    by_unit: dict[str, dict[str, Snippet]] = {}
    for snippet in loaded:
        uid = f"chain:{snippet.chain}" if snippet.chain else snippet.id
        by_unit.setdefault(uid, {}).setdefault(snippet.id, snippet)
    snippets = {uid: tuple(cells.values()) for uid, cells in by_unit.items()}
    for language in sorted({s.language for s in loaded} - {"python"}):
        executor.prepare(language)  # its key holds its runner's stamp
    keys = {(uid, s.id): executor.key(s) for uid, cells in snippets.items() for s in cells}
    fingerprint = chapter_fingerprint(settings, placements, project.snippet)
    stated: dict[str, str] = {}
    for p in placements:
        stated.setdefault(p.snippet_id, p.stated)
    return View(tuple(found), snippets, keys, fingerprint, stated)


def _status(snippet: Snippet, outcome: Outcome, stored: bool) -> tuple[str, str]:
    """``(status, problem)`` of a snippet's outcome in a shard (see :class:`snipcheck.shard.files.Ran`)."""
    result = outcome.result
    if result is not None and stored:
        return "ok", ""
    if result is not None:
        problem = outcome_problem(snippet.tags, result)
        return "failed", ending(result) + (f", not as its tags expect ({problem[1]})" if problem else "")
    if outcome.stopped:
        return "failed", "was not run: " + outcome.stopped
    if outcome.origin == "not-run":
        return "not-run", "was not run: the shard lacks " + ", ".join(outcome.missing)
    return "failed", "could not run: " + "; ".join(outcome.notes)


def run_shard(
    project: Project,
    stamp: Stamp,
    shard: tuple[int, int] | None,
    out: Path,
    provides: Sequence[str],
    make: MakeExecutor,
    key: bytes | None = None,
    ci_cache: Path | None = None,
) -> int:
    """Run shard ``shard`` (``(k, n)``) of ``project`` into ``out``, or, for
    ``None``, the requirement shard of ``provides`` (the units that need what
    it provides, and nothing else: :func:`snipcheck.shard.plan.for_provided`);
    print what it did; return the exit status (1 when a snippet of the shard
    has no result, 0 otherwise).  With ``key`` (the shards' shared key, see
    :mod:`snipcheck.shard.key`) its manifest is signed.  With ``ci_cache``
    (the CI cache restored here, :mod:`snipcheck.shard.carried`), the units
    whose every result it holds are left out of the plan, and the manifest
    names them; the merge takes them from the same cache.

    :raises snipcheck.app.project.ProjectError: if the project cannot be read.
    """
    k, n = shard or (0, 0)
    name = f"shard {k}/{n}" if shard else "the shard for " + ", ".join(sorted(set(provides)))
    out = out.resolve()
    # The shard's folder is its cache; the configured runner always (a switch to plain
    # subprocesses for a few runs would store under another runner's keys than the build's).
    settings = dataclasses.replace(project.settings, cache_dir=out, fork_min_runs=0)
    executor = make(settings, stamp, tuple(provides))
    try:
        here = view(project, stamp, executor)
        durations = shard_files.read_timings(settings.timings_file or settings.root / "snipcheck-timings.json")
        restored = ci.load(ci_cache, key) if ci_cache is not None else None
        taken = ci.carried_units(here.units, here.keys, restored.take if restored is not None else None)
        _say(restored)
        planned = plan([u for u in here.units if u.id not in taken], n or 1, durations, {k: provides} if shard else {})
        mine = planned.of(k) if shard else for_provided(here.units, provides)
        started = time.monotonic()
        wanted = [s for uid in mine for s in here.snippets[uid]]
        executor.plan(wanted)
        for snippet in wanted:
            executor.submit(snippet)
        ran, failed = _collect(executor, here, mine, out)
        wall = time.monotonic() - started
    finally:
        executor.close()
    manifest = shard_files.Manifest(
        (k, n), here.fingerprint, dataclasses.asdict(stamp), planned.digest if shard else "",
        tuple(sorted(set(provides))), wall, tuple(ran), durations if shard else None,
        _environment(project, stamp), tuple(sorted(taken)) if restored is not None else None,
    )  # fmt: skip
    path = shard_files.write_manifest(out, manifest, key)
    for line in failed:
        print(f"error: {line}", file=sys.stderr)
    count = sum(len(u.snippets) for u in ran)
    loads = f"planned {planned.loads[k - 1]:.2f} s, shards' planned spread {planned.spread:.2f} s; " if shard else ""
    if restored is not None:
        carried = sum(len(c) for c in taken.values())
        loads += f"left out {len(taken)} unit(s) ({carried} snippet(s)) whose results the CI cache {ci_cache} holds; "
    print(
        f"{name}: {len(mine)} unit(s), {count} snippet(s) ({executor.ran} ran, {executor.cached} already in {out}), "
        f"{wall:.2f} s wall; {loads}manifest: {path}"
        + (f" (signed with the key of id {shard_key.key_id(key)})" if key is not None else "")
    )
    return 1 if failed else 0


def _collect(
    executor: Executor, here: View, mine: Sequence[str], out: Path
) -> tuple[list[shard_files.UnitRun], list[str]]:
    """What the shard's units gave once their runs are done: each cell's
    status, problem and cache entry (with its SHA-256) for the manifest.

    :return: ``(the units' runs, one "<snippet id>: <problem>" line per snippet without a result)``.
    """
    cache = ResultCache(out)
    ran: list[shard_files.UnitRun] = []
    failed: list[str] = []
    for uid in mine:
        cells: list[shard_files.Ran] = []
        seconds = 0.0
        for snippet in here.snippets[uid]:
            outcome = executor.outcome(snippet)
            entry_key = executor.key(snippet)
            status, problem = _status(snippet, outcome, cache.path(entry_key).exists())
            if outcome.result is not None:
                seconds += outcome.result.duration
            if status != "ok":
                failed.append(f"{snippet.id}: {problem}")
            digest = shard_files.entry_sha256(out, entry_key) if status == "ok" else ""
            cells.append(shard_files.Ran(snippet.id, entry_key, status, problem, digest))
        ran.append(shard_files.UnitRun(uid, seconds, tuple(cells)))
    return ran, failed


def _environment(project: Project, stamp: Stamp) -> dict[str, Any] | None:
    """What ``stamp``'s environment id was made from (:func:`snipcheck.run.fingerprint.describe`),
    from the probe (its answers are cached: a few milliseconds); ``None`` where
    the probe fails now or finds another environment than ``stamp``'s."""
    try:
        found = probe_environment(project.settings.python, project.settings.cache_dir)
    except ProbeError:
        return None
    return describe(found.fingerprint) if found.stamp.env == stamp.env else None


def _keys_in(here: View, executor: Executor) -> Callable[[Mapping[str, Any]], dict[tuple[str, str], str]]:
    """``stamp`` → the cache keys of ``here``'s snippets for runs in that
    environment (a ``--provides`` shard on a machine of its own), each
    worked out once per stamp; :class:`TypeError` for a stamp that is not one."""
    done: dict[str, dict[tuple[str, str], str]] = {}  # a Python key needs no runner: the executor may be closed

    def keys(stamp: Mapping[str, Any]) -> dict[tuple[str, str], str]:
        token = json.dumps(dict(stamp), sort_keys=True)
        if token not in done:
            there = Stamp(**stamp)
            done[token] = {
                (uid, s.id): executor.key(s, stamp=there) for uid, cells in here.snippets.items() for s in cells
            }
        return done[token]

    return keys


def _say(restored: ci.CICache | None) -> None:
    """Print, once, what loading the CI cache and checking its entries found (on stderr)."""
    for problem in restored.problems if restored is not None else ():
        print(f"warning: CI cache: {problem}", file=sys.stderr)
    for note in restored.notes if restored is not None else ():
        print(f"note: CI cache: {note}", file=sys.stderr)


#: What a merge without the shards' key says, once.
NO_KEY_NOTE = (
    f"note: no {shard_key.KEY_VARIABLE}: this merge checks that the shards fit together and were made from this "
    "checkout, not that they came from your shard jobs (whoever can write a shard's folder can rewrite its "
    f"manifest to match); give every shard and the merge one secret key in {shard_key.KEY_VARIABLE} to check "
    "that (see the guide's page on shards)"
)


def merge_shards(
    project: Project,
    stamp: Stamp,
    folders: Sequence[Path],
    not_run: Sequence[str],
    make: MakeExecutor,
    key: bytes | None = None,
    check: int | None = shard_check.DEFAULT,
    seed: int | None = None,
    ci_cache: Path | None = None,
) -> int:
    """Check the shards in ``folders`` and copy their results into the build's
    cache; print each shard's wall time and the spread; return the exit status.

    :param key: the shards' shared key (:mod:`snipcheck.shard.key`): every
        manifest must be signed with it; ``None``: no signature is checked,
        and the merge says so once (:data:`NO_KEY_NOTE`).
    :param check: how many of the shards' units to run again here before
        anything is written (:mod:`snipcheck.shard.check`); ``None``: all.
    :param seed: the seed of that draw; ``None``: a fresh one (printed).
    :param ci_cache: the CI cache the shards restored (:mod:`snipcheck.shard.carried`):
        the units they left out for it must be those whose results it holds
        here; their entries are copied too, and named in the build cache's
        :data:`snipcheck.shard.carried.RECORD`.
    :raises snipcheck.shard.files.MergeError: on the first thing wrong
        (a result that a run here does not give among them); nothing is
        written then.
    :raises snipcheck.app.project.ProjectError: if the project cannot be read.
    :raises OSError: if the cache or the timing file cannot be written.
    """
    settings = project.settings
    if key is None:
        print(NO_KEY_NOTE, file=sys.stderr)
    shards = [(folder, shard_files.read_manifest(folder, key)) for folder in folders]
    executor = make(settings, stamp, ())
    try:
        here = view(project, stamp, executor)
        keys_in = _keys_in(here, executor)
    finally:
        executor.close()
    timings = settings.timings_file or settings.root / "snipcheck-timings.json"
    durations = shard_files.read_timings(timings)
    restored = ci.load(ci_cache, key) if ci_cache is not None else None
    taken = ci.carried_units(here.units, here.keys, restored.take if restored is not None else None)
    _say(restored)
    ci.check_shards(shards, taken, restored)
    merged = manifest_check.check(
        shards, [u for u in here.units if u.id not in taken], here.keys, here.fingerprint, dataclasses.asdict(stamp), durations, not_run, keys_in,
        _environment(project, stamp),
    )  # fmt: skip
    # the seconds the shards planned with (their timing file), so that a seed draws the same units again
    planned = next((m.timings for _, m in shards if m.timings is not None), durations)
    checked = _check_again(project, stamp, here, merged, planned, check, seed, make) if check != 0 else ""
    carried_keys = _store(settings.cache_dir, merged, taken, restored, here.fingerprint)
    changed = shard_files.write_timings(timings, durations, merged.measured, [u.id for u in here.units])
    _summary(merged, key, checked, restored, ci_cache, carried_keys, len(taken))
    left = f"; not run here on purpose: {', '.join(merged.not_run)}" if merged.not_run else ""
    print(
        f"merged {len(merged.results)} result(s) from {len(merged.walls)} shard(s)"
        + (f" and {len(carried_keys)} from the CI cache" if restored is not None else "")
        + f" into {settings.cache_dir}{left}; "
        f"timing file {timings} {'updated' if changed else 'unchanged'}"
    )
    return 0


def _store(
    cache_dir: Path, merged: shard_files.Merged, taken: Mapping[str, Any], restored: ci.CICache | None, fingerprint: str
) -> list[tuple[str, str]]:
    """Write the merged results, and those carried from the CI cache, into the
    build's cache at ``cache_dir``, with the CI record and the merged record.

    :return: the ``(entry key, snippet id)`` of each carried result.
    :raises OSError: if the cache cannot be written.
    """
    cache = ResultCache(cache_dir)
    why = cache.unwritable()
    if why:
        raise OSError(why)
    for entry_key, snippet_id, _, result in merged.results:
        cache.put(entry_key, snippet_id, result)
    carried_keys: list[tuple[str, str]] = []
    for cells in taken.values():
        for sid, entry_key, result in cells:
            cache.put(entry_key, sid, result)
            carried_keys.append((entry_key, sid))
    ci.write_record(cache_dir, restored, carried_keys)
    record = shard_files.merged_record(merged, fingerprint)
    write_atomic(cache_dir / shard_files.MERGED, (json.dumps(record, indent=1) + "\n").encode("utf-8"))
    return carried_keys


def _summary(
    merged: shard_files.Merged, key: bytes | None, checked: str, restored: ci.CICache | None, ci_cache: Path | None,
    carried_keys: Sequence[tuple[str, str]], carried_units: int,
) -> None:
    """Print what each shard gave, where it ran, the signatures, the re-run
    sample, what the CI cache gave, and the shards' spread."""
    every = sorted(merged.walls)
    counts = {k: sum(1 for _, _, j, _ in merged.results if j == k) for k in every}
    for k in every:
        print(f"{merged.name(k)} ({merged.folders[k]}): {counts[k]} result(s), {merged.walls[k]:.2f} s wall")
    for k in sorted(merged.elsewhere):
        print(f"{merged.name(k)} ran in an environment of its own: {Stamp(**merged.stamps[k]).label()}; its pages say so")
    if key is not None:
        print(f"signatures: every shard's manifest is signed with this merge's key (key id {shard_key.key_id(key)})")
    if checked:
        print(checked)
    if restored is not None:
        print(
            f"CI cache {ci_cache}: {len(carried_keys)} result(s) of {carried_units} unit(s) taken from it "
            f"(no shard ran them), {len(restored.entries)} entr{'y' if len(restored.entries) == 1 else 'ies'} in it"
        )
    walls = [merged.walls[k] for k in every if k <= merged.count]
    print(f"spread: {merged.spread:.2f} s (slowest shard {max(walls):.2f} s, fastest {min(walls):.2f} s)")


def _check_again(
    project: Project,
    stamp: Stamp,
    here: View,
    merged: shard_files.Merged,
    durations: Mapping[str, float],
    count: int | None,
    seed: int | None,
    make: MakeExecutor,
) -> str:
    """Run a draw of ``count`` of the merged units again here, in a result
    cache of its own (see :mod:`snipcheck.shard.check`); return the line that
    says what ran.

    :raises snipcheck.shard.files.MergeError: for the first cell whose run
        here differs from its shard's result (the diff printed before it).
    """
    taken = {sid: (k, result) for _, sid, k, result in merged.results}
    eligible = {
        u.id for u in here.units
        if not u.requires and u.snippets and all(s in taken and taken[s][0] not in merged.elsewhere for s in u.snippets)
    }  # fmt: skip
    seed = secrets.randbelow(10**6) if seed is None else seed
    drawn = shard_check.draw(here.units, eligible, durations, count, seed)
    if not drawn.units:
        return "check: no unit of the shards can run again here (each needs a requirement, or ran in an environment of its own)"
    wanted = [s for uid in drawn.units for s in here.snippets[uid]]
    # Every run ends before its cache folder goes (a run still writing there made the removal fail and
    # hid the refusal); a removal that fails all the same leaves a folder in /tmp, never another error.
    with tempfile.TemporaryDirectory(prefix="snipcheck-check-", ignore_cleanup_errors=True) as tmp:
        executor = make(dataclasses.replace(project.settings, cache_dir=Path(tmp)), stamp, ())
        try:
            executor.plan(wanted)
            for snippet in wanted:
                executor.submit(snippet)
            outcomes = [(snippet, executor.outcome(snippet)) for snippet in wanted]
        finally:
            executor.close()
    for snippet, outcome in outcomes:
        k, theirs = taken[snippet.id]
        shard, folder = merged.name(k), merged.folders[k]
        if outcome.result is None:
            why = outcome.stopped or "; ".join(outcome.notes) or "it was not run"
            diff = f"--- {shard}: it {ending(theirs)}\n+++ a run here: {why}"
        else:
            labels = (f"{shard} ({folder})", "a run here")
            diff = shard_check.difference(
                snippet, here.stated.get(snippet.id), theirs, outcome.result, project.settings.normalizers, labels
            )  # fmt: skip
        if diff:
            print(f"error: {snippet.id}: the result {shard} stored is not what a run of it here gives:", file=sys.stderr)
            print("\n".join("    " + line for line in diff.splitlines()), file=sys.stderr)
            raise shard_files.MergeError(
                f"{folder}: {shard}'s result of {snippet.id} differs from a run of it here (the diff above): that "
                "shard did not run this code in this environment, or its folder was changed after; run it again "
                "(and if the output varies from run to run, put wildcards [..] where it does)"
            )
    shown = ", ".join(drawn.units[:8]) + (f" and {len(drawn.units) - 8} more" if len(drawn.units) > 8 else "")
    if count is None:
        how = "every one"
    else:
        how = f"drawn from the {drawn.pool} fastest with seed {drawn.seed}; --check-seed {drawn.seed} draws them again"
    return (
        f"check: ran {len(drawn.units)} of the shards' {drawn.eligible} unit(s) this machine can run again here "
        f"({how}): {shown}; each gave the shard's output"
    )


@dataclass(frozen=True)
class FromShard:
    """A snippet's result as a shard ran it, for ``snipcheck record --from-shard``.

    :param result: the run's result (its own stamp: where it ran).
    :param shard: the shard that ran it: ``shard 3/4``, ``the shard for cuda``.
    :param folder: that shard's ``--out`` folder.
    """

    result: RunResult
    shard: str
    folder: Path

    @property
    def label(self) -> str:
        """``shard 3/4 (torch … · CUDA (…))``: where it ran, for messages."""
        return f"{self.shard} ({self.result.stamp.label()})"


def shard_results(
    project: Project, stamp: Stamp, folders: Sequence[Path], executor: Executor, key: bytes | None = None
) -> dict[str, FromShard]:
    """Snippet id → its result in one of the shard ``folders`` (``--out``
    folders of ``snipcheck execute --shard``, perhaps run on another machine:
    a GPU one), for every snippet a shard holds a result of.

    Each shard must have run this checkout (the project fingerprint); each
    result's key must be the key this checkout computes for the shard's
    environment, so no result of other code, tags or inputs is taken.

    With ``key`` (the shards' shared key), only a folder whose manifest is
    signed with it is taken.

    :raises snipcheck.shard.files.MergeError: naming the folder, on the first
        thing wrong; nothing is taken then.
    :raises snipcheck.app.project.ProjectError: if the project cannot be read.
    """
    here = view(project, stamp, executor)
    keys_in = _keys_in(here, executor)
    found: dict[str, FromShard] = {}
    for folder in folders:
        m = shard_files.read_manifest(folder, key)
        k, n = m.shard
        name = f"shard {k}/{n}" if k > 0 else "the shard for " + ", ".join(m.provides)
        if m.fingerprint != here.fingerprint:
            raise shard_files.MergeError(
                f"{folder}: {name} ran another revision of the pages and snippets (fingerprint {m.fingerprint}, "
                f"this checkout {here.fingerprint}): run it again on this checkout"
            )
        try:
            keys = here.keys if dict(m.stamp) == dataclasses.asdict(stamp) else keys_in(m.stamp)
        except (TypeError, ValueError) as exc:
            raise shard_files.MergeError(f"{folder}: {shard_files.MANIFEST} is damaged (its stamp: {exc}); run that shard again") from None
        for unit in m.units:
            for ran in unit.snippets:
                if ran.status != "ok":
                    continue
                if ran.key != keys.get((unit.id, ran.id)):
                    raise shard_files.MergeError(
                        f"{folder}: {name} stored {ran.id} under key {ran.key[:12]}, this checkout computes "
                        f"{(keys.get((unit.id, ran.id)) or '')[:12]}: run it again on this checkout"
                    )
                result = shard_files.read_entry(Path(folder), ran)
                if ran.id in found:
                    raise shard_files.MergeError(
                        f"{folder}: {ran.id} has a result in {found[ran.id].folder} too: give one shard's folder for it"
                    )
                found[ran.id] = FromShard(result, name, Path(folder))
    return found
