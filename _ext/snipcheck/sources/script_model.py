"""The records a script is read into (:class:`Script`, :class:`Cell`) and its
reading error, shared by the readers of each format (:mod:`.scripts`,
:mod:`.light`).

Pure core: standard library and :mod:`snipcheck.sources.script_header`.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

from snipcheck.sources.script_header import Header

__all__ = ["DISPLAYS", "Cell", "Script", "ScriptError", "ends_quiet"]


#: What a code cell shows besides what it prints: its last bare expression's
#: value (``"repr"``) and the figures still open at its end (``"figures"``).
DISPLAYS = ("repr", "figures")


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

    :param kind: ``"prose"``, ``"code"`` or ``"raw"``.
    :param text: the prose with its comment marks removed (or the
        docstring's text), or the code as written (what runs).
    :param line: 1-based line of the script where the text starts.
    :param name: a code cell's name (its ``id`` or its ordinal); ``""`` otherwise.
    :param markup: prose: ``"rst"`` (sphinx-gallery) or ``"md"`` (jupytext);
        raw: the markup its ``raw_mimetype`` names, ``""`` for none (not shown).
    :param tags: a jupytext cell's ``tags`` metadata.
    :param display: what the cell shows besides its output (:data:`DISPLAYS`).
    :param head: 1-based line of the marker that starts the cell, 0 for none.
    """

    kind: str
    text: str
    line: int
    name: str = ""
    markup: str = ""
    tags: tuple[str, ...] = ()
    display: tuple[str, ...] = field(default=(), compare=False)
    head: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Script:
    """A script read into cells.

    :param flavor: ``"gallery"``, ``"percent"`` or ``"light"``.
    :param cells: its cells, in order.
    :param header: a jupytext script's header, if it has one.
    :param notes: ``(line, message)`` of what the reader could not honour
        (an unknown ``sphinx_gallery`` comment): worth a warning.
    """

    flavor: str
    cells: tuple[Cell, ...]
    header: Header | None = None
    notes: tuple[tuple[int, str], ...] = ()

    @property
    def code(self) -> list[Cell]:
        """The code cells."""
        return [c for c in self.cells if c.kind == "code"]


def ends_quiet(body: list[str]) -> bool:
    """Whether a jupytext code cell ends with ``;`` (IPython then shows no value)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(body) + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    meaningful = [t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                                     tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT)]  # fmt: skip
    return bool(meaningful) and meaningful[-1].string == ";"
