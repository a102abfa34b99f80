"""A stated output with wildcards that drifted: how its lines pair with the actual ones, and its diff.

When a stated output with wildcards (see :mod:`snipcheck.judge.wildcards`) does
not match, :func:`align` pairs its lines with the actual lines: a stated line
that still matches its actual line, a ``...`` line with the actual lines it
covers, a stated line replaced by an actual line, a stated line or an actual
line alone.  On that alignment are built

* :func:`diff`, a unified diff stated → actual in which every actual line a
  stated line still accepts is context, shown as the run printed it, and a
  ``\\ matched by stated line N: ...`` note before it names the stated line
  with its wildcards (``\\`` starts a comment line in a unified diff).  On the
  stated side, ``@@`` ranges count stated lines: a ``...`` counts once, however
  many actual lines it covers.
* what ``record`` and ``accept`` write, in :mod:`snipcheck.pending.recording`.

The alignment minimises a cost (a changed line 2, a line on one side alone 3,
a line a wildcard accepts 0) after the common first and last lines are
paired; a middle too large for that (over :data:`MATCH_CELLS` line tests) is
aligned greedily with a bounded look-ahead instead.  Either way every context
line truly matches, and the cost stays linear in the actual output beyond
that bound.

Pure core: standard library, :mod:`snipcheck.judge.normalize`,
:mod:`snipcheck.judge.wildcards`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from snipcheck.judge.normalize import Normalizer, for_compare, for_display
from snipcheck.judge.wildcards import LINES, Line, Pattern, find_block, fit, line_matches, prepare, show

#: Most line tests the exact alignment may make; beyond, it is greedy.
MATCH_CELLS = 500_000
#: Most cells of the exact alignment's table (``...`` lines included).
CELLS = 1_000_000
#: How far the greedy alignment looks ahead for a line that still matches.
LOOK_AHEAD = 64
#: Context lines around each change, as in :func:`difflib.unified_diff` with ``n=2``.
CONTEXT = 2

_SUB, _ALONE = 2, 3


class Op(NamedTuple):
    """One step of an alignment.

    :param kind: ``"="`` stated line ``i`` matches actual line ``j``; ``"~"``
        stated line ``i`` is replaced by actual line ``j``; ``"-"`` stated line
        ``i`` alone; ``"+"`` actual line ``j`` alone; ``"..."`` the ``...`` at
        stated line ``i`` covers actual lines ``j`` to ``k`` (exclusive).
    """

    kind: str
    i: int = -1
    j: int = -1
    k: int = -1


def align(pattern: Pattern, lines: Sequence[str]) -> list[Op]:
    """Pair the stated ``pattern`` with the actual ``lines`` (see the module docstring)."""
    p = pattern.lines
    i, j, i2, j2 = 0, 0, len(p), len(lines)
    head: list[Op] = []
    while i < i2 and j < j2 and (line := p[i]) is not None and line_matches(line, lines[j]):
        head.append(Op("=", i, j))
        i, j = i + 1, j + 1
    tail: list[Op] = []
    while i2 > i and j2 > j and (line := p[i2 - 1]) is not None and line_matches(line, lines[j2 - 1]):
        i2, j2 = i2 - 1, j2 - 1
        tail.append(Op("=", i2, j2))
    normal = sum(1 for line in p[i:i2] if line is not None)
    if normal * (j2 - j) <= MATCH_CELLS and (i2 - i + 1) * (j2 - j + 1) <= CELLS:
        middle = _exact(p, lines, i, i2, j, j2)
    else:
        middle = _greedy(p, lines, i, i2, j, j2)
    return head + middle + tail[::-1]


def _exact(p: Sequence[Line], lines: Sequence[str], i0: int, i1: int, j0: int, j1: int) -> list[Op]:
    """The cheapest alignment of ``p[i0:i1]`` with ``lines[j0:j1]`` (a table of suffix costs)."""
    m, n = i1 - i0, j1 - j0
    rows: list[list[int]] = [[]] * (m + 1)
    rows[m] = [_ALONE * (n - c) for c in range(n + 1)]
    fits: list[list[bool]] = [[]] * m
    for r in range(m - 1, -1, -1):
        line, below = p[i0 + r], rows[r + 1]
        row = [0] * (n + 1)
        if line is None:
            row[n] = below[n]
            for c in range(n - 1, -1, -1):
                row[c] = min(row[c + 1], below[c])
        else:
            ok = fits[r] = [line_matches(line, lines[j0 + c]) for c in range(n)]
            row[n] = below[n] + _ALONE
            for c in range(n - 1, -1, -1):
                best = below[c + 1] if ok[c] else below[c + 1] + _SUB
                best = min(best, row[c + 1] + _ALONE, below[c] + _ALONE)
                row[c] = best
        rows[r] = row
    ops: list[Op] = []
    r = c = 0
    while r < m or c < n:
        if r == m:
            ops.append(Op("+", j=j0 + c))
            c += 1
            continue
        here, below = rows[r][c], rows[r + 1]
        if p[i0 + r] is None:
            start = c
            while below[c] != here:  # ending the ``...`` here costs more: it covers this line
                c += 1
            ops.append(Op("...", i0 + r, j0 + start, j0 + c))
            r += 1
        elif c < n and fits[r][c] and here == below[c + 1]:
            ops.append(Op("=", i0 + r, j0 + c))
            r, c = r + 1, c + 1
        elif c < n and here == below[c + 1] + _SUB:
            ops.append(Op("~", i0 + r, j0 + c))
            r, c = r + 1, c + 1
        elif here == below[c] + _ALONE:
            ops.append(Op("-", i0 + r))
            r += 1
        else:
            ops.append(Op("+", j=j0 + c))
            c += 1
    return ops


def _greedy(p: Sequence[Line], lines: Sequence[str], i: int, i2: int, j: int, j2: int) -> list[Op]:
    """A linear alignment of ``p[i:i2]`` with ``lines[j:j2]``: each stated line
    is matched where it stands, else looked for a little ahead on either side."""
    ops: list[Op] = []
    while i < i2:
        line = p[i]
        if line is None:
            nxt = next((q for q in range(i + 1, i2) if p[q] is not None), None)
            block = _block_at(p, nxt, i2) if nxt is not None else []
            if nxt is None:
                found = j2
            elif nxt + len(block) == i2:
                found = max(j, j2 - len(block))  # the last run of lines: anchored at the end
            else:
                found = find_block(block, lines, j, j2)
                if found < 0:
                    found = next((x for x in range(j, j2) if line_matches(block[0], lines[x])), j)
            ops.append(Op("...", i, j, found))
            i, j = i + 1, found
            continue
        if j < j2 and line_matches(line, lines[j]):
            ops.append(Op("=", i, j))
            i, j = i + 1, j + 1
            continue
        ahead = next((x for x in range(j + 1, min(j2, j + LOOK_AHEAD)) if line_matches(line, lines[x])), None)
        if ahead is not None:
            ops.extend(Op("+", j=x) for x in range(j, ahead))
            j = ahead
            continue
        back = None
        if j < j2:
            back = next(
                (
                    q
                    for q in range(i + 1, min(i2, i + LOOK_AHEAD))
                    if (other := p[q]) is not None and line_matches(other, lines[j])
                ),
                None,
            )
        if back is not None:
            ops.extend(Op("-", q) for q in range(i, back))
            i = back
        elif j < j2:
            ops.append(Op("~", i, j))
            i, j = i + 1, j + 1
        else:
            ops.append(Op("-", i))
            i += 1
    ops.extend(Op("+", j=x) for x in range(j, j2))
    return ops


def _block_at(p: Sequence[Line], start: int, end: int) -> list[tuple[str, ...]]:
    """The stated lines from ``start`` up to the next ``...`` line (or ``end``)."""
    block: list[tuple[str, ...]] = []
    for line in p[start:end]:
        if line is None:
            break
        block.append(line)
    return block


def anchored(pattern: Pattern, i: int, held: set[int]) -> bool:
    """Whether the ``...`` at stated line ``i`` keeps an anchor: the start or
    end of the output, or a neighbouring stated line that still matches."""
    lines = pattern.lines
    before = next((q for q in range(i - 1, -1, -1) if lines[q] is not None), None)
    after = next((q for q in range(i + 1, len(lines)) if lines[q] is not None), None)
    return before is None or after is None or before in held or after in held


# --- the diff -------------------------------------------------------------------


class _Row(NamedTuple):
    sign: str  # " ", "-", "+", or "\\" for a note alone
    text: str
    a: int | None  # stated line shown or covered
    b: int | None  # actual line shown
    a_at: int  # stated lines before this row
    b_at: int  # actual lines before this row
    note: str = ""  # said before this row, when it is shown
    group: int | None = None  # the ``...`` line whose cover this row is


def _lines_word(j: int, k: int) -> str:
    return f"actual line {j + 1}" if k - j == 1 else f"actual lines {j + 1}-{k}"


def _rows(pattern: Pattern, lines: Sequence[str], ops: Sequence[Op]) -> list[_Row]:
    rows: list[_Row] = []
    a_at = b_at = 0
    pending: list[Op] = []

    def flush() -> None:
        nonlocal a_at, b_at
        for op in pending:
            if op.kind in "~-":
                rows.append(_Row("-", _visible(show(pattern.lines[op.i])), op.i, None, op.i, b_at))
                a_at = op.i + 1
        for op in pending:
            if op.kind in "~+":
                rows.append(_Row("+", _visible(lines[op.j]), None, op.j, a_at, op.j))
                b_at = op.j + 1
        pending.clear()

    for op in ops:
        if op.kind in "~-+":
            pending.append(op)
            continue
        flush()
        if op.kind == "=":
            line = pattern.lines[op.i]
            note = (
                f"matched by stated line {op.i + 1}: {show(line)}"
                if line is not None and len(line) > 1
                else ""
            )
            rows.append(_Row(" ", lines[op.j], op.i, op.j, op.i, op.j, note))
            b_at = op.j + 1
        elif op.j == op.k:
            rows.append(
                _Row("\\", f"stated line {op.i + 1}: {LINES} matched no line", op.i, None, op.i, b_at)
            )
        else:
            note = f"matched by stated line {op.i + 1}: {LINES} ({_lines_word(op.j, op.k)})"
            rows.extend(_Row(" ", lines[x], op.i, x, op.i, x, note, op.i) for x in range(op.j, op.k))
            b_at = op.k
        a_at = op.i + 1
    flush()
    return rows


def _visible(line: str) -> str:
    """Trailing whitespace of a changed line shown as ``·``, as the plain diff does."""
    stripped = line.rstrip(" \t")
    return stripped + "·" * (len(line) - len(stripped))


def _range(values: Sequence[int], at: int) -> str:
    """A ``@@`` range, as :func:`difflib.unified_diff` writes it."""
    if not values:
        return f"{at},0"
    start, stop = min(values), max(values) + 1
    return str(start + 1) if stop - start == 1 else f"{start + 1},{stop - start}"


def format_diff(
    pattern: Pattern, lines: Sequence[str], ops: Sequence[Op], stated_label: str, actual_label: str
) -> str:
    """The unified diff of an alignment (see the module docstring)."""
    rows = _rows(pattern, lines, ops)
    real = [r for r, row in enumerate(rows) if row.sign != "\\"]
    shown = [False] * len(rows)
    changed = [pos for pos, r in enumerate(real) if rows[r].sign in "-+"]
    for pos in changed:
        for near in range(max(0, pos - CONTEXT), min(len(real), pos + CONTEXT + 1)):
            shown[real[near]] = True
    for r, row in enumerate(rows):
        if row.sign == "\\":
            shown[r] = (r > 0 and shown[r - 1]) or (r + 1 < len(rows) and shown[r + 1])
    out = [f"--- {stated_label}", f"+++ {actual_label}"]
    r = 0
    while r < len(rows):
        if not shown[r]:
            r += 1
            continue
        end = r
        while end < len(rows) and shown[end]:
            end += 1
        hunk = rows[r:end]
        a = sorted({row.a for row in hunk if row.a is not None})
        b = [row.b for row in hunk if row.b is not None]
        out.append(f"@@ -{_range(a, hunk[0].a_at)} +{_range(b, hunk[0].b_at)} @@")
        previous: _Row | None = None
        for row in hunk:
            if row.sign == "\\":
                out.append(f"\\ {row.text}")
            else:
                if row.note and (row.group is None or previous is None or previous.group != row.group):
                    out.append(f"\\ {row.note}")
                out.append(row.sign + row.text)
            previous = row
        r = end
    return "\n".join(out)


def diff(
    stated: str,
    actual: str,
    normalizers: Sequence[Normalizer],
    stated_label: str,
    actual_label: str,
    *,
    masking: bool = True,
) -> str:
    """The diff stated → actual of a stated output read with wildcards, ``""`` if it matches.

    :param masking: apply the compare-only normalizers too (see
        :func:`snipcheck.judge.compare.text_diff`).
    """
    pattern = prepare(stated, normalizers, masking=masking)
    text = (for_compare if masking else for_display)(actual, normalizers)
    pattern, ok = fit(pattern, stated, text)
    if ok:
        return ""
    lines = text.split("\n")
    return format_diff(pattern, lines, align(pattern, lines), stated_label, actual_label)


def holds(stated: str, actual: str, normalizers: Sequence[Normalizer], *, masking: bool = True) -> bool:
    """Whether ``stated`` (read with wildcards) matches ``actual`` after the normalizers."""
    text = (for_compare if masking else for_display)(actual, normalizers)
    return fit(prepare(stated, normalizers, masking=masking), stated, text)[1]
