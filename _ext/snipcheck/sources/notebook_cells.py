"""A notebook cell as a placement: what the front ends without Sphinx need to know of it.

A code cell of a notebook page (:mod:`snipcheck.sphinxext.notebook`) is
placed as a :class:`~snipcheck.sources.placement.Placement` of directive
:data:`DIRECTIVE`, whose ``line`` is the cell's number (its 1-based position
among all the notebook's cells, as Jupyter counts them) and whose options
carry what its markers say beyond its code and stated output: whether its
output is compared (nbval's ``NBVAL_IGNORE_OUTPUT`` says no).  A cell of a
text notebook (a ``.md`` page of ``{code-cell}`` directives) has a line of
its page, as any MyST placement, and its number as the option :data:`CELL`.  The build,
``verify``, ``accept`` and the pytest plugin read the same placement index,
so each names the cell and compares it the same way
(:func:`snipcheck.judge.verdict.check`'s ``compared``).

Pure core: standard library and :mod:`snipcheck.sources.placement`.
"""

from __future__ import annotations

from snipcheck.sources.placement import Placement

__all__ = [
    "CELL", "DIRECTIVE", "NOT_COMPARED", "REST", "STDERR", "STORED", "compared", "is_cell", "label", "options",
    "stated_rest", "stated_stderr", "stored", "text_cell",
]  # fmt: skip

#: The directive name of a notebook cell's placement.
DIRECTIVE = "notebook-cell"
#: The option of a cell whose output is run but not compared (``NBVAL_IGNORE_OUTPUT``).
NOT_COMPARED = ("output", "not-compared")
#: The option that gives a text notebook cell's number (its ``line`` is a line of the page).
CELL = "cell"
#: The option of an ``.ipynb`` cell, whose stated output is its stored
#: outputs, what a run printed: ``"exact"`` (compared to its last newline,
#: wildcards only where snipcheck wrote them: a traceback's frames) or
#: ``"literal"`` (and without wildcards: the stored text holds some).
STORED = "stored"


#: The option that holds the text of an ``.ipynb`` cell's stored stderr streams.
STDERR = "stderr"


#: The option that holds the rest of an ``.ipynb`` cell's stated output (all but its stderr streams).
REST = "rest"


def options(
    compared_output: bool, literal: bool = False, stderr: str = "", rest: str = ""
) -> tuple[tuple[str, str], ...]:
    """The placement options of an ``.ipynb`` cell whose output is compared
    or not, whose stored outputs hold wildcard markers or not, whose stored
    stderr streams hold ``stderr`` and whose other outputs state ``rest``."""
    kept = (STORED, "literal" if literal else "exact"), (STDERR, stderr), (REST, rest)
    return (() if compared_output else (NOT_COMPARED,)) + kept


def stated_rest(placement: Placement) -> str | None:
    """What an ``.ipynb`` cell's stored outputs state but its stderr streams
    (see :func:`snipcheck.judge.verdict.check`'s ``rest``), ``None`` for any other placement."""
    return placement.option(REST) if stored(placement) else None


def stated_stderr(placement: Placement) -> str | None:
    """What an ``.ipynb`` cell's stored stderr streams hold (see
    :func:`snipcheck.judge.verdict.check`'s ``stderr``), ``None`` for any other placement."""
    return placement.option(STDERR) if stored(placement) else None


def stored(placement: Placement) -> str:
    """How ``placement``'s stated output is compared, as :func:`snipcheck.judge.verdict.check`'s
    ``stored`` takes it: ``""`` (as written, a page's), ``"exact"`` or ``"literal"`` (see :data:`STORED`)."""
    return placement.option(STORED) or "" if is_cell(placement) else ""


def text_cell(number: int) -> tuple[str, str]:
    """The option of a cell of a text notebook (a ``.md`` page of ``{code-cell}``
    directives): its number among the page's code cells, where its
    placement's ``line`` is the line of the page where the cell begins."""
    return (CELL, str(number))


def is_cell(placement: Placement) -> bool:
    """Whether ``placement`` is a notebook cell (of an ``.ipynb`` or a text notebook page)."""
    return placement.directive == DIRECTIVE


def compared(placement: Placement) -> bool:
    """Whether ``placement``'s output is compared: any placement but a cell marked ``NBVAL_IGNORE_OUTPUT``."""
    return not is_cell(placement) or placement.option(NOT_COMPARED[0]) != NOT_COMPARED[1]


def label(placement: Placement, shown: str | None = None) -> str:
    """Where ``placement`` is, for a diff's header and a message: ``nb.ipynb,
    cell 3 (id printed)`` for a notebook cell (as the build names it),
    ``page.md:12`` for any other.

    :param shown: the file as the reader should see it (relative to the
        project, say); default the placement's ``source`` as recorded.
    """
    path = shown if shown is not None else placement.source
    if not is_cell(placement):
        return f"{path}:{placement.line}"
    cell_id = placement.snippet_id.rsplit("/", 1)[-1]
    number = placement.option(CELL)
    if number is not None:  # a text notebook: a line of the page, and the cell's number
        return f"{path}:{placement.line}, cell {number} (id {cell_id})"
    return f"{path}, cell {placement.line} (id {cell_id})"

