"""An output as a verify report holds it: what varies from run to run written as a wildcard.

A verify report is committed (the chapter's versions page is made from it),
so two runs of unchanged code must give the same bytes.  An actual output
can hold what changes on every run, and the comparison ignores it: a part a
stated ``[..]`` or ``...`` accepts (a time, a count of lines), or one a
compare-only normalizer masks (a memory address, the date, time and process
id of torch's own log lines).  :func:`steady` writes such an output the way
the page's wildcards write it:

1. each part a normalizer masks as changing from run to run
   (:attr:`snipcheck.judge.normalize.Normalizer.mask`) becomes ``[..]``;
2. each actual line that a stated line with ``[..]`` accepts (after the
   display normalizers, in the alignment of :func:`snipcheck.judge.alignment.align`)
   is written as that stated line; the lines a ``...`` covers become one
   ``...`` line, while one of its neighbouring stated lines (or the start
   or end of the output) still anchors it, as ``record`` keeps it.

The report's diffs are then made from the stated output (its run-varying
parts masked alike) and that steady actual output, so they hold no time
either; what changed between stated and actual is shown as before.  The
output as it ran stays in memory (:attr:`snipcheck.report.verify.SnippetReport.run_actual`)
for ``accept`` and ``review`` after a verify run.

Pure core: standard library, :mod:`snipcheck.judge.normalize`,
:mod:`snipcheck.judge.wildcards`, :mod:`snipcheck.judge.alignment`,
:mod:`snipcheck.judge.compare`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from snipcheck.judge.alignment import align, anchored
from snipcheck.judge.compare import text_diff
from snipcheck.judge.normalize import Normalizer, mask_runs
from snipcheck.judge.wildcards import INLINE, LINES, fit, prepare, uses_wildcards

#: The seconds in a problem sentence about a run that timed out: they are
#: about its limit, but measured.
_SECONDS = re.compile(r"\b(timed out after )\d+(?:\.\d+)? s\b")


@dataclass(frozen=True)
class Steady:
    """The texts of one snippet's entry in a verify report.

    :param actual: the actual output, what varies written as wildcards.
    :param diff: stated → actual after every normalizer (``""``: they match).
    :param masked_diff: stated → actual after the display normalizers only.
    """

    actual: str
    diff: str
    masked_diff: str


def actual(stated: str, text: str, normalizers: Sequence[Normalizer]) -> str:
    """``text`` (an actual output after the display normalizers) with what
    varies from run to run written as wildcards (see the module docstring)."""
    text = mask_runs(text, normalizers)
    if not uses_wildcards(stated):
        return text
    pattern, _ = fit(prepare(stated, normalizers, masking=False), stated, text)
    lines = text.split("\n")
    ops = align(pattern, lines)
    held = {op.i for op in ops if op.kind == "="}
    out: list[str] = []
    for op in ops:
        line = pattern.lines[op.i] if op.i >= 0 else None
        if op.kind == "=" and line is not None and len(line) > 1:
            out.append(INLINE.join(line))
        elif op.kind in "=~+":
            out.append(lines[op.j])
        elif op.kind == "..." and op.k > op.j and anchored(pattern, op.i, held):
            out.append(LINES)
        elif op.kind == "...":
            out.extend(lines[op.j : op.k])
    return "\n".join(out)


def steady(
    stated: str,
    text: str,
    normalizers: Sequence[Normalizer],
    labels: tuple[str, str],
    *,
    diff: str,
    masked_diff: str,
) -> Steady:
    """The report's texts for a run whose output is ``text``.

    :param text: the actual output after the display normalizers.
    :param labels: the diff's two labels (stated, actual).
    :param diff: the diff of the run as it was judged; kept when the steady
        one would lose what it shows (an empty steady diff of a drift).
    :param masked_diff: the same, with the display normalizers only (``""``
        where none is wanted); its steady form is empty when only what
        varies from run to run differed.
    """
    shown = actual(stated, text, normalizers)
    masked_stated = mask_runs(stated, normalizers)
    new_diff = text_diff(masked_stated, shown, normalizers, *labels) if diff else ""
    new_masked = text_diff(masked_stated, shown, normalizers, *labels, masking=False) if masked_diff else ""
    return Steady(shown, new_diff or diff, new_masked)


def problem(sentence: str) -> str:
    """A problem sentence as the report holds it: the measured seconds of a
    run that timed out written ``[..]``."""
    return _SECONDS.sub(r"\g<1>[..] s", sentence)
