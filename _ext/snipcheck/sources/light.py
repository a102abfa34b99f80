"""jupytext's *light* format, read by jupytext itself.

In the light format a cell has no marker of its own unless it needs one
(``# +`` … ``# -`` around code with blank lines, ``# + [markdown]``): a
paragraph of comment lines is a Markdown cell, code paragraphs are code cells,
and where one ends depends on blank lines, indentation and strings.  Those
rules are jupytext's, so jupytext reads the script (``jupytext.reads``); this
module finds each cell's lines in the script again, so that its code runs as
written (a commented magic stays a comment) and its messages name the
script's lines.

jupytext is needed only for scripts in this format (``pip install jupytext``);
a script in the percent format is read without it.

Pure core: standard library, :mod:`.scripts` and (imported when called) jupytext.
"""

from __future__ import annotations

from typing import Any

from snipcheck.sources import script_model as scripts
from snipcheck.sources.script_header import Header


def read(text: str, header: Header | None) -> scripts.Script:
    """The cells of a light-format script, as jupytext reads them.

    :raises scripts.ScriptError: without jupytext, or where a cell of its
        reading cannot be found in the script.
    """
    try:
        import jupytext
    except ImportError:
        raise scripts.ScriptError(
            "this script is in jupytext's light format, which snipcheck reads with jupytext: install it "
            "(pip install jupytext), or convert the script to the percent format (jupytext --to py:percent)",
            header.line if header else 1,
        ) from None
    notebook = jupytext.reads(text, fmt="py:light")
    lines = text.split("\n")
    cursor = header.end if header is not None else 0
    cells: list[scripts.Cell] = []
    for cell in notebook.cells:
        source: list[str] = str(cell.source).split("\n")
        if not "".join(source).strip():
            continue
        kind = str(cell.cell_type)
        at = _find(lines, cursor, source, commented=kind != "code")
        if at < 0:
            raise scripts.ScriptError(
                f"jupytext reads a {kind} cell starting {source[0]!r} that snipcheck cannot find in the script again; "
                "convert the script to the percent format (jupytext --to py:percent)",
                cursor + 1,
            )
        cursor = at + len(source)
        metadata: dict[str, Any] = dict(cell.metadata)
        tags = tuple(str(t) for t in metadata.get("tags", ()) if isinstance(t, str))
        if kind == "markdown":
            cells.append(scripts.Cell("prose", "\n".join(source), at + 1, markup="md", tags=tags))
        elif kind == "raw":
            cells.append(scripts.Cell("raw", "\n".join(source), at + 1, tags=tags))
        else:
            body = lines[at:cursor]
            display = ("figures",) if scripts.ends_quiet(body) else ("repr", "figures")
            cells.append(scripts.Cell("code", "\n".join(body), at + 1, str(metadata.get("id") or ""), tags=tags,
                                      display=display))  # fmt: skip
    return scripts.Script("light", tuple(cells), header)


def _find(lines: list[str], start: int, source: list[str], commented: bool) -> int:
    """Index of the first line at or after ``start`` where ``source`` begins
    (its lines as comments when ``commented``; a code line may be a commented
    magic), or -1."""
    first = source[0]
    forms = {f"# {first}".rstrip(), f"#{first}".rstrip()} if commented else {first, f"# {first}"}
    for i in range(start, len(lines)):
        if lines[i].rstrip() in forms or lines[i] in forms:
            return i
    return -1
