"""The CI cache: a build's results carried from one CI run to the next, checked on load.

A CI engine keeps a folder between runs (GitHub's ``actions/cache``) under a
key it is told; :func:`environment_key` is that key's stem for this
environment (``snipcheck cache key`` prints it): the environment stamp, with
the id of the environment fingerprint (the interpreter, every installed
distribution, the variables passed to snippets: :mod:`snipcheck.run.fingerprint`)
and the runner's version, so a new version of anything starts another cache.
Within one environment each entry is keyed as in any result cache
(:func:`snipcheck.engine.cache.cache_key`: source, tags, declared files and
variables...), so an edited snippet misses and runs, and the rest is taken.

A CI cache folder holds result-cache entries (``DIR/results/...``) and
``DIR/index.json``, which :func:`save` writes::

    {"schema": "snipcheck-ci-cache/1", "environment": "<environment key>",
     "stamp": {...}, "saved": <unix seconds>,
     "entries": {"<key>": {"snippet": "<id>", "sha256": "<hex>", "bytes": <n>, "made": <unix seconds>}},
     "signature": {...}}

A restored entry counts only if it is what the index says (its bytes'
SHA-256) and the entry of its key (the key it holds, its schema); anything
else is ignored, said once, and its snippet runs again (:meth:`CICache.take`).
With the shards' key (:mod:`snipcheck.shard.key`, ``SNIPCHECK_SHARD_KEY``) the
index is signed as a whole (HMAC-SHA256 over its canonical JSON), and a
reader with the key takes nothing from an index that is unsigned, signed with
another key or changed since: only a run that holds the key (CI on the
default branch) can make entries that later runs take.

:func:`carried_units` picks the units (:mod:`snipcheck.shard.plan`) whose
every result the cache holds: a sharded build leaves them out of its plan,
and the merge copies their entries into the build's cache and names their
keys in :data:`RECORD` there, so the final build counts them apart.

Pure core: standard library, :mod:`snipcheck.engine.cache`, :mod:`snipcheck.shard`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snipcheck.engine.cache import RUNNER_VERSION, ResultCache
from snipcheck.files import write_atomic
from snipcheck.model import RunResult, Stamp
from snipcheck.shard import key as shard_key
from snipcheck.shard.plan import Unit

__all__ = [
    "INDEX", "RECORD", "SCHEMA", "CICache", "Saved", "carried_units", "environment_key", "load",
    "read_record", "save", "write_record",
]  # fmt: skip

SCHEMA = "snipcheck-ci-cache/1"
INDEX = "index.json"
#: The record a merge (or ``snipcheck cache restore``) leaves in the build's
#: cache: the keys it took from a CI cache, for the build's summary.
RECORD = "carried.json"
RECORD_SCHEMA = "snipcheck-carried/1"
#: Put before the canonical index in the signed message: a CI cache index's
#: signature is never a shard manifest's (:mod:`snipcheck.shard.key`).
_DOMAIN = b"snipcheck CI cache index signature\n"


def environment_key(stamp: Stamp) -> str:
    """The stem of the CI cache's key in the environment ``stamp``:
    ``snipcheck-results-py3.11.7-torch2.13.0-cpu-<16 hex digits>``; the
    digits hash the whole stamp (its environment id included), the runner's
    version and this format, the words are for people."""
    whole = json.dumps(
        {"stamp": dataclasses.asdict(stamp), "runner": RUNNER_VERSION, "schema": SCHEMA}, sort_keys=True
    ).encode()
    words = [f"py{stamp.python}", f"torch{stamp.torch.split('+')[0]}" if stamp.torch else "notorch", stamp.device.split()[0]]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "", "-".join(words).lower())
    return f"snipcheck-results-{slug}-{hashlib.sha256(whole).hexdigest()[:16]}"


@dataclass(frozen=True)
class Entry:
    """One line of the index: the entry of a key."""

    snippet: str
    sha256: str
    bytes: int
    made: float


@dataclass
class CICache:
    """A CI cache folder as :func:`load` found it.

    :param folder: the folder.
    :param id: a digest of its index (``""`` when it has none): two jobs that
        restored the same cache see the same id.
    :param environment: the environment key it was saved under (``""``: none).
    :param entries: key → its line in the index; empty when the index could
        not be used (see ``problems``).
    :param problems: what a reader must be warned of, once: an index not
        used, entries ignored by :meth:`take` (their snippets run again).
    :param notes: what a reader must be told once: a signature not checked here.
    :param saved: when it was saved (unix seconds), 0 when unknown.
    """

    folder: Path
    id: str = ""
    environment: str = ""
    entries: dict[str, Entry] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    saved: float = 0.0
    _taken: dict[str, RunResult | None] = field(default_factory=dict, repr=False)

    def take(self, key: str) -> RunResult | None:
        """The result stored under ``key``, or ``None`` if there is none or
        it is not what the index says (:attr:`problems` says so, once per entry)."""
        if key in self._taken:
            return self._taken[key]
        entry = self.entries.get(key)
        result = None if entry is None else self._check(key, entry)
        self._taken[key] = result
        return result

    def _check(self, key: str, entry: Entry) -> RunResult | None:
        path = ResultCache(self.folder).path(key)
        where = f"{entry.snippet} (key {key[:12]})"
        try:
            raw = path.read_bytes()
        except OSError as exc:
            self.problems.append(f"{where}: its entry cannot be read ({exc.strerror or exc}); it runs again")
            return None
        found = hashlib.sha256(raw).hexdigest()
        if not hmac.compare_digest(found, entry.sha256):
            self.problems.append(
                f"{where}: its entry is not what the cache's index says (sha256 {found[:12]}, the index says "
                f"{entry.sha256[:12]}): damaged or edited by hand; it is ignored and runs again"
            )
            return None
        try:
            data = json.loads(raw)
            if data.get("key") != key or data.get("snippet") != entry.snippet:
                raise ValueError("it holds another key or snippet than its name and the index say")
            result = ResultCache(self.folder).get(key)
        except Exception as exc:  # noqa: BLE001 - any damage means: not taken
            self.problems.append(f"{where}: its entry cannot be used ({exc}); it is ignored and runs again")
            return None
        return result


def load(folder: Path, key: bytes | None) -> CICache:
    """Read the CI cache in ``folder`` (a folder that does not exist is an
    empty cache: the first run, or no cache was restored).

    :param key: the shards' key: with it, only an index signed with it counts.
    """
    folder = Path(folder)
    path = folder / INDEX
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        absent = [] if not folder.exists() else [f"{folder} holds no {INDEX}: no result is taken from it"]
        return CICache(folder, problems=absent)
    except OSError as exc:
        return CICache(folder, problems=[f"cannot read {path} ({exc.strerror or exc}): no result is taken from it"])
    cache = CICache(folder, id=hashlib.sha256(raw).hexdigest()[:16])
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} index")
        entries = {
            str(k): Entry(str(v["snippet"]), str(v["sha256"]), int(v["bytes"]), float(v["made"]))
            for k, v in dict(data["entries"]).items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        cache.problems.append(f"{path} is damaged ({exc}): no result is taken from it; every snippet runs")
        return cache
    problem = _signature_problem(data, key)
    if problem:
        cache.problems.append(f"{path} {problem}: no result is taken from it; every snippet runs")
        return cache
    if key is None and data.get("signature") is not None:
        cache.notes.append(
            f"{path} is signed, but {shard_key.KEY_VARIABLE} is not set here: its entries are checked against "
            "its index, not for where they came from"
        )
    cache.entries = entries
    cache.environment = str(data.get("environment", ""))
    saved = data.get("saved")
    cache.saved = float(saved) if isinstance(saved, int | float) else 0.0
    return cache


def _signature(index: Mapping[str, Any], key: bytes) -> dict[str, str]:
    message = _DOMAIN + shard_key.canonical(index)
    return {"algorithm": shard_key.ALGORITHM, "key_id": shard_key.key_id(key), "hmac": hmac.new(key, message, hashlib.sha256).hexdigest()}


def _signature_problem(index: Mapping[str, Any], key: bytes | None) -> str:
    """What is wrong with ``index``'s signature under ``key`` (``""``: nothing, or no key to check it with)."""
    if key is None:
        return ""
    found = index.get("signature")
    if found is None:
        return f"is not signed, though {shard_key.KEY_VARIABLE} is set here (a cache saved without the key)"
    if not isinstance(found, dict) or not isinstance(found.get("hmac"), str):
        return "has a damaged signature"
    if not hmac.compare_digest(str(found.get("key_id", "")).encode(), shard_key.key_id(key).encode()):
        return f"is signed with another key (key id {str(found.get('key_id'))[:12]}, here {shard_key.key_id(key)})"
    if not hmac.compare_digest(found["hmac"].encode(), _signature(index, key)["hmac"].encode()):
        return "does not match its signature: it was changed after it was saved"
    return ""


def carried_units(
    units: Iterable[Unit], keys: Mapping[tuple[str, str], str], take: Callable[[str], RunResult | None] | None
) -> dict[str, tuple[tuple[str, str, RunResult], ...]]:
    """The units whose every result a cache holds: unit id → ``(snippet
    id, key, result)`` per snippet, in the unit's order.

    Only a unit that needs nothing routed (:attr:`Unit.requires` empty) is
    carried: one that does runs where it is provided, under that
    environment's keys.  The choice is a function of the cache's bytes and
    the checkout, so every shard and the merge that restored one cache make it alike.

    :param keys: ``(unit id, snippet id)`` → the cache key computed here.
    :param take: key → the result the cache holds under it, checked
        (:meth:`CICache.take`), or ``None``; ``None``: no cache.
    """
    found: dict[str, tuple[tuple[str, str, RunResult], ...]] = {}
    if take is None:
        return found
    for unit in units:
        if unit.requires or not unit.snippets:
            continue
        cells = []
        for sid in unit.snippets:
            key = keys.get((unit.id, sid))
            result = take(key) if key else None
            if key is None or result is None:
                break
            cells.append((sid, key, result))
        else:
            found[unit.id] = tuple(cells)
    return found


@dataclass(frozen=True)
class Saved:
    """What :func:`save` wrote: ``entries`` and their ``bytes``; ``absent``:
    wanted keys the build's cache does not hold (a run that failed is not
    kept); ``signed``: whether the index is signed."""

    entries: int
    bytes: int
    absent: int
    signed: bool


def save(
    folder: Path,
    source: ResultCache,
    wanted: Mapping[str, str],
    stamp: Stamp,
    key: bytes | None,
    previous: CICache | None = None,
) -> Saved:
    """Write a fresh CI cache into ``folder`` from the build's cache
    ``source``: the entries of the keys in ``wanted`` (key → snippet id:
    what the placements use here, so nothing else is carried on), each as it
    reads back whole, and the index, signed with ``key`` if given.  The old
    folder is replaced only once the new one is complete.

    :param previous: the cache restored before this run: an entry it held
        keeps the time it was first made (the age ``snipcheck cache`` shows).
    :raises OSError: if ``folder`` cannot be written, or is something else
        than a CI cache or an empty folder (it is never replaced then).
    """
    folder = Path(folder)
    if folder.is_symlink() or folder.exists() and not (folder.is_dir() and (not any(folder.iterdir()) or (folder / INDEX).is_file())):
        raise OSError(
            f"{folder} is not a CI cache folder (no {INDEX} in it) and not an empty folder: nothing was written, "
            "so that nothing else is replaced; give a new folder's path"
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        target = ResultCache(staging)
        entries: dict[str, dict[str, Any]] = {}
        total = absent = 0
        for k, snippet_id in sorted(wanted.items()):
            path = source.path(k)
            try:
                raw = path.read_bytes()
                if source.get(k) is None:
                    raise FileNotFoundError(k)
                made = path.stat().st_mtime
            except Exception:  # noqa: BLE001 - absent or damaged: not carried on
                absent += 1
                continue
            digest = hashlib.sha256(raw).hexdigest()
            if previous is not None and k in previous.entries and previous.entries[k].sha256 == digest:
                made = previous.entries[k].made
            write_atomic(target.path(k), raw, durable=False)
            entries[k] = {"snippet": snippet_id, "sha256": digest, "bytes": len(raw), "made": round(made, 3)}
            total += len(raw)
        index: dict[str, Any] = {
            "schema": SCHEMA, "environment": environment_key(stamp), "stamp": dataclasses.asdict(stamp),
            "saved": round(time.time(), 3), "entries": entries,
        }  # fmt: skip
        if key is not None:
            index["signature"] = _signature(index, key)
        write_atomic(staging / INDEX, (json.dumps(index, indent=1, sort_keys=True) + "\n").encode())
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}-old-", dir=folder.parent))
            os.replace(folder, old / folder.name)
            os.replace(staging, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Saved(len(entries), total, absent, key is not None)


def write_record(cache_dir: Path, cache: CICache | None, keys: Collection[tuple[str, str]]) -> None:
    """Leave in the build's cache ``cache_dir`` the record of the results
    taken from ``cache`` (``(key, snippet id)`` each); with none, remove an
    older record, so that no build counts results a past restore took.

    :raises OSError: if it cannot be written.
    """
    path = Path(cache_dir) / RECORD
    if cache is None or not keys:
        path.unlink(missing_ok=True)
        return
    data = {"schema": RECORD_SCHEMA, "cache": str(cache.folder), "id": cache.id, "keys": dict(sorted(keys))}
    write_atomic(path, (json.dumps(data, indent=1) + "\n").encode())


def read_record(cache_dir: Path) -> dict[str, str]:
    """Key → snippet id of the results the last merge or restore took from a
    CI cache into ``cache_dir``; ``{}`` when there is no record (or a damaged one)."""
    try:
        data = json.loads((Path(cache_dir) / RECORD).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != RECORD_SCHEMA or not isinstance(data.get("keys"), dict):
        return {}
    return {str(k): str(v) for k, v in data["keys"].items()}


def check_shards(shards: Iterable[tuple[Path, Any]], taken: Collection[str], cache: CICache | None) -> None:
    """Refuse a merge whose ``--shard K/N`` shards (``(folder, manifest)``
    each, :class:`snipcheck.shard.files.Manifest`) left out other units than
    the merge takes from its CI cache (``taken``): they restored another
    cache, or none, and the plans they made are not the merge's.

    :raises snipcheck.shard.files.MergeError: naming the first shard that differs and a unit.
    """
    from snipcheck.shard.files import MergeError

    ours = sorted(taken)
    here = f"this merge's CI cache ({cache.folder})" if cache is not None else "this merge, given no CI cache,"
    for folder, m in shards:
        k, n = m.shard
        if k <= 0 or m.carried is None and not ours:
            continue  # a shard outside the N runs what it provides every time
        theirs = list(m.carried or ())
        if theirs == ours:
            continue
        unit = min(set(theirs) ^ set(ours))
        if m.carried is None:
            what = f"shard {k}/{n} was given no CI cache (--ci-cache DIR) and ran or planned every unit"
        else:
            what = f"shard {k}/{n} took {len(theirs)} unit(s) from the CI cache it restored"
        side = "the shard's" if unit in theirs else "this merge's"
        raise MergeError(
            f"{folder}: {what}, {here} holds {len(ours)} ({unit} is only in {side}): every shard and the merge "
            "must restore the same CI cache (a newer one saved while this run went on, or one that a job could "
            "not restore); give each the same --ci-cache DIR, or run them all again"
        )
