"""Plan a sharded build: which machine runs which snippets.

A build split over ``N`` machines (``snipcheck execute --shard K/N``, see
``guide/shards.rst``) must give every snippet to exactly one shard, and
every machine works the plan out on its own: each shard, and the merge that
checks them, computes it from the same inputs (the placements, the
committed timing file, ``N``), so the plan is a pure function of them.

A *unit* is what one shard runs whole: a snippet outside any chain, or a
whole chain (its cells share one process, see :mod:`snipcheck.sources.chains`).
Units are packed longest first (LPT, Graham 1969: each unit, by falling
recorded seconds, goes to the shard with the least planned seconds so far);
a unit without a recorded duration counts :data:`DEFAULT_SECONDS`; ties are
broken by unit id, then by the lower shard index, so no ordering of the
input changes the plan.

A unit whose snippets need ``cuda`` or a ``snipcheck_requirements`` name
(on every machine alike, with a GPU or without: see
:func:`snipcheck.run.requirements.routed`), or another requirement this
environment does not meet, is *routed*: it goes only to a shard started with ``--provides`` for
each of them, the least loaded of those, after every unrouted unit is
packed; a unit no shard provides for is left out of the plan (``None``).
The unrouted units' plan does not depend on what any shard provides, so a
shard that knows only its own ``--provides`` plans them as every other does
(:attr:`Plan.digest`).

A *requirement shard* (``snipcheck execute --provides NAME`` without
``--shard``) stands outside the ``N``: it runs the routed units whose
requirements it provides, and nothing else (:func:`for_provided`), so a
machine of another kind (a GPU one, with its own torch build) runs only what
needs it, and no output of a unit that needs nothing is made there.

Pure core: standard library and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from snipcheck.model import Snippet

__all__ = ["DEFAULT_SECONDS", "Plan", "Unit", "for_provided", "plan", "units"]

#: Planned seconds of a unit the timing file does not know yet (a new snippet).
DEFAULT_SECONDS = 1.0
#: The prefix of a chain's unit id: ``"chain:<docname>:<chain name>"``.
CHAIN = "chain:"


@dataclass(frozen=True)
class Unit:
    """What one shard runs whole.

    :param id: the snippet id, or ``chain:<docname>:<name>`` for a chain.
    :param snippets: the ids of its snippets (a chain's cells in page order).
    :param requires: the requirements it needs that the environment does not
        meet by itself, sorted: the shard that runs it must provide them.
    :param free: the ids of its snippets that a build providing none of
        ``requires`` still runs: a chain's cells before the first one that
        needs one (the cells after it are stopped with it); none for a
        snippet outside a chain that needs one.
    """

    id: str
    snippets: tuple[str, ...]
    requires: tuple[str, ...] = ()
    free: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """An assignment of units to ``count`` shards.

    :param assignment: unit id → shard index (1-based), or ``None`` for a
        routed unit that no shard provides for.
    :param loads: planned seconds per shard (index 0 is shard 1).
    :param digest: a digest of ``count`` and the unrouted units' shards:
        the part of the plan that every shard computes alike.
    """

    count: int
    assignment: Mapping[str, int | None]
    loads: tuple[float, ...]
    digest: str

    def of(self, shard: int) -> list[str]:
        """The ids of the units given to ``shard``, sorted."""
        return sorted(u for u, k in self.assignment.items() if k == shard)

    @property
    def spread(self) -> float:
        """Planned seconds of the most loaded shard less those of the least loaded."""
        return max(self.loads) - min(self.loads) if self.loads else 0.0


def units(snippets: Iterable[Snippet], unmet: Callable[[Snippet], Collection[str]]) -> list[Unit]:
    """Group ``snippets`` (a project's, in page order) into units.

    :param unmet: the requirements of a snippet the environment does not
        meet by itself (e.g. :func:`snipcheck.run.requirements.missing` with the
        configured ``snipcheck_provides``).
    :return: one unit per chain (``Snippet.chain``) and one per other
        snippet id (a snippet placed twice runs once), sorted by id.
    """
    members: dict[str, list[str]] = {}
    needs: dict[str, set[str]] = {}
    free: dict[str, list[str]] = {}
    for snippet in snippets:
        uid = CHAIN + snippet.chain if snippet.chain else snippet.id
        cells = members.setdefault(uid, [])
        if snippet.id in cells:
            continue
        cells.append(snippet.id)
        lacking = set(unmet(snippet))
        if not lacking and not needs.get(uid):
            free.setdefault(uid, []).append(snippet.id)
        needs.setdefault(uid, set()).update(lacking)
    return [
        Unit(uid, tuple(members[uid]), tuple(sorted(needs[uid])), tuple(free.get(uid, ())) if needs[uid] else ())
        for uid in sorted(members)
    ]


def plan(
    all_units: Iterable[Unit],
    count: int,
    durations: Mapping[str, float],
    provides: Mapping[int, Collection[str]] | None = None,
    default: float = DEFAULT_SECONDS,
) -> Plan:
    """Pack ``all_units`` onto ``count`` shards, longest first (see the module docstring).

    :param durations: recorded seconds per unit id (the timing file).
    :param provides: shard index → the requirements it provides (``--provides``).
    :param default: seconds of a unit without a recorded duration.
    :raises ValueError: if ``count`` is less than 1.
    """
    if count < 1:
        raise ValueError(f"a plan needs at least one shard, not {count}")
    given = {k: frozenset(v) for k, v in (provides or {}).items()}
    loads = [0.0] * count
    assignment: dict[str, int | None] = {}

    def seconds(unit: Unit) -> float:
        value = durations.get(unit.id)
        return float(value) if isinstance(value, int | float) and value >= 0 else default

    ordered = sorted(all_units, key=lambda u: (-seconds(u), u.id))
    for unit in [u for u in ordered if not u.requires] + [u for u in ordered if u.requires]:
        eligible = [k for k in range(1, count + 1) if set(unit.requires) <= given.get(k, frozenset())]
        if not eligible:
            assignment[unit.id] = None
            continue
        k = min(eligible, key=lambda k: (loads[k - 1], k))
        loads[k - 1] += seconds(unit)
        assignment[unit.id] = k
    unrouted = sorted((u.id, assignment[u.id]) for u in ordered if not u.requires)
    digest = hashlib.sha256(json.dumps([count, unrouted]).encode("utf-8")).hexdigest()[:16]
    return Plan(count, assignment, tuple(round(x, 3) for x in loads), digest)


def for_provided(all_units: Iterable[Unit], provides: Collection[str]) -> list[str]:
    """The ids of the routed units a requirement shard providing ``provides``
    runs: those that need something, all of it in ``provides``; sorted."""
    given = set(provides)
    return sorted(u.id for u in all_units if u.requires and set(u.requires) <= given)
