"""A pending change: what ``record``, ``accept`` and ``review`` would write for one snippet.

Every command that writes stated outputs decides, snippet by snippet, a
:class:`Change`: where it sits (the placement), the output the page states
now, the new one, and the :class:`Decision` taken on it with the reason.
The rules that decide live beside this module (:mod:`snipcheck.pending.rules`
for ``record``, :mod:`snipcheck.app.accept` reads a verify report); one
commit (:func:`snipcheck.pending.commit.commit`) writes every accepted change.

Pure core: standard library, :mod:`snipcheck.model`,
:mod:`snipcheck.sources.placement`, :mod:`snipcheck.sources.rewrite`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from snipcheck.model import Figure
from snipcheck.sources.placement import Placement
from snipcheck.sources.rewrite import Edit


class Decision(enum.StrEnum):
    """What becomes of a pending change."""

    #: Written: the new stated output (and figures) go into the page.
    ACCEPT = "accept"
    #: Left as it is, and that is no fault (not run here, say).
    SKIP = "skip"
    #: Not written, and the command fails: a rule forbids it (the reason says which and what to do).
    REFUSED = "refused"


@dataclass(frozen=True)
class Change:
    """One snippet's pending change.

    :param snippet_id: the snippet's id.
    :param placement: where its stated output sits (``None`` when no page
        places it any more).
    :param old: the stated output the page holds now.
    :param new: the new stated output, or ``None`` when the page keeps its
        text (only the stated figures change, or nothing is written).
    :param decision: what becomes of it.
    :param reason: for a skipped or refused change, the words said after
        where it sits (they name the rule and what to do); ``""`` otherwise.
    :param options: directive options to set with the new output (``stated-env``).
    :param figures: the run's figures, to become the snippet's stated files
        (:func:`snipcheck.judge.figures.write_recorded`); ``None``: its
        figure files are left alone.
    :param diff: the stated against the actual output, as shown before writing
        (its labels differ from command to command; two changes that write
        the same are equal whatever their diffs).
    """

    snippet_id: str
    placement: Placement | None
    old: str
    new: str | None
    decision: Decision
    reason: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    figures: tuple[Figure, ...] | None = None
    diff: str = field(default="", compare=False)  # how it is shown, not what is written

    @property
    def accepted(self) -> bool:
        return self.decision is Decision.ACCEPT

    def edit(self) -> Edit | None:
        """The page edit this change makes, or ``None`` (not accepted, or only figures)."""
        if not self.accepted or self.new is None or self.placement is None:
            return None
        return Edit(self.placement, self.new, self.options)


def accept(
    placement: Placement,
    new: str | None,
    *,
    options: Mapping[str, str] | None = None,
    figures: tuple[Figure, ...] | None = None,
    diff: str = "",
) -> Change:
    """An accepted change of ``placement``'s stated output to ``new``."""
    return Change(placement.snippet_id, placement, placement.stated, new, Decision.ACCEPT, "", dict(options or {}), figures, diff)


def refuse(snippet_id: str, placement: Placement | None, reason: str, *, diff: str = "") -> Change:
    """A refused change: nothing is written for it, and the command fails."""
    old = placement.stated if placement is not None else ""
    return Change(snippet_id, placement, old, None, Decision.REFUSED, reason, diff=diff)


def skip(placement: Placement, reason: str) -> Change:
    """A skipped change: the page keeps its output, and that is no fault."""
    return Change(placement.snippet_id, placement, placement.stated, None, Decision.SKIP, reason)


def edits(changes: Iterable[Change]) -> list[Edit]:
    """The page edits of the accepted changes, in order."""
    return [edit for change in changes if (edit := change.edit()) is not None]
