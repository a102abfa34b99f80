"""Where a cell's code ends: its output separator, never a line of its code.

A ``snippet-code`` cell holds its code, a separator line (by default
:data:`snipcheck.sources.placement.OUTPUT_SEPARATOR`, ``--- output ---``), then its
stated output.  The separator is the first line that reads as it (blanks
around it aside) *and* does not lie inside a string or a comment of the code
above it: Python code is read with :mod:`tokenize` (a line inside a
triple-quoted string, a docstring or a backslash-continued string is code),
Rust code with a small lexer of its string, raw-string, character and
(nested) block-comment syntax.  So a cell whose code prints or documents
the separator keeps all its code, and ``record`` and ``accept`` never write
over it.

Where the code opens a string (or comment) that no later line closes, every
candidate lies inside it and the cell has no separator; :class:`CellSplit`
says where it opened, and the directive's warning offers the escape: the
option ``separator`` names the separator line, which is then taken as
written, wherever it stands (a cell that shows a ``SyntaxError`` of an
unclosed string needs it).

Pure core: standard library and :mod:`snipcheck.sources.placement`.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from snipcheck.sources.placement import OUTPUT_SEPARATOR


@dataclass(frozen=True)
class CellSplit:
    """Where a directive's content splits into code and stated output.

    :param index: 0-based index of the separator line in the content, or
        ``None`` when there is none (the content is all code).
    :param inside: 0-based index of the first line that reads as the
        separator but lies inside a string or comment of the code (so was
        taken for code), or ``None``.
    :param opened: when the code through the last such line ends inside a
        string or comment that is never closed: the 0-based index of the line
        that opens it (the cell then has no separator), else ``None``.
    """

    index: int | None
    inside: int | None = None
    opened: int | None = None


def split(content: Sequence[str], language: str = "python", separator: str | None = None) -> CellSplit:
    """Find the separator line of a cell's ``content`` (its lines).

    :param language: ``"python"`` or ``"rust"``: how strings and comments are read.
    :param separator: the separator named by the directive's ``separator``
        option: the first line that reads as it is taken, as written (no
        reading of the code); ``None``: :data:`OUTPUT_SEPARATOR`, outside
        strings and comments.
    """
    wanted = (separator if separator is not None else OUTPUT_SEPARATOR).strip()
    inside: int | None = None
    opened: int | None = None
    for i, line in enumerate(content):
        if line.strip() != wanted:
            continue
        if separator is not None:
            return CellSplit(i)
        where = open_at_end(content[:i], language)
        if where is None:
            return CellSplit(i, inside)
        inside = i if inside is None else inside
        opened = where
    if opened is not None and open_at_end(content, language) is None:
        opened = None  # every string closes after all: the separator text is part of the code
    return CellSplit(None, inside, opened)


def open_at_end(lines: Sequence[str], language: str) -> int | None:
    """The 0-based index of the line that opens a string or comment still
    open after ``lines``, or ``None`` when none is."""
    if language == "rust":
        return _rust_open("\n".join(lines) + "\n")
    return _python_open("\n".join(lines) + "\n")


def _python_open(code: str) -> int | None:
    try:
        for _ in tokenize.generate_tokens(io.StringIO(code).readline):
            pass
    except tokenize.TokenError as exc:
        message, position = (exc.args + (None, None))[:2]
        if "string" in str(message) and isinstance(position, tuple):
            return int(position[0]) - 1
        return None  # an open bracket or the like: not a string
    except SyntaxError:  # indentation: broken code, but no string is open
        return None
    return None


def _rust_open(code: str) -> int | None:
    """A lexer of Rust's strings and comments: where an unclosed one opens."""
    i, n, line = 0, len(code), 0
    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
            i += 1
        elif code.startswith("//", i):
            i = code.find("\n", i)
            i = n if i < 0 else i
        elif code.startswith("/*", i):
            start, depth, i = line, 1, i + 2
            while i < n and depth:
                if code.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif code.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += code[i] == "\n"
                    i += 1
            if depth:
                return start
        elif c in "rb" and _raw_start(code, i) is not None:
            hashes, body = _raw_start(code, i)  # type: ignore[misc]
            close = code.find('"' + "#" * hashes, body)
            if close < 0:
                return line
            line += code.count("\n", i, close)
            i = close + 1 + hashes
        elif c == '"' or (c == "b" and code.startswith('b"', i)):
            start, i = line, i + (2 if c == "b" else 1)
            while i < n and code[i] != '"':
                if code[i] == "\\":
                    line += code[i + 1 : i + 2] == "\n"
                    i += 2
                    continue
                line += code[i] == "\n"
                i += 1
            if i >= n:
                return start
            i += 1
        elif c == "'":
            # a character literal ('x', '\n', '\u{1F600}') or a lifetime ('a)
            if code.startswith("\\", i + 1):
                close = code.find("'", i + 3)
                i = n if close < 0 else close + 1
            elif i + 2 < n and code[i + 2] == "'":
                i += 3
            else:
                i += 1
        elif c.isalnum() or c == "_":
            while i < n and (code[i].isalnum() or code[i] == "_"):
                i += 1  # an identifier (br, r#ident): not the start of a literal
        else:
            i += 1
    return None


def _raw_start(code: str, i: int) -> tuple[int, int] | None:
    """``(number of #, index after the opening quote)`` of a raw string
    literal (``r"…"``, ``r#"…"#``, ``br"…"``) starting at ``i``, else ``None``."""
    j = i + (2 if code.startswith("br", i) else 1 if code[i] == "r" else 0)
    if j == i:
        return None
    hashes = 0
    while j < len(code) and code[j] == "#":
        hashes, j = hashes + 1, j + 1
    return (hashes, j + 1) if j < len(code) and code[j] == '"' else None
