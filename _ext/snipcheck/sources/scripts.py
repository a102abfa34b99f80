"""Tutorial scripts: a ``.py`` file of prose and code cells, read into cells.

Two formats that docs teams already write are read, and may be mixed:

* jupytext's *percent* format: ``# %%`` starts a cell; ``# %% [markdown]``
  (or ``[md]``) starts a prose cell whose lines are comments;
  ``id="name"`` after the marker names the cell (``# %% id="create"``);
* sphinx-gallery's: the module docstring is the title and introduction, and a
  line of 20 or more ``#`` starts a text block of comment lines.

After a marker, the comment lines that follow it at once are prose (as in
sphinx-gallery, where ``# %%`` also starts a text block); a blank line or a
code line ends the prose, and what follows up to the next marker is the code
cell.  A cell's code may begin with its own tag block (``# /// snipcheck``
… ``# ///``), which is code, never prose.  Code before the first marker
(after the docstring) is a cell of its own, the imports, say.  Blank cells
are dropped.

A code cell is named by its ``id`` or else by its ordinal among the code
cells (``1``, ``2``, …); naming cells keeps their stated outputs in place
when a cell is inserted before them.

Pure core: standard library only.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import tokenize
from dataclasses import dataclass

__all__ = ["Cell", "ScriptError", "parse"]

_PERCENT = re.compile(r"#\s?%%(?P<rest>.*)$")
_GALLERY = re.compile(r"#{20,}\s*$")
_KIND = re.compile(r"^\s*\[(?P<kind>[A-Za-z]+)\]")
_ID = re.compile(r"""(?:^|\s)id=(?:"(?P<q>[^"]*)"|'(?P<s>[^']*)'|(?P<bare>[^\s"']+))""")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TAG_START = re.compile(r"#\s*///\s*snipcheck\s*$")


class ScriptError(ValueError):
    """A script that cannot be split into cells.

    :param message: what is wrong and what to do.
    :param line: 1-based line of the script at fault.
    """

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.message = message
        self.line = line


@dataclass(frozen=True)
class Cell:
    """One cell of a script.

    :param kind: ``"prose"`` or ``"code"``.
    :param text: the prose with its comment marks removed (or the
        docstring's text), or the code as written.
    :param line: 1-based line of the script where the text starts.
    :param name: a code cell's name (its ``id`` or its ordinal); ``""`` for prose.
    """

    kind: str
    text: str
    line: int
    name: str = ""


def parse(text: str) -> list[Cell]:
    """Split a script into prose and code cells, in order.

    :param text: the script's text (``\\n`` line ends).
    :return: the cells; every code cell has a name, unique in the script.
    :raises ScriptError: for an ``id`` that is not a name, one used twice, or
        a cell kind other than ``markdown``/``md``.
    """
    lines = text.split("\n")
    cells: list[Cell] = []
    start = 0
    doc = _docstring(text)
    if doc is not None:
        body, line, end = doc
        if body.strip():
            cells.append(Cell("prose", body, line))
        start = end
    # (line index of the marker or -1, kind, id) per block
    blocks: list[tuple[int, str, str, int, int]] = []  # (marker, kind, id, first, end)
    marker, kind, name = -1, "code", ""
    first = start
    for i in range(start, len(lines)):
        found = _marker(lines[i], i + 1)
        if found is None:
            continue
        blocks.append((marker, kind, name, first, i))
        kind, name = found
        marker, first = i, i + 1
    blocks.append((marker, kind, name, first, len(lines)))

    ordinal = 0
    names: dict[str, int] = {}
    for marker, kind, name, first, end in blocks:
        chunk = lines[first:end]
        if kind == "prose":
            prose = _uncomment(chunk)
            if prose.strip():
                cells.append(Cell("prose", prose.strip("\n"), first + 1))
            continue
        cut = 0
        if marker >= 0:  # comment lines right after a marker are prose
            while cut < len(chunk) and chunk[cut].lstrip().startswith("#") and not _TAG_START.match(chunk[cut].strip()):
                cut += 1
            prose = _uncomment(chunk[:cut])
            if prose.strip():
                cells.append(Cell("prose", prose.strip("\n"), first + 1))
        code = chunk[cut:]
        lead = 0
        while lead < len(code) and not code[lead].strip():
            lead += 1
        body = "\n".join(code[lead:]).rstrip()
        if not body:
            if name:
                raise ScriptError(f"cell {name!r} holds no code; remove its id or give it code", marker + 1)
            continue
        ordinal += 1
        cell_name = name or str(ordinal)
        if cell_name in names:
            raise ScriptError(
                f"two code cells are named {cell_name!r} (lines {names[cell_name]} and {marker + 1}); "
                "give each cell its own id",
                marker + 1,
            )
        names[cell_name] = marker + 1
        cells.append(Cell("code", body, first + cut + lead + 1, cell_name))
    return cells


def _marker(line: str, number: int) -> tuple[str, str] | None:
    """``(kind, id)`` when ``line`` starts a cell, else ``None``."""
    stripped = line.strip()
    if _GALLERY.fullmatch(stripped):
        return "code", ""
    m = _PERCENT.fullmatch(stripped)
    if m is None:
        return None
    rest = m.group("rest")
    kind = "code"
    k = _KIND.match(rest)
    if k is not None:
        if k.group("kind").lower() not in ("markdown", "md"):
            raise ScriptError(
                f"cell kind [{k.group('kind')}] is not known: write [markdown] for prose, or nothing for code",
                number,
            )
        kind = "prose"
    name = ""
    i = _ID.search(rest)
    if i is not None:
        name = next(g for g in (i.group("q"), i.group("s"), i.group("bare")) if g is not None)
        if not _NAME.fullmatch(name):
            raise ScriptError(
                f"cell id {name!r} is not a name: use letters, digits, '_', '-' and '.', starting with a letter or digit",
                number,
            )
    return kind, name


def _uncomment(lines: list[str]) -> str:
    """Comment lines as text: ``# `` (or ``#``) removed, other lines kept."""
    out = []
    for line in lines:
        s = line.strip()
        if s.startswith("# "):
            out.append(s[2:])
        elif s.startswith("#"):
            out.append(s[1:])
        else:
            out.append(s)
    return "\n".join(out)


def _docstring(text: str) -> tuple[str, int, int] | None:
    """The module docstring's text, its first line (1-based) and the index of
    the line after it, if the script opens with one (comments and blank lines
    before it allowed).  Read token by token, so a syntax error further down
    (reported by that cell's run) does not hide it."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    try:
        for tok in tokens:
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING):
                continue
            if tok.type != tokenize.STRING:
                return None
            following = next(tokens)
            if following.type not in (tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT):
                return None  # a string that is part of an expression
            value = ast.literal_eval(tok.string)
            if not isinstance(value, str):
                return None
            return inspect.cleandoc(value), tok.start[0], tok.end[0]
    except (tokenize.TokenError, SyntaxError, ValueError, StopIteration):
        return None
    return None
