"""The merge's checks of the shards against the merging checkout.

:func:`check` takes the shards' manifests (read and, with a key, verified by
:func:`snipcheck.shard.files.read_manifest`) and refuses, with a one-line
:class:`~snipcheck.shard.files.MergeError`, at the first thing wrong; in
this order, one step each:

1. the shards: at least one ``--shard K/N``; a requirement shard
   (``--provides`` without ``--shard``) stands outside the N and is numbered
   after them (:func:`_number`); each of the N once, none missing;
2. the checkout and environment each ran in (:func:`_same_checkout`), and
   the keys a shard run elsewhere is checked against (:func:`_keys_elsewhere`);
3. what each provides, once, and not declared ``--not-run`` (:func:`_provided`);
4. the plan they made (:func:`_plan`);
5. each unit ran once (:func:`_ran_once`), by the shard the plan gives it
   (:func:`_as_planned`), and every unit that is not run is left out on
   purpose (:func:`_left_out`);
6. each snippet's key and entry (:func:`_results`).

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from snipcheck.model import RunResult
from snipcheck.run.fingerprint import differences
from snipcheck.shard.files import MANIFEST, Manifest, Merged, MergeError, UnitRun, read_entry
from snipcheck.shard.plan import Plan, Unit, for_provided, plan

__all__ = ["check"]

KeysIn = Callable[[Mapping[str, Any]], Mapping[tuple[str, str], str]]


@dataclass(frozen=True)
class _Shards:
    """The shards given, numbered.

    :param all: ``(folder, manifest)`` of each, the N first, then the
        requirement shards, numbered ``N+1``, ...
    :param numbered: the ``--shard K/N`` ones.
    :param n: N.
    :param names: each shard's name in messages, by number.
    :param routed_only: for a requirement shard, the units it may run.
    :param at: each shard's folder, by number.
    """

    all: list[tuple[Path, Manifest]]
    numbered: list[tuple[Path, Manifest]]
    n: int
    names: dict[int, str]
    routed_only: dict[int, list[str]]
    at: dict[int, Path]


def check(
    shards: Sequence[tuple[Path, Manifest]],
    units: Sequence[Unit],
    keys: Mapping[tuple[str, str], str],
    fingerprint: str,
    stamp: Mapping[str, Any],
    durations: Mapping[str, float],
    not_run: Sequence[str] = (),
    keys_in: KeysIn | None = None,
    environment: Mapping[str, Any] | None = None,
) -> Merged:
    """Check the shards' manifests against the merging checkout and read their entries.

    Every shard runs in the merge's environment (``stamp``), except that a
    shard which provides a requirement (``--provides``) may run in an
    environment of its own, a machine with a GPU say: then its keys are
    checked against those this checkout computes for its stamp, and each of
    its results keeps the stamp it ran under, so its page names where it ran.

    :param units: the checkout's units (:func:`snipcheck.shard.plan.units`).
    :param keys: ``(unit id, snippet id)`` → the cache key this checkout computes.
    :param fingerprint: the checkout's project fingerprint.
    :param stamp: its environment stamp (``dataclasses.asdict``, ``env`` included).
    :param durations: the timing file the shards planned with.
    :param not_run: requirements declared not run here (``--not-run``).
    :param keys_in: ``stamp`` → the keys this checkout computes for a run in
        that environment (as ``keys``); ``None``: every shard must run here.
    :param environment: what the checkout's environment id was made from
        (:func:`snipcheck.run.fingerprint.describe`): a refusal of a shard run
        in another environment then names what differs.
    :raises MergeError: at the first thing wrong (see the module docstring).
    """
    given = _number(shards, units)
    _same_checkout(given, fingerprint, stamp, keys_in is not None, environment)
    elsewhere, keys_of = _keys_elsewhere(given, stamp, keys_in)
    provided = _provided(given, not_run)
    planned = _plan(given, units, durations)
    ran_in = _ran_once(given)
    by_id = {u.id: u for u in units}
    _as_planned(given, ran_in, by_id, planned)
    left_out = _left_out(given, units, ran_in, planned, not_run)
    results, measured = _results(given, ran_in, by_id, keys, keys_of)
    return Merged(
        given.n, planned, tuple(results), measured, {m.shard[0]: m.wall for _, m in given.all}, provided,
        tuple(left_out), dict(given.at), {m.shard[0]: dict(m.stamp) for _, m in given.all}, elsewhere, given.names,
    )  # fmt: skip


def _number(shards: Sequence[tuple[Path, Manifest]], units: Sequence[Unit]) -> _Shards:
    """The shards numbered: the N, then the requirement shards after them;
    each of the N given once, none missing."""
    if not shards:
        raise MergeError("no shard folder given: name the --out folder of each shard")
    numbered = [(f, m) for f, m in shards if m.shard[0] > 0]
    if not numbered:
        raise MergeError(
            "no --shard K/N folder given, only requirement shards (--provides without --shard, which run only what "
            "needs what they provide): give the --out folder of each --shard K/N run too"
        )
    first_dir, first = numbered[0]
    n = first.shard[1]
    # A requirement shard (--provides without --shard) stands outside the N: it is numbered after them here.
    extra = sorted(((f, m) for f, m in shards if m.shard[0] <= 0), key=lambda s: (s[1].provides, str(s[0])))
    for f, m in extra:
        if not m.provides:
            raise MergeError(f"{f}: {MANIFEST} is damaged (a shard outside the N that provides nothing); run that shard again")
    every = [*numbered, *((f, replace(m, shard=(n + i, n))) for i, (f, m) in enumerate(extra, start=1))]
    names = {m.shard[0]: f"shard {m.shard[0]}/{n}" for _, m in numbered}
    names.update({m.shard[0]: "the shard for " + ", ".join(m.provides) for _, m in every[len(numbered):]})
    routed_only = {m.shard[0]: for_provided(units, m.provides) for _, m in every[len(numbered):]}
    at: dict[int, Path] = {}
    for folder, m in every:
        k = m.shard[0]
        if m.shard[1] != n:
            raise MergeError(
                f"{folder}: shard {k}/{m.shard[1]}, but {first_dir} is shard {first.shard[0]}/{n}: merge the shards of one run"
            )
        if k in at:
            raise MergeError(f"{folder}: shard {k}/{n} given twice (also {at[k]}): give each shard's folder once")
        at[k] = folder
    for k in range(1, n + 1):
        if k not in at:
            raise MergeError(f"shard {k}/{n} missing: give the --out folder of each of the {n} shards")
    return _Shards(every, numbered, n, names, routed_only, at)


def _same_checkout(
    given: _Shards, fingerprint: str, stamp: Mapping[str, Any], elsewhere_ok: bool, environment: Mapping[str, Any] | None
) -> None:
    """Every shard ran this revision of the pages and snippets, and in this
    environment, but a requirement shard where ``elsewhere_ok``."""
    for folder, m in given.all:
        k = m.shard[0]
        if m.fingerprint != fingerprint:
            raise MergeError(
                f"{folder}: {given.names[k]} ran another revision of the pages and snippets (fingerprint {m.fingerprint}, "
                f"this checkout {fingerprint}): run it again on this checkout"
            )
        if dict(m.stamp) != dict(stamp) and not (m.provides and elsewhere_ok):
            raise MergeError(
                f"{folder}: {given.names[k]} ran in another environment ({_env(m.stamp)}; here {_env(stamp)}"
                f"{_differing(m.environment, environment)}): run every shard and the merge in one environment "
                "(only a shard started with --provides may run in one of its own)"
            )


def _keys_elsewhere(
    given: _Shards, stamp: Mapping[str, Any], keys_in: KeysIn | None
) -> tuple[frozenset[int], dict[int, Mapping[tuple[str, str], str]]]:
    """The shards that ran in another environment, and the keys this
    checkout computes for each of their environments."""
    elsewhere = frozenset(m.shard[0] for _, m in given.all if dict(m.stamp) != dict(stamp))
    keys_of: dict[int, Mapping[tuple[str, str], str]] = {}
    for folder, m in given.all:
        if m.shard[0] in elsewhere:
            assert keys_in is not None
            try:
                keys_of[m.shard[0]] = keys_in(m.stamp)
            except (TypeError, ValueError) as exc:
                raise MergeError(f"{folder}: {MANIFEST} is damaged (its stamp: {exc}); run that shard again") from None
    return elsewhere, keys_of


def _provided(given: _Shards, not_run: Sequence[str]) -> dict[str, int]:
    """Requirement name → the shard that provides it: one shard each, and
    none that ``--not-run`` says is not run."""
    names, at = given.names, given.at
    provided: dict[str, int] = {}
    for folder, m in sorted(given.all, key=lambda s: s[1].shard[0]):
        k = m.shard[0]
        for name in m.provides:
            if name in provided:
                raise MergeError(
                    f"{folder}: {names[k]} provides {name}, as does {names[provided[name]]} ({at[provided[name]]}): "
                    f"give --provides {name} to one shard only"
                )
            provided[name] = k
    for name in not_run:
        if name in provided:
            k = provided[name]
            raise MergeError(
                f"--not-run {name}, but {names[k]} ({at[k]}) provides it: drop --not-run {name}, or leave that shard out"
            )
    return provided


def _plan(given: _Shards, units: Sequence[Unit], durations: Mapping[str, float]) -> Plan:
    """The plan the shards made, which each of the N must have made."""
    n = given.n
    # The plan is the one the shards made: from the seconds they planned with (their manifests hold
    # them), so a merge run again after the first rewrote the timing file still checks it.
    with_timings = [(f, m) for f, m in given.numbered if m.timings is not None]
    if with_timings:
        f0, m0 = with_timings[0]
        for folder, m in given.numbered:
            if m.timings != m0.timings:
                raise MergeError(
                    f"{folder}: shard {m.shard[0]}/{n} planned from another timing file than shard {m0.shard[0]}/{n} "
                    f"({f0}): run every shard on one commit"
                )
        durations = dict(m0.timings or {})
    planned = plan(units, n, durations, {m.shard[0]: m.provides for _, m in given.numbered})
    for folder, m in given.numbered:
        if m.plan != planned.digest:
            raise MergeError(
                f"{folder}: shard {m.shard[0]}/{n} planned from another timing file (plan {m.plan}, here {planned.digest}): "
                "run every shard and the merge on one commit"
            )
    return planned


def _ran_once(given: _Shards) -> dict[str, tuple[int, UnitRun]]:
    """Unit id → the shard that ran it, and how: each unit ran once."""
    ran_in: dict[str, tuple[int, UnitRun]] = {}
    for folder, m in sorted(given.all, key=lambda s: s[1].shard[0]):
        k = m.shard[0]
        for u in m.units:
            if u.id in ran_in:
                j = ran_in[u.id][0]
                raise MergeError(
                    f"{folder}: {given.names[k]} ran {u.id}, which {given.names[j]} ({given.at[j]}) ran too: "
                    "a snippet must run once; run both shards again on one commit"
                )
            ran_in[u.id] = (k, u)
    return ran_in


def _as_planned(
    given: _Shards, ran_in: Mapping[str, tuple[int, UnitRun]], by_id: Mapping[str, Unit], planned: Plan
) -> None:
    """Each unit that ran is placed here and ran on the shard the plan gives
    it (a requirement shard: one the plan gives no shard, that needs what it provides)."""
    names, at, n = given.names, given.at, given.n
    for uid, (k, _) in sorted(ran_in.items()):
        if uid not in by_id:
            raise MergeError(f"{at[k]}: {names[k]} ran {uid}, which this checkout does not place: run it again on this checkout")
        if k in given.routed_only:
            if uid not in given.routed_only[k] or planned.assignment[uid] is not None:
                needs = ", ".join(by_id[uid].requires) or "nothing"
                owner = planned.assignment[uid]
                also = f", and the plan gives it to shard {owner}/{n}" if owner is not None else ""
                raise MergeError(
                    f"{at[k]}: {names[k]} ran {uid}, which needs {needs}{also}: a shard outside the N runs only what "
                    "needs what it provides; run it again on this checkout"
                )
        elif planned.assignment[uid] != k:
            owner = planned.assignment[uid]
            shard = f"shard {owner}/{n}" if owner is not None else "no shard"
            raise MergeError(
                f"{at[k]}: shard {k}/{n} ran {uid}, which the plan gives to {shard}: run every shard again on one commit"
            )


def _left_out(
    given: _Shards, units: Sequence[Unit], ran_in: Mapping[str, tuple[int, UnitRun]], planned: Plan, not_run: Sequence[str]
) -> list[str]:
    """The units no shard ran: each needs only what ``--not-run`` names, and
    has no cell that needs nothing (a build would run it)."""
    names, at, n = given.names, given.at, given.n
    left_out = []
    for unit in units:
        if unit.id in ran_in:
            continue
        owner = planned.assignment[unit.id]
        if owner is not None:
            raise MergeError(
                f"{at[owner]}: shard {owner}/{n} did not run {unit.id}, which the plan gives it: run that shard again"
            )
        for k, routed in given.routed_only.items():
            if unit.id in routed:
                raise MergeError(
                    f"{at[k]}: {names[k]} did not run {unit.id}, which needs {', '.join(unit.requires)}: run that shard again"
                )
        lacking = [r for r in unit.requires if r not in not_run]
        if lacking:
            raise MergeError(
                f"{unit.id} needs {', '.join(lacking)}, which no shard provides: start a shard with --provides "
                f"{lacking[0]}, or merge with --not-run {lacking[0]} to build without it"
            )
        if unit.free:
            raise MergeError(
                f"{unit.id} needs {', '.join(unit.requires)}, which no shard provides, and its cells "
                f"{', '.join(unit.free)} need nothing, so a build would run them: start a shard with --provides {unit.requires[0]}"
            )
        left_out.append(unit.id)
    return left_out


def _results(
    given: _Shards,
    ran_in: Mapping[str, tuple[int, UnitRun]],
    by_id: Mapping[str, Unit],
    keys: Mapping[tuple[str, str], str],
    keys_of: Mapping[int, Mapping[tuple[str, str], str]],
) -> tuple[list[tuple[str, str, int, RunResult]], dict[str, float]]:
    """``(key, snippet id, shard, result)`` of each snippet, and the seconds
    of each unit: each unit ran as this checkout places it, each of its
    snippets has a result, stored under the key this checkout computes."""
    results: list[tuple[str, str, int, RunResult]] = []
    measured: dict[str, float] = {}
    for uid, (k, u) in sorted(ran_in.items()):
        folder = given.at[k]
        name = given.names[k]
        if tuple(r.id for r in u.snippets) != by_id[uid].snippets:
            raise MergeError(
                f"{folder}: {name} ran {uid} as {', '.join(r.id for r in u.snippets)}, this checkout places "
                f"{', '.join(by_id[uid].snippets)}: run it again on this checkout"
            )
        for r in u.snippets:
            if r.status != "ok":
                raise MergeError(
                    f"{folder}: {r.id} has no result in {name} (it {r.problem or 'failed'}): fix it, then run that shard again"
                )
            expected = keys_of.get(k, keys).get((uid, r.id))
            if r.key != expected:
                raise MergeError(
                    f"{folder}: {name} stored {r.id} under key {r.key[:12]}, this checkout computes "
                    f"{(expected or '')[:12]}: run it again on this checkout"
                )
            result = read_entry(folder, r)
            results.append((r.key, r.id, k, result))
        measured[uid] = u.seconds
    return results, measured


def _differing(there: Mapping[str, Any] | None, here: Mapping[str, Any] | None) -> str:
    """``"; it differs in: numpy 2.3.5 there, 2.4.6 here; variable PATH"``, or ``""`` where
    a manifest does not say what its environment id was made from."""
    found = differences(there, here) if there is not None and here is not None else []
    return "; it differs in: " + "; ".join(found) if found else ""


def _env(stamp: Mapping[str, Any]) -> str:
    parts = [f"{name} {stamp.get(name)}" for name in ("python", "torch", "device", "platform", "rustc") if stamp.get(name)]
    return ", ".join(parts) + f", environment {stamp.get('env')}"
