"""Checks behind prose claims and refuted-claim blocks (pure core).

*Claim*: prose cites a value from a snippet's output (written
``{claim}`0.0 <inplace/form4-data>``` in MyST).  :func:`claim_problem` says
whether the value still appears in that snippet's output.

*Refuted claim*: a block quotes a common belief and places a snippet that
tests it.  The snippet prints its own verdict as a line
``belief holds: True`` or ``belief holds: False`` (``说法成立：True/False``
also works), computed from what it observed, so the reader sees the test and
its result.  :func:`belief_problem` checks that verdict against what the
chapter says (refuted, or the one belief that holds) and flags the day a
release makes a refuted belief true.

Pure core: standard library only.
"""

from __future__ import annotations

import re

BELIEF_MARKER = re.compile(r"^\s*(?:belief holds|说法成立)\s*[:：]\s*(True|False)\s*$", re.MULTILINE)


def parse_claim(text: str) -> tuple[str, str] | None:
    """Split ``"VALUE <snippet-id>"`` into ``(value, snippet_id)``, or ``None``."""
    m = re.fullmatch(r"\s*(?P<value>.+?)\s*<(?P<id>[^<>\s]+)>\s*", text, re.DOTALL)
    return (m.group("value"), m.group("id")) if m else None


def claim_problem(value: str, output: str) -> str | None:
    """``None`` if ``value`` occurs in ``output``; else a sentence saying so.

    :param output: the snippet's terminal text (display-normalized), or its
        stated output when this build cannot run it.
    """
    if value in output:
        return None
    return f"the value {value!r} no longer appears in the output"


def belief_verdict(output: str) -> bool | None:
    """The snippet's own verdict (the last ``belief holds:`` line), or ``None``."""
    found = BELIEF_MARKER.findall(output)
    return None if not found else found[-1] == "True"


def belief_problem(output: str, *, holds: bool) -> tuple[str, str] | None:
    """Check a refuted-claim snippet's verdict.

    :param holds: ``False`` when the chapter says the belief is refuted,
        ``True`` for a belief the chapter says holds.
    :return: ``None`` if the output agrees with the chapter, else
        ``(subtype, sentence)``: ``"tag"`` when the snippet prints no verdict,
        ``"drift"`` when the verdict contradicts the chapter.
    """
    verdict = belief_verdict(output)
    if verdict is None:
        return "tag", (
            "a refuted-claim snippet must print its verdict as a line 'belief holds: True' or "
            "'belief holds: False', computed from what it observed"
        )
    if verdict != holds:
        if holds:
            return "drift", "the chapter says this belief holds, but the snippet now finds it false"
        return "drift", (
            "the chapter says this belief is refuted, but the snippet now finds it true on this "
            "version: re-examine the claim and rewrite the section"
        )
    return None
