"""Tutorial scripts: a ``.py`` file of prose and code cells, read as its tool reads it.

Two kinds of script that docs teams already write are read, each by its own
rules (its *flavor*):

* **sphinx-gallery** (``"gallery"``): the module docstring is the title and
  introduction; a line of 20 or more ``#``, or ``# %%``, starts a block, and
  the comment lines right after it (up to the first line that is not a
  comment) are a text block; the rest, up to the next such line, is code.
  Text blocks are reStructuredText.  ``# sphinx_gallery_<name>`` comments
  are configuration, hidden from the page (see :mod:`.gallery_comments`).
* **jupytext** (``"percent"``, ``"light"``): ``# %%`` starts a code cell and
  ``# %% [markdown]`` (or ``[md]``) a Markdown cell, ``# %% [raw]`` a raw
  cell, whose lines are comments; after the marker come the cell's title and
  metadata (``tags=["raises-exception"]``, ``id="name"``); comment lines in a
  code cell are code.  The YAML header at the top (``# ---`` … ``# ---``)
  is the notebook's metadata, never a cell.  The light format
  (:mod:`.light`) is read by jupytext itself.

A script is jupytext's when it has a jupytext header, a cell kind
(``[markdown]``, ``[md]``, ``[raw]``) or light-format ``# +`` markers;
otherwise it is sphinx-gallery's.  A cell's code may begin with its own tag
block (``# /// snipcheck`` … ``# ///``), which is code, never prose.  Blank
cells are dropped.

A code cell is named by its ``id`` or else by its ordinal among the code
cells (``1``, ``2``, …); naming cells keeps their stated outputs in place
when a cell is inserted before them.

Pure core: standard library, :mod:`.script_header` and :mod:`.gallery_comments`.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import re
import textwrap
import tokenize

from snipcheck.sources import gallery_comments
from snipcheck.sources.light import read as read_light
from snipcheck.sources.script_header import Header, cell_options, read_header
from snipcheck.sources.script_model import Cell, Script, ScriptError, ends_quiet

__all__ = ["Cell", "Script", "ScriptError", "parse", "read"]

_PERCENT = re.compile(r"^\s*#\s*%%(?!%)(?P<rest>.*)$")
_GALLERY_PERCENT = re.compile(r"^# ?%%.*$")
_GALLERY = re.compile(r"^#{20,}.*$")
_KIND = re.compile(r"^\s*(?P<title>.*?)\s*\[(?P<kind>[A-Za-z]+)\](?P<rest>.*)$")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TAG_START = re.compile(r"#\s*///\s*snipcheck\s*$")
_LIGHT = re.compile(r"^# [+-]($|\s)")

def parse(text: str) -> list[Cell]:
    """The cells of a script (:func:`read`'s)."""
    return list(read(text).cells)


def read(text: str) -> Script:
    """Split a script into cells, in order, by the rules of its flavor.

    :param text: the script's text (``\\n`` line ends).
    :return: every code cell has a name, unique in the script.
    :raises ScriptError: for an ``id`` that is not a name, one used twice, a
        cell kind other than ``markdown``/``md``/``raw``, malformed cell
        metadata, or a kernel of another language.
    """
    lines = text.split("\n")
    header = read_header(lines)
    if header is not None and header.language and header.language != "python":
        raise ScriptError(
            f"its jupytext header names the {header.language!r} kernel; a snippet-script runs Python", header.line
        )
    flavor = _flavor(lines, header)
    if flavor == "light":

        return _named(read_light(text, header))
    if flavor == "percent":
        return _named(Script("percent", tuple(_percent(lines, header.end if header else 0)), header))
    cells, notes = _gallery(text, lines)
    return _named(Script("gallery", tuple(cells), None, tuple(notes)))


def _flavor(lines: list[str], header: Header | None) -> str:
    said = header.format_name if header is not None else ""
    if said in ("percent", "light"):
        return said
    percent = [m for line in lines if (m := _PERCENT.match(line))]
    if any(_kind_of(m.group("rest"))[0] for m in percent):
        return "percent"
    if header is not None:
        return "percent" if percent else "light"
    if not percent and any(_LIGHT.match(line) for line in lines):
        return "light"
    return "gallery"


def _kind_of(rest: str) -> tuple[str, str, str]:
    """``(kind, title, options)`` of a percent marker's rest; kind ``""`` for code."""
    m = _KIND.match(rest)
    if m is None:
        return "", "", rest
    return m.group("kind"), m.group("title"), m.group("rest")


# --- jupytext's percent format --------------------------------------------------------


def _percent(lines: list[str], start: int) -> list[Cell]:
    """The cells of a percent script whose header (if any) ends before ``start``."""
    cells: list[Cell] = []
    marker, rest = -1, ""
    first = start
    bounds: list[tuple[int, str, int, int]] = []
    for i in range(start, len(lines)):
        m = _PERCENT.match(lines[i])
        if m is None:
            continue
        bounds.append((marker, rest, first, i))
        marker, rest, first = i, m.group("rest"), i + 1
    bounds.append((marker, rest, first, len(lines)))
    for marker, rest, first, end in bounds:
        kind, _, options = _kind_of(rest)
        kind = kind.lower()
        if kind not in ("", "markdown", "md", "raw"):
            raise ScriptError(
                f"cell kind [{kind}] is not known: write [markdown] (or [md]) for prose, [raw] for raw text, "
                "or nothing for code",
                marker + 1,
            )
        try:
            _, metadata = cell_options(options)
        except ValueError as exc:
            raise ScriptError(f"cell metadata: {exc}; write key=value with a JSON value", marker + 1) from None
        chunk = _trim(lines, first, end)
        if chunk is None:
            if metadata.get("id") and kind == "":
                raise ScriptError(f"cell {metadata['id']!r} holds no code; remove its id or give it code", marker + 1)
            continue
        at, body = chunk
        tags = metadata.get("tags")
        tag_list = tuple(str(t) for t in tags) if isinstance(tags, list) else ()
        if kind in ("markdown", "md"):
            cells.append(Cell("prose", _uncomment(body), at + 1, markup="md", tags=tag_list))
        elif kind == "raw":
            mimetype = str(metadata.get("raw_mimetype") or metadata.get("format") or "")
            markup = {"text/restructuredtext": "rst", "text/x-rst": "rst", "text/markdown": "md"}.get(mimetype, "")
            cells.append(Cell("raw", _uncomment(body), at + 1, markup=markup, tags=tag_list))
        else:
            name = str(metadata.get("id") or "")
            display = ("repr", "figures") if not ends_quiet(body) else ("figures",)
            cells.append(Cell("code", "\n".join(body), at + 1, name, tags=tag_list, display=display, head=marker + 1))
    return cells


def _trim(lines: list[str], first: int, end: int) -> tuple[int, list[str]] | None:
    """``lines[first:end]`` without leading and trailing blank lines, with
    the index of its first line; ``None`` when nothing is left."""
    while first < end and not lines[first].strip():
        first += 1
    while end > first and not lines[end - 1].strip():
        end -= 1
    return (first, [line.rstrip() if not line.strip() else line for line in lines[first:end]]) if end > first else None


def _uncomment(lines: list[str]) -> str:
    """jupytext's uncommenting: ``# `` (or ``#``) removed from each line."""
    out = []
    for line in lines:
        if line.startswith("# "):
            out.append(line[2:])
        elif line.startswith("#"):
            out.append(line[1:])
        else:
            out.append(line)
    return "\n".join(out)


# --- sphinx-gallery ------------------------------------------------------------------


def _gallery(text: str, lines: list[str]) -> tuple[list[Cell], list[tuple[int, str]]]:
    """The cells of a sphinx-gallery script, and what to warn about."""
    cells: list[Cell] = []
    notes: list[tuple[int, str]] = []
    start = 0
    doc = _docstring(text)
    if doc is not None:
        body, line, end = doc
        prose = gallery_comments.hide_in_text(body)
        if prose.strip():
            cells.append(Cell("prose", prose, line, markup="rst"))
        start = end
    settings = gallery_comments.file_settings(lines, start)
    notes += settings.notes
    markers = [i for i in range(start, len(lines)) if _GALLERY.match(lines[i]) or _GALLERY_PERCENT.match(lines[i])]
    first, head, name = start, 0, ""
    tags: tuple[str, ...] = ()
    for k, marker in enumerate([*markers, len(lines)]):
        _code_cell(cells, lines, first, marker, settings, head, name, tags)
        if marker == len(lines):
            break
        head, (name, tags) = marker + 1, _gallery_metadata(lines[marker], marker + 1)
        text_end = marker + 1
        while (
            text_end < len(lines)
            and lines[text_end].startswith("#")
            and not _TAG_START.match(lines[text_end].strip())
            and text_end not in markers[k + 1 : k + 2]
        ):
            text_end += 1
        prose_lines = [line[1:] for line in lines[marker + 1 : text_end]]
        prose = gallery_comments.hide_in_text(textwrap.dedent("\n".join(prose_lines)))
        lead = len(prose) - len(prose.lstrip("\n"))
        if prose.strip():
            cells.append(Cell("prose", prose.strip("\n"), marker + 2 + lead, markup="rst"))
        first = text_end
    return cells, notes


def _gallery_metadata(line: str, number: int) -> tuple[str, tuple[str, ...]]:
    """The ``id`` and the ``tags`` a ``# %%`` line of a sphinx-gallery script
    gives the code after it (jupytext's metadata, which sphinx-gallery itself ignores)."""
    m = _PERCENT.match(line)
    if m is None:
        return "", ()
    try:
        _, metadata = cell_options(m.group("rest"))
    except ValueError as exc:
        raise ScriptError(f"cell metadata: {exc}; write key=value with a JSON value", number) from None
    tags = metadata.get("tags")
    return str(metadata.get("id") or ""), tuple(str(t) for t in tags) if isinstance(tags, list) else ()


def _code_cell(
    cells: list[Cell], lines: list[str], first: int, end: int, settings: gallery_comments.Settings, head: int, name: str,
    tags: tuple[str, ...] = (),
) -> None:
    chunk = _trim(lines, first, end)
    if chunk is None:
        if name:
            raise ScriptError(f"cell {name!r} holds no code; remove its id or give it code", head)
        return
    at, body = chunk
    code = "\n".join(body)
    shown, flags = gallery_comments.hide_in_code(code)  # what the page shows: see the directive
    if not shown.strip() and not flags:
        # only configuration comments: sphinx-gallery shows an empty block; nothing to run or show
        return
    display = []
    if settings.capture_repr(flags):
        display.append("repr")
    if "defer_figures" not in flags:
        display.append("figures")
    cells.append(Cell("code", code, at + 1, name, tags=tags, display=tuple(display), head=head))


def _named(script: Script) -> Script:
    """``script`` with every code cell named, each name checked and unique."""
    ordinal = 0
    names: dict[str, int] = {}
    out = []
    for cell in script.cells:
        if cell.kind == "code":
            ordinal += 1
            name = cell.name or str(ordinal)
            if cell.name and not _NAME.fullmatch(cell.name):
                raise ScriptError(
                    f"cell id {cell.name!r} is not a name: use letters, digits, '_', '-' and '.', starting with a "
                    "letter or digit",
                    cell.head or cell.line,
                )
            where = cell.head or cell.line
            if name in names:
                raise ScriptError(
                    f"two code cells are named {name!r} (lines {names[name]} and {where}); give each cell its own id",
                    where,
                )
            names[name] = where
            cell = dataclasses.replace(cell, name=name)
        out.append(cell)
    return Script(script.flavor, tuple(out), script.header, script.notes)


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
