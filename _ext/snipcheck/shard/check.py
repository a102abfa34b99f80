"""``snipcheck execute --merge DIR... --check N``: run a sample of the shards' results again here.

A manifest's SHA-256s and its signature (:mod:`snipcheck.shard.key`) say
that an entry is what a shard job stored; they cannot say that the job ran
the code it names: a shard job that runs changed code, or a folder forged
without a key, stores whatever output it likes.  The merge therefore runs a
few of the shards' units again on its own machine, in a result cache of its
own, and compares each cell's output with the shard's (:func:`difference`).

Which units: :func:`draw` takes those this machine can run (none that needs
a requirement, none a shard ran in an environment of its own), keeps the
faster half of them by the timing file (each unit's recorded seconds), and
draws ``N`` of that half at random with a seed the merge prints (the same
seed draws the same units again).  A fixed choice would be one that whoever
forges a shard can leave alone; a draw made when the merge starts is not.

Pure core: the standard library and snipcheck's core modules.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from snipcheck.judge.compare import ending, judge, terminal_text, text_diff
from snipcheck.judge.normalize import Normalizer
from snipcheck.model import RunResult, Snippet
from snipcheck.shard.plan import DEFAULT_SECONDS, Unit

__all__ = ["DEFAULT", "Drawn", "difference", "draw"]

#: Units a merge runs again when ``--check`` is not given (see guide/shards.rst,
#: "What the merge proves": 5 draws miss a shard that forged a third of all
#: results about one time in eight, (2/3)**5, and cost a few seconds).
DEFAULT = 5


@dataclass(frozen=True)
class Drawn:
    """The units a merge runs again.

    :param units: their ids, sorted.
    :param eligible: how many units this machine could run again.
    :param pool: how many of those the draw was made from (the faster ones).
    :param seed: the seed of the draw (``--check-seed``).
    """

    units: tuple[str, ...]
    eligible: int
    pool: int
    seed: int


def draw(
    units: Sequence[Unit], eligible: Collection[str], durations: Mapping[str, float], count: int | None, seed: int
) -> Drawn:
    """Draw ``count`` of the ``eligible`` units (``None``: all of them) from
    the faster half of them, by the seconds ``durations`` (the timing file)
    records (:data:`snipcheck.shard.plan.DEFAULT_SECONDS` for a unit it does not
    know); the same arguments draw the same units."""

    def seconds(unit: Unit) -> float:
        value = durations.get(unit.id)
        return float(value) if isinstance(value, int | float) and value >= 0 else DEFAULT_SECONDS

    ordered = sorted((u for u in units if u.id in eligible), key=lambda u: (seconds(u), u.id))
    if count is None:
        return Drawn(tuple(sorted(u.id for u in ordered)), len(ordered), len(ordered), seed)
    size = min(len(ordered), max(count, (len(ordered) + 1) // 2))
    pool = [u.id for u in ordered[:size]]
    return Drawn(tuple(sorted(random.Random(seed).sample(pool, min(count, size)))), len(ordered), size, seed)


def difference(
    snippet: Snippet,
    stated: str | None,
    theirs: RunResult,
    ours: RunResult,
    normalizers: Sequence[Normalizer],
    labels: tuple[str, str],
) -> str:
    """``""`` when a run here agrees with a shard's result of ``snippet``,
    else what differs, as a diff from ``labels[0]`` (the shard) to ``labels[1]``.

    They agree when both match the ``stated`` output as a build judges it
    (its wildcards and normalizers: a part that varies from run to run where
    the page says it may is no difference), or else when their outputs are
    equal after the normalizers and they ended alike.
    """
    agree = stated is not None and judge(snippet.tags, theirs, stated, normalizers).ok
    if agree and stated is not None and judge(snippet.tags, ours, stated, normalizers).ok:
        return ""
    a, b = terminal_text(theirs, normalizers), terminal_text(ours, normalizers)
    diff = text_diff(a, b, normalizers, labels[0], labels[1], wildcards=False)
    if diff:
        return diff
    if ending(theirs) != ending(ours):
        return f"--- {labels[0]}: it {ending(theirs)}\n+++ {labels[1]}: it {ending(ours)}"
    return ""
