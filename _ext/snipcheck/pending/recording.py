"""What ``record`` and ``accept`` write for an actual output: the author's wildcards kept.

:func:`to_record` gives the new stated output for a drifted one: the actual
output, except that each stated line with ``[..]`` that still matches its
actual line (in the alignment of :func:`snipcheck.judge.alignment.align`) is kept
as written, and each ``...`` line is kept unless both of its neighbouring
stated lines (the nearest that are not ``...``) exist and no longer match (a
``...`` at the start or the end keeps its anchor there).  The result must
match the actual output again, or no wildcard is kept at all.

It never writes a wildcard the author did not write: an actual line that
holds ``[..]`` or is ``...`` would, as a stated line, check less than the run
printed, so it is refused (:class:`Unrecordable`) unless a wildcard line of
the author's covers it.  An output that is nothing but wildcards is compared
as plain text (see :mod:`snipcheck.judge.wildcards`), so it may be written as it is.

Pure core: standard library, :mod:`snipcheck.judge.normalize`,
:mod:`snipcheck.judge.wildcards`, :mod:`snipcheck.judge.alignment`.
"""

from __future__ import annotations

from collections.abc import Sequence

from snipcheck.judge.alignment import align, anchored, holds
from snipcheck.judge.normalize import Normalizer, for_compare
from snipcheck.judge.wildcards import INLINE, LINES, fit, has_markers, parse, prepare, show, uses_wildcards


class Unrecordable(ValueError):
    """An actual output that no stated output may hold as it is (the message says why and what to do)."""


def to_record(stated: str, actual: str, normalizers: Sequence[Normalizer]) -> str:
    """The stated output that ``record`` and ``accept`` write for ``actual``.

    :param stated: the stated output now.
    :param actual: the terminal text after display normalizers.
    :return: ``actual``, with the author's wildcards kept where they still
        match (see the module docstring).
    :raises Unrecordable: if the result would hold a wildcard the author did
        not write (an actual line that holds ``[..]`` or is ``...``).
    """
    kept = _keep(stated, actual, normalizers) if uses_wildcards(stated) else None
    lines, sources = kept if kept is not None else (actual.split("\n"), list(range(actual.count("\n") + 1)))
    body = "\n".join(lines)
    if uses_wildcards(body):
        for line, source in zip(lines, sources, strict=True):
            if source is not None and has_markers(line):
                what = f"is {LINES!r}" if line == LINES else f"holds {INLINE!r}"
                raise Unrecordable(
                    f"line {source + 1} of the output {what}, which a stated output reads as a wildcard, so the "
                    "recording would check less than the run printed; print it differently (repr() of it, say), "
                    f"or state that line with a wildcard of your own ({INLINE} or {LINES}), which record keeps"
                )
    return body


def _keep(
    stated: str, actual: str, normalizers: Sequence[Normalizer]
) -> tuple[list[str], list[int | None]] | None:
    """The lines to write: ``actual``'s, with the still-matching wildcard lines
    of ``stated``; and where each comes from (an actual line's index, or
    ``None`` for the author's).  ``None`` if no wildcard can be kept."""
    text = for_compare(actual, normalizers)
    shown = actual.split("\n")
    lines = text.split("\n")
    if len(lines) != len(shown):
        return None  # a normalizer joined or split lines: no line-by-line correspondence
    pattern, ok = fit(prepare(stated, normalizers), stated, text)
    if ok:
        return stated.split("\n"), [None] * (stated.count("\n") + 1)
    written = parse(stated).lines[: len(pattern.lines)]
    ops = align(pattern, lines)
    held = {op.i for op in ops if op.kind == "="}
    out: list[str] = []
    sources: list[int | None] = []
    for op in ops:
        if op.kind == "=" and (line := written[op.i]) is not None and len(line) > 1:
            out.append(show(line))
            sources.append(None)
        elif op.kind in "=~+":
            out.append(shown[op.j])
            sources.append(op.j)
        elif op.kind == "..." and anchored(pattern, op.i, held):
            out.append(LINES)
            sources.append(None)
        elif op.kind == "...":
            out.extend(shown[op.j : op.k])
            sources.extend(range(op.j, op.k))
    body = "\n".join(out)
    if None not in sources or not uses_wildcards(body) or not holds(body, actual, normalizers):
        return None
    return out, sources
