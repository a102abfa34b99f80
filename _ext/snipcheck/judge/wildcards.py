"""Wildcards in stated outputs: ``[..]`` within a line, ``...`` for whole lines.

The syntax is trycmd's and snapbox's:

* ``[..]`` inside a stated line matches any text within that line, possibly
  none, never a line break;
* a stated line that is exactly ``...`` (nothing before or after it) matches
  any number of whole lines, zero included.

Wildcards exist only in the stated output: the actual output is always
literal text, whatever it prints.  A stated output is read with wildcards
only when it holds a marker *and* some literal text besides (a character
other than whitespace outside the markers): one made of nothing but
wildcards would accept any output, so it is compared as plain text, and
drifts (see :func:`only_wildcards`).

Normalizers run on both sides first, as for any stated output; the markers
are then matched on the normalized stated text.  A normalizer never sees a
marker as text: each one is replaced by a sentinel character (``\\x1f``, which
regular expressions read as whitespace, so a path or an address pattern stops
at it) before the normalizers run, and turned back into a wildcard after.  A
normalizer whose rewrite would still remove, add or move a marker is run on
the text between the markers, piece by piece, instead; and if even that
changes them, the stated side keeps its text from before that normalizer (a
drift then says so loudly; a marker is never lost silently).

Matching is linear in the size of the actual output: a line with ``[..]``
is matched by placing each literal piece at its leftmost possible position
(:meth:`str.find`), and the blocks of lines between ``...`` lines are placed
leftmost too, each found with a bit-parallel (shift-and) scan; both greedy
placements are exact for patterns whose only wildcard is "anything".  No
regular expression is built from a stated output, so nothing backtracks.

Pure core: standard library and :mod:`snipcheck.judge.normalize`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from snipcheck.judge.normalize import Normalizer, pipeline

#: Matches any text within one line.
INLINE = "[..]"
#: A line that is exactly this matches any number of whole lines.
LINES = "..."

#: A stated line: ``None`` for a ``...`` line, else its literal pieces between
#: ``[..]`` markers (a single piece: a line without a marker).
Line = tuple[str, ...] | None


@dataclass(frozen=True)
class Pattern:
    """A stated output as read for matching.

    :param lines: one :data:`Line` per stated line.
    """

    lines: tuple[Line, ...]


def has_markers(stated: str) -> bool:
    """Whether ``stated`` holds ``[..]`` or a line that is exactly ``...``."""
    return INLINE in stated or LINES in stated.split("\n")


def _literal_text(stated: str) -> bool:
    return any(line != LINES and line.replace(INLINE, "").strip() for line in stated.split("\n"))


def uses_wildcards(stated: str) -> bool:
    """Whether ``stated`` is read with wildcards: it holds a marker and some literal text."""
    return has_markers(stated) and _literal_text(stated)


def only_wildcards(stated: str) -> bool:
    """Whether ``stated`` holds markers and nothing else (whitespace aside).

    Such a stated output would accept any output, so it is compared as plain
    text, and the build says why it drifts.
    """
    return has_markers(stated) and not _literal_text(stated)


def parse(stated: str) -> Pattern:
    """Read the markers of ``stated`` (no normalizer applied)."""
    return Pattern(tuple(None if line == LINES else tuple(line.split(INLINE)) for line in stated.split("\n")))


def show(line: Line) -> str:
    """A stated line as written, its markers included."""
    return LINES if line is None else INLINE.join(line)


# --- normalizers ----------------------------------------------------------------


def _sentinels() -> Iterator[str]:
    yield "\x1f"
    for code in range(0xE000, 0xF900):
        yield chr(code)


def _protect(pattern: Pattern, mark: str) -> str:
    return "\n".join(mark if line is None else mark.join(line) for line in pattern.lines)


def _unprotect(text: str, pattern: Pattern, mark: str) -> Pattern | None:
    """The pattern that ``text`` (protected with ``mark``) holds, or ``None``
    if its markers are no longer where ``pattern`` has them."""
    lines = text.split("\n")
    if len(lines) != len(pattern.lines):
        return None
    out: list[Line] = []
    for line, was in zip(lines, pattern.lines, strict=True):
        if was is None:
            if line != mark:
                return None
            out.append(None)
            continue
        pieces = tuple(line.split(mark))
        if len(pieces) != len(was):
            return None
        out.append(pieces)
    return Pattern(tuple(out))


def prepare(stated: str, normalizers: Sequence[Normalizer], *, masking: bool = True) -> Pattern:
    """``stated`` read for matching, after the normalizers, its markers intact.

    :param masking: apply the compare-only normalizers too (as for the
        comparison); ``False`` applies the display normalizers only.
    """
    pattern = parse(stated)
    mark = next(c for c in _sentinels() if c not in stated)
    text = _protect(pattern, mark)
    for normalizer in pipeline(normalizers, masking=masking):
        rewritten = normalizer(text)
        if _unprotect(rewritten, pattern, mark) is None:
            # Its rewrite spans a marker: run it on the text between markers.
            rewritten = mark.join(normalizer(piece) for piece in text.split(mark))
            if _unprotect(rewritten, pattern, mark) is None:
                continue
        text = rewritten
    found = _unprotect(text, pattern, mark)
    assert found is not None  # every accepted step kept the markers
    return found


# --- matching -------------------------------------------------------------------


def line_matches(line: tuple[str, ...], text: str) -> bool:
    """Whether the stated ``line`` (its pieces) matches the actual line ``text``.

    Each literal piece is placed leftmost: exact for ``[..]``, and at most one
    pass over ``text``.
    """
    if len(line) == 1:
        return text == line[0]
    first, last = line[0], line[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in line[1:-1]:
        if piece:
            found = text.find(piece, at, end)
            if found < 0:
                return False
            at = found + len(piece)
    return True


def _blocks(pattern: Pattern) -> list[list[tuple[str, ...]]]:
    """The runs of lines between ``...`` lines (``k`` of them give ``k + 1`` runs)."""
    blocks: list[list[tuple[str, ...]]] = [[]]
    for line in pattern.lines:
        if line is None:
            blocks.append([])
        else:
            blocks[-1].append(line)
    return blocks


def _at(block: Sequence[tuple[str, ...]], lines: Sequence[str], start: int) -> bool:
    return all(line_matches(p, lines[start + k]) for k, p in enumerate(block))


def find_block(block: Sequence[tuple[str, ...]], lines: Sequence[str], start: int, end: int) -> int:
    """The first index ``i`` in ``[start, end - len(block)]`` where ``block``
    matches ``lines[i:i + len(block)]``, or ``-1``.

    Shift-and: bit ``k`` of the state says that the block's first ``k + 1``
    lines match the lines just read.  Each actual line is tested once against
    each distinct stated line (answers cached by text), so the scan costs
    ``O((end - start) * distinct wildcard lines)`` line tests, never
    ``O(len(lines) * len(block))``.
    """
    m = len(block)
    if m == 0:
        return start
    literal: dict[str, int] = {}
    wild: dict[tuple[str, ...], int] = {}
    for k, pieces in enumerate(block):
        if len(pieces) == 1:
            literal[pieces[0]] = literal.get(pieces[0], 0) | 1 << k
        else:
            wild[pieces] = wild.get(pieces, 0) | 1 << k
    cache: dict[str, int] = {}
    goal = 1 << (m - 1)
    state = 0
    for j in range(start, end):
        text = lines[j]
        mask = cache.get(text)
        if mask is None:
            mask = literal.get(text, 0)
            for pieces, bits in wild.items():
                if line_matches(pieces, text):
                    mask |= bits
            cache[text] = mask
        state = ((state << 1) | 1) & mask
        if state & goal:
            return j - m + 1
    return -1


def matches(pattern: Pattern, lines: Sequence[str]) -> bool:
    """Whether ``pattern`` matches the actual ``lines`` exactly.

    The first and last runs of lines are anchored at the ends; the runs
    between ``...`` lines are placed leftmost, which is exact since ``...``
    accepts any gap.
    """
    blocks = _blocks(pattern)
    n = len(lines)
    if len(blocks) == 1:
        return len(blocks[0]) == n and _at(blocks[0], lines, 0)
    head, middle, tail = blocks[0], blocks[1:-1], blocks[-1]
    if len(head) + len(tail) > n or not _at(head, lines, 0) or not _at(tail, lines, n - len(tail)):
        return False
    at, end = len(head), n - len(tail)
    for block in middle:
        found = find_block(block, lines, at, end)
        if found < 0:
            return False
        at = found + len(block)
    return True


def fit(pattern: Pattern, stated: str, text: str) -> tuple[Pattern, bool]:
    """``(pattern, matched)``: the pattern to compare ``text`` with, and
    whether it matches.

    A directive body may end with one newline more than the terminal text (see
    :mod:`snipcheck.judge.compare`): the pattern's last, empty line is then dropped.
    """
    lines = text.split("\n")
    if matches(pattern, lines):
        return pattern, True
    if stated.endswith("\n") and pattern.lines and pattern.lines[-1] == ("",):
        shorter = Pattern(pattern.lines[:-1])
        if matches(shorter, lines):
            return shorter, True
        if lines[-1] != "":
            return shorter, False  # align without the body's extra final line
    return pattern, False
