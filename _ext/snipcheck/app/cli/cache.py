"""``snipcheck cache``: what a result cache holds for this project, and the CI cache.

Actions (``snipcheck cache ACTION``)::

    key       print the CI cache's key for this environment (what actions/cache is keyed on)
    show      entries, environment ids, size and age of the build's cache (or --ci-cache DIR)
    plan      how many results a build would take from it, and which units would run (a dry run)
    prune     remove the entries no placement uses in this environment (--all-environments: in any)
    save      write the CI cache folder --ci-cache DIR from the build's cache (after a green build)
    restore   copy what the CI cache --ci-cache DIR holds for these placements into the build's cache

The CI cache's format, its checks on load and its signature are
:mod:`snipcheck.shard.carried`'s; the units and keys are those a sharded build
computes (:func:`snipcheck.app.shard_command.view`).  :func:`register` adds the
command to the command line's parser, :func:`run` runs it.

App layer: imports the layers below it (``shard``, ``settings``, ``engine``,
``run``, the foundation modules) and :mod:`snipcheck.app.shard_command`; no Sphinx.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from snipcheck.app.project import Project
from snipcheck.app.shard_command import View, view
from snipcheck.engine.cache import CacheError, ResultCache
from snipcheck.engine.execute import Executor, executor_for
from snipcheck.model import RunResult, Stamp
from snipcheck.run.environment import ProbeError, probe
from snipcheck.shard import carried as ci
from snipcheck.shard import files as shard_files
from snipcheck.shard import key as shard_key
from snipcheck.shard.plan import plan

__all__ = ["register", "run"]

ACTIONS = {
    "key": "print the CI cache's key for this environment: what actions/cache is keyed on",
    "show": "show the entries, environment ids, size and age of the build's result cache (or of --ci-cache DIR)",
    "plan": "say how many results a build would take from the cache (or --ci-cache DIR) and which units would run",
    "prune": "remove the entries of the build's result cache that no placement uses in this environment",
    "save": "write the CI cache folder --ci-cache DIR from the build's result cache (after a green build)",
    "restore": "copy what the CI cache --ci-cache DIR holds for these placements into the build's result cache",
}


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``snipcheck cache`` to the command line's subparsers ``sub``
    (``common``: the options every command takes)."""
    p = sub.add_parser(
        "cache", parents=[common], help="show, plan from, prune, save or restore the result cache (and the CI cache)"
    )
    p.add_argument("action", choices=list(ACTIONS), metavar="ACTION", help="; ".join(f"{k}: {v}" for k, v in ACTIONS.items()))
    p.add_argument(
        "--ci-cache", dest="ci_cache", type=Path, metavar="DIR",
        help="the CI cache folder (what actions/cache restores and saves); show and plan read it instead of the build's cache",
    )  # fmt: skip
    p.add_argument("--shards", type=int, metavar="N", help="plan: also say how N shards would share what runs")
    p.add_argument("--dry-run", dest="dry_run", action="store_true", help="prune: say what would go, remove nothing")
    p.add_argument(
        "--all-environments", dest="all_environments", action="store_true",
        help="prune: remove the entries made in other environments too (another torch, numpy, Python...)",
    )  # fmt: skip


def run(project: Project, args: argparse.Namespace) -> int:
    """Run ``snipcheck cache ACTION``; return the exit status (0; 1 when the
    environment cannot be probed or a folder cannot be written; 2 for bad usage)."""
    if args.shard_key_problem:
        return _fail(args.shard_key_problem, 2)
    if args.action in ("save", "restore") and args.ci_cache is None:
        return _fail(f"cache {args.action} needs --ci-cache DIR: the CI cache's folder", 2)
    if args.action in ("key", "prune") and args.ci_cache is not None:
        return _fail(f"cache {args.action} takes no --ci-cache (prune works on the build's cache; save writes only what is used)", 2)
    if args.action != "plan" and args.shards is not None:
        return _fail("--shards is plan's", 2)
    if args.action != "prune" and (args.dry_run or args.all_environments):
        return _fail("--dry-run and --all-environments are prune's", 2)
    if args.shards is not None and args.shards < 1:
        return _fail(f"--shards needs at least 1, not {args.shards}", 2)
    settings = project.settings
    try:
        stamp = probe(settings.python, settings.cache_dir)
    except ProbeError as exc:
        return _fail(str(exc))
    if args.action == "key":
        print(ci.environment_key(stamp))
        return 0
    executor = executor_for(settings, stamp)
    try:
        here = view(project, stamp, executor)
        used = _used(here, executor) | set(_merged_keys(settings.cache_dir))
    finally:
        executor.close()
    key: bytes | None = args.shard_key
    try:
        if args.action == "show":
            return _show(project, stamp, here, used, args.ci_cache, key)
        if args.action == "plan":
            return _plan(project, here, args.ci_cache, key, args.shards)
        if args.action == "prune":
            return _prune(ResultCache(settings.cache_dir), stamp, used, args.dry_run, args.all_environments)
        if args.action == "save":
            return _save(project, stamp, here, args.ci_cache, key)
        return _restore(project, here, args.ci_cache, key)
    except OSError as exc:
        return _fail(f"cache {args.action}: {exc}")


def _fail(message: str, status: int = 1) -> int:
    print(f"error: {message}", file=sys.stderr)
    return status


def _used(here: View, executor: Executor) -> set[str]:
    """Every key a placement here may be looked up under: the runner kind it
    is configured with, and for Python the other kind a build may switch to
    (see :meth:`snipcheck.engine.execute.Executor.plan`)."""
    keys = set(here.keys.values())
    for cells in here.snippets.values():
        for snippet in cells:
            if snippet.language == "python":
                keys.update(executor.key(snippet, kind) for kind in ("fork", "subprocess"))
    return keys


def _merged_keys(cache_dir: Path) -> list[str]:
    """The keys the last merge put in ``cache_dir`` (a GPU shard's are keyed by its own environment)."""
    try:
        record = shard_files.read_merged(cache_dir)
    except ValueError:
        return []
    return [str(k) for k in (record or {}).get("keys", {})]


@dataclass
class _Found:
    """One entry as it lies in a cache folder."""

    key: str
    env: str
    label: str
    bytes: int
    made: float


def _entries(folder: Path, made: dict[str, float] | None = None) -> list[_Found]:
    """Every entry under ``folder/results`` with its environment (from its
    stamp; ``?`` for one that cannot be read) and size; its age from ``made``
    (a CI cache's index) or its file's time."""
    found = []
    for path in sorted((folder / "results").glob("*/*.json")):
        try:
            raw = path.read_bytes()
            stamp = json.loads(raw)["result"]["stamp"]
            env, label = str(stamp.get("env") or "none"), Stamp(**stamp).label()
        except (OSError, ValueError, KeyError, TypeError):
            env, label, raw = "?", "cannot be read", b""
        try:
            when = (made or {}).get(path.stem) or path.stat().st_mtime
        except OSError:
            when = time.time()
        found.append(_Found(path.stem, env, label, len(raw), when))
    return found


def _n(count: int, word: str, plural: str = "") -> str:
    """``1 unit``, ``2 units``; ``1 entry``, ``3 entries`` (with ``plural``)."""
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, length in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= length:
            value = seconds / length
            return f"{value:.0f} {unit}{'s' if unit == 'day' and round(value) != 1 else ''}"
    return f"{seconds:.0f} s"


def _ages(items: Iterable[_Found], now: float) -> str:
    times = [f.made for f in items]
    if not times:
        return ""
    newest, oldest = _age(now - max(times)), _age(now - min(times))
    return f"made {newest} ago" if newest == oldest else f"made {newest} to {oldest} ago"


def _show(project: Project, stamp: Stamp, here: View, used: set[str], ci_cache: Path | None, key: bytes | None) -> int:
    """``snipcheck cache show``: the cache's entries by environment id, with
    how many a placement here uses, their size and age."""
    now = time.time()
    if ci_cache is not None:
        restored = ci.load(ci_cache, key)
        _say(restored)
        made = {k: e.made for k, e in restored.entries.items()}
        found = [f for f in _entries(ci_cache, made) if f.key in restored.entries]
        saved = f", saved {_age(now - restored.saved)} ago" if restored.saved else ""
        under = f" under key {restored.environment}" if restored.environment else ""
        print(f"CI cache {ci_cache}{under}{saved}: {_n(len(found), 'entry', 'entries')}, {_size(sum(f.bytes for f in found))}")
        if restored.environment and restored.environment != ci.environment_key(stamp):
            print(f"  saved in another environment than this one ({ci.environment_key(stamp)}): a build here takes nothing from it")
    else:
        folder = project.settings.cache_dir
        found = _entries(folder)
        print(
            f"result cache {folder}: {_n(len(found), 'entry', 'entries')}, {_size(sum(f.bytes for f in found))}"
            + (f", {_ages(found, now)}" if found else "")
        )
    groups: dict[str, list[_Found]] = defaultdict(list)
    for f in found:
        groups[f.env].append(f)
    for env, items in sorted(groups.items(), key=lambda g: (g[0] != stamp.env, -len(g[1]), g[0])):
        mine = sum(1 for f in items if f.key in used)
        which = ", this one" if env == stamp.env else ""
        name = f"environment {env}" if env != "none" else "no environment id"
        print(
            f"  {name} ({items[0].label}{which}): {_n(len(items), 'entry', 'entries')}, {mine} used by a placement here, "
            f"{_size(sum(f.bytes for f in items))}, {_ages(items, now)}"
        )
    keys = {k for k in here.keys.values()}
    held = {f.key for f in found}
    print(f"placements here ({stamp.label()}, environment {stamp.env}): {len(keys)} results wanted, {len(keys & held)} of them in it")
    return 0


def _say(restored: ci.CICache) -> None:
    for problem in restored.problems:
        print(f"warning: CI cache: {problem}", file=sys.stderr)
    for note in restored.notes:
        print(f"note: CI cache: {note}", file=sys.stderr)


def _get(cache: ResultCache, key: str) -> RunResult | None:
    """``cache``'s result under ``key``; ``None`` for none or a damaged one (a build runs it again)."""
    try:
        return cache.get(key)
    except CacheError:
        return None


def _plan(project: Project, here: View, ci_cache: Path | None, key: bytes | None, shards: int | None) -> int:
    """``snipcheck cache plan``: what a build would take from the cache, what
    would run (per unit: a chain runs whole), and with ``shards``, how."""
    if ci_cache is not None:
        restored = ci.load(ci_cache, key)
        taken = ci.carried_units(here.units, here.keys, restored.take)
        _say(restored)
        name = f"the CI cache {ci_cache}"
    else:
        cache = ResultCache(project.settings.cache_dir)
        taken = ci.carried_units(here.units, here.keys, lambda k: _get(cache, k))
        name = f"the result cache {project.settings.cache_dir}"
    cells = sum(len(u.snippets) for u in here.units)
    got = sum(len(c) for c in taken.values())
    rest = [u for u in here.units if u.id not in taken]
    routed = [u for u in rest if u.requires]
    print(
        f"{name}: a build would take {got} of {_n(cells, 'result')} from it ({len(taken)} of {_n(len(here.units), 'unit')}) "
        f"and run {cells - got} ({_n(len(rest), 'unit')})" + (":" if rest else "")
    )
    for unit in rest[:20]:
        needs = f" (needs {', '.join(unit.requires)}: runs where that is provided)" if unit.requires else ""
        inside = f": {', '.join(unit.snippets)}" if unit.id != unit.snippets[0] or len(unit.snippets) > 1 else ""
        print(f"  {unit.id}{inside}{needs}")
    if len(rest) > 20:
        print(f"  and {len(rest) - 20} more")
    if shards:
        settings = project.settings
        durations = shard_files.read_timings(settings.timings_file or settings.root / "snipcheck-timings.json")
        planned = plan(rest, shards, durations)
        loads = ", ".join(
            f"shard {k}/{shards} {_n(len(planned.of(k)), 'unit')}, {planned.loads[k - 1]:.2f} s" for k in range(1, shards + 1)
        )
        left = f"; {len(routed)} unit(s) need a requirement shard" if routed else ""
        print(f"with {shards} shard(s): {loads} (planned from the timing file){left}")
    return 0


def _prune(cache: ResultCache, stamp: Stamp, used: set[str], dry_run: bool, every: bool) -> int:
    """``snipcheck cache prune``: remove the entries (and their lock files)
    that no placement uses here; those of other environments only with ``every``."""
    found = _entries(cache.directory)
    gone = [f for f in found if f.key not in used and (every or f.env == stamp.env or f.env == "?")]
    kept_other = sum(1 for f in found if f.key not in used and f not in gone)
    for f in gone if not dry_run else ():
        cache.discard(f.key)
        (cache.directory / "locks" / f"{f.key}.lock").unlink(missing_ok=True)
    verb = "would remove" if dry_run else "removed"
    other = (
        f"; kept {kept_other} made in other environments (--all-environments removes them)" if kept_other else ""
    )
    print(
        f"result cache {cache.directory}: {verb} {len(gone)} of {_n(len(found), 'entry', 'entries')} ({_size(sum(f.bytes for f in gone))}) "
        f"that no placement uses here{other}"
    )
    return 0


def _save(project: Project, stamp: Stamp, here: View, folder: Path, key: bytes | None) -> int:
    """``snipcheck cache save --ci-cache DIR``: the CI cache of these placements from the build's cache."""
    previous = ci.load(folder, key) if (folder / ci.INDEX).is_file() else None
    wanted = {k: sid for (_, sid), k in here.keys.items()}
    saved = ci.save(folder, ResultCache(project.settings.cache_dir), wanted, stamp, key, previous)
    signed = (
        f"signed with the key of id {shard_key.key_id(key)}" if key is not None
        else f"not signed ({shard_key.KEY_VARIABLE} is not set)"
    )  # fmt: skip
    absent = f"; {saved.absent} placed result(s) are not in the build's cache (a failed run is not kept)" if saved.absent else ""
    print(
        f"saved {saved.entries} result(s) ({_size(saved.bytes)}) into {folder} for {ci.environment_key(stamp)}, "
        f"{signed}{absent}"
    )
    return 0


def _restore(project: Project, here: View, folder: Path, key: bytes | None) -> int:
    """``snipcheck cache restore --ci-cache DIR``: copy every result the CI
    cache holds for a placement here into the build's cache (each checked,
    see :meth:`snipcheck.shard.carried.CICache.take`), and leave the record
    the build's summary counts them from."""
    restored = ci.load(folder, key)
    cache = ResultCache(project.settings.cache_dir)
    why = cache.unwritable()
    if why:
        raise OSError(why)
    taken: list[tuple[str, str]] = []
    for (_, sid), k in sorted(here.keys.items()):
        result = restored.take(k)
        if result is not None:
            cache.put(k, sid, result)
            taken.append((k, sid))
    _say(restored)
    ci.write_record(project.settings.cache_dir, restored, taken)
    print(f"restored {len(taken)} of {len(here.keys)} result(s) from {folder} into {project.settings.cache_dir}")
    return 0
