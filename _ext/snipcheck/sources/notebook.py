"""Jupyter notebooks: a ``.ipynb`` file read into the code cells snipcheck runs.

A notebook page is a chain (:mod:`snipcheck.sources.chains`): its code cells
run in order in one process, each captured alone.  A cell's stored outputs
are its stated output, in the terminal text a run of its code prints:

* ``stream`` outputs (stdout and stderr, in their order) as written;
* ``execute_result`` and ``display_data``: their ``text/plain`` text and a
  line break; what is done with figures and the other mime types is
  :mod:`snipcheck.sources.notebook_outputs`' to say;
* ``error``: the traceback is not compared (IPython's is coloured and
  numbers ``Cell In[3]``); its last line ``ename: evalue`` is, after a
  ``...`` wildcard line standing for the traceback, and ``ename`` is the
  exception the cell is expected to raise.

``execution_count`` and metadata are never read, so Jupyter's bookkeeping
never drifts.  Markers change what is compared: myst-nb's cell tags
``raises-exception`` (an exception is expected, whatever the outputs),
``skip-execution`` (not run, not compared), ``remove-input``/``remove-output``
(shown or hidden by myst-nb; compared all the same) and nbval's comment
markers or tags ``NBVAL_IGNORE_OUTPUT`` (run, output not compared),
``NBVAL_SKIP`` (not run) and ``NBVAL_RAISES_EXCEPTION``.

Pure core: standard library, nbformat (a well-kept reader of every
notebook version), :mod:`snipcheck.model` and
:mod:`snipcheck.sources.notebook_outputs`; the Sphinx side lives in
:mod:`snipcheck.sphinxext.notebook`.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from snipcheck.model import Figure
from snipcheck.sources import notebook_outputs

__all__ = ["Cell", "Notebook", "NotebookError", "read", "shows_last"]

#: nbval's markers, as a comment on the cell's first lines or as a cell tag.
NBVAL_IGNORE = "NBVAL_IGNORE_OUTPUT"
NBVAL_SKIP = "NBVAL_SKIP"
NBVAL_RAISES = "NBVAL_RAISES_EXCEPTION"
NBVAL_CHECK = "NBVAL_CHECK_OUTPUT"
_MARKER = re.compile(r"^\s*#\s*(NBVAL_[A-Z_]+)\s*$")
#: The file IPython runs a cell from, as a warning's location names it
#: (``/tmp/ipykernel_15110/2931923677.py:2: UserWarning: ...``): a plain run
#: names the cell's script there, so the stated output holds a ``[..]``
#: wildcard in its place (:mod:`snipcheck.judge.wildcards`).
_CELL_FILE = re.compile(r"(?:[A-Za-z]:)?[^\s:\"']*ipykernel_\d+[/\\]\d+\.py")
#: The wildcard that matches any text within a line.
INLINE = "[..]"


class NotebookError(ValueError):
    """A notebook that cannot be read: what is wrong and what to do."""


@dataclass(frozen=True)
class Cell:
    """One code cell of a notebook.

    :param number: its 1-based position among all the notebook's cells (what
        Jupyter's interface counts), not the execution count.
    :param cell_id: its ``id`` (nbformat 4.5), or ``cell-<number>`` for older notebooks.
    :param source: its code as written.
    :param stated: the stated output made from its stored outputs.
    :param expect: the exception it is expected to raise, for a cell marked
        ``raises-exception`` or ``NBVAL_RAISES_EXCEPTION``: its stored error's
        ``ename`` (``"Exception"`` without one); ``""`` for none.
    :param run: whether it runs (``skip-execution``/``NBVAL_SKIP`` say no).
    :param compared: whether its output is compared (``NBVAL_IGNORE_OUTPUT`` says no).
    :param tags: its tags and nbval comment markers.
    :param meta: its metadata's ``snipcheck`` value, as stored (see
        :mod:`snipcheck.sources.notebook_meta`); ``None`` without one.
    :param unchecked: the mime types of its stored outputs that are not
        compared (see :func:`snipcheck.sources.notebook_outputs.unchecked`).
    :param figures: its stored figures, the stated images of the figures its
        run draws (see :func:`snipcheck.sources.notebook_outputs.figures`).
    :param stderr: the text of its stored ``stderr`` streams alone (the cell
        file's path a wildcard, as in ``stated``): the run must write that
        text to stderr, not the same text to stdout.
    :param rest: its stated output without its stored ``stderr`` streams
        (its stdout, shown values, figures and error): with ``stderr``, what
        each stream holds, which Jupyter interleaves in time order.
    :param literal: whether what its stored outputs printed holds text that a
        stated output reads as a wildcard (``[..]``, a ``...`` line): a stored
        output is what a run printed, so the cell is compared without
        wildcards (:func:`has_markers`).
    """

    number: int
    cell_id: str
    source: str
    stated: str
    expect: str = ""
    run: bool = True
    compared: bool = True
    tags: tuple[str, ...] = field(default=())
    meta: Any = None
    unchecked: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()
    literal: bool = False
    stderr: str = ""
    rest: str = ""


@dataclass(frozen=True)
class Notebook:
    """A notebook read for a run.

    :param language: the kernel's language (``kernelspec``/``language_info``), ``"python"`` if unnamed.
    :param cells: its code cells, in order.
    :param meta: its metadata's ``snipcheck`` value, as stored; ``None`` without one.
    """

    language: str
    cells: tuple[Cell, ...]
    meta: Any = None

    @property
    def runnable(self) -> bool:
        """Whether its kernel is Python, which snipcheck runs."""
        return self.language.lower() in ("python", "python3", "ipython", "ipython3")


def read(text: str) -> Notebook:
    """Read a notebook's JSON text.

    :raises NotebookError: for text that is not JSON, a notebook that is not
        nbformat 4 (or cannot be upgraded to it), or one that fails nbformat's
        schema; the message says what to do.
    """
    import nbformat

    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "open it in Jupyter and save it again, or fix the JSON"
        ) from exc
    if not isinstance(raw, dict):
        raise NotebookError("not a notebook: its JSON is not an object with 'cells'")
    major = raw.get("nbformat")
    if major not in (3, 4) or not isinstance(raw.get("nbformat_minor", 0), int):
        raise NotebookError(
            f"nbformat version {major!r}.{raw.get('nbformat_minor')!r} cannot be read (snipcheck reads 4.x, and "
            "3 upgraded to 4); save it with a current Jupyter"
        )
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises its own errors and plain ones for bad shapes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NotebookError(f"not a valid notebook ({first}); open it in Jupyter and save it again") from exc
    meta = nb.get("metadata", {})
    language = str(
        meta.get("kernelspec", {}).get("language") or meta.get("language_info", {}).get("name") or "python"
    )
    cells = []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        cells.append(_cell(number, cell))
    return Notebook(language, tuple(cells), meta.get("snipcheck"))


def _cell(number: int, cell: Any) -> Cell:
    source = cell.get("source", "")
    tags = list(cell.get("metadata", {}).get("tags", []))
    for line in source.splitlines():
        m = _MARKER.match(line)
        if m is None:
            break
        tags.append(m.group(1))
    stated, ename = stated_text(cell.get("outputs", []))
    # As in myst-nb and nbval, a cell may raise only when it is marked to:
    # a stored error without the marker is a fault the run reports.
    expect = ""
    if "raises-exception" in tags or NBVAL_RAISES in tags:
        expect = ename or "Exception"
    run = "skip-execution" not in tags and NBVAL_SKIP not in tags
    compared = NBVAL_IGNORE not in tags or NBVAL_CHECK in tags
    cell_id = str(cell.get("id") or f"cell-{number}")
    meta = cell.get("metadata", {}).get("snipcheck")
    outputs = cell.get("outputs", [])
    unchecked, drawn = notebook_outputs.unchecked(outputs), notebook_outputs.figures(outputs)
    literal = any(has_markers(text) for text in _printed(outputs))
    stderr = "".join(
        text for out, text in zip(outputs, output_texts(outputs), strict=True)
        if text is not None and out.get("output_type") == "stream" and out.get("name") == "stderr"
    ).removesuffix("\n")  # fmt: skip
    rest, _ = stated_text([out for out in outputs if not (out.get("output_type") == "stream" and out.get("name") == "stderr")])
    return Cell(
        number, cell_id, source, stated, expect, run, compared, tuple(tags), meta, unchecked, drawn, literal, stderr, rest
    )


def _printed(outputs: list[Any]) -> list[str]:
    """What the stored outputs hold as a run printed it (streams, and the
    ``text/plain`` of results and displays), before snipcheck writes any
    wildcard into them (a stderr's cell file, say)."""
    texts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            texts.append(_joined(out.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            plain = notebook_outputs.plain_text(out)
            if plain is not None:
                texts.append(_joined(plain))
    return texts


def has_markers(printed: str) -> bool:
    """Whether ``printed`` (what a run printed, as a stored output holds it)
    holds what a stated output reads as a wildcard: ``[..]``, or a line that
    is exactly ``...`` (the markers of :mod:`snipcheck.judge.wildcards`)."""
    return "[..]" in printed or "..." in printed.split("\n")


def stated_text(outputs: list[Any]) -> tuple[str, str]:
    """The stated output of a cell's stored outputs, and the ``ename`` of its error output (``""`` if none).

    :param outputs: the cell's ``outputs`` as nbformat reads them.
    """
    parts: list[str] = []
    ename = ""
    for out, text in zip(outputs, output_texts(outputs), strict=True):
        if text is not None:
            parts.append(text)
        elif out.get("output_type") == "error":
            ename = str(out.get("ename", ""))
            if parts and not parts[-1].endswith("\n"):
                parts.append("\n")
            parts.append(f"Traceback (most recent call last):\n...\n{error_line(ename, str(out.get('evalue', '')))}\n")
    return "".join(parts).removesuffix("\n"), ename


def output_texts(outputs: list[Any]) -> list[str | None]:
    """The text each stored output adds to the stated output, in order:
    a ``stream``'s text, a figure's placeholder line, a rich output's
    ``text/plain`` and a line break; ``None`` for an output that adds no text
    of its own (an ``error``, whose line :func:`stated_text` writes, or a
    bundle without ``text/plain``).  The writer of new outputs
    (:mod:`snipcheck.pending.notebook_write`) shares new text out by these.
    """
    texts: list[str | None] = []
    drawn = 0
    for out in outputs:
        kind = out.get("output_type")
        shown = notebook_outputs.figure(out)
        if kind == "stream":
            text = _joined(out.get("text", ""))
            texts.append(_CELL_FILE.sub(INLINE, text) if out.get("name") == "stderr" else text)
        elif shown is not None:
            drawn += 1
            texts.append(shown.placeholder(drawn) + "\n")
        elif kind in ("execute_result", "display_data"):
            plain = notebook_outputs.plain_text(out)
            texts.append(None if plain is None else _joined(plain) + "\n")
        else:
            texts.append(None)
    return texts


def error_line(ename: str, evalue: str) -> str:
    """The last line of a traceback as a plain run prints it, for IPython's
    stored ``ename`` and ``evalue``: ``KeyError`` alone for an exception
    without a message (not ``KeyError: ``); and, for a name that is not a
    builtin exception's, ``[..]`` before it, since IPython stores
    ``type.__name__`` (``JSONDecodeError``) where a plain run prints the
    module too (``json.decoder.JSONDecodeError``), or nothing for a class of
    the notebook itself (``__main__``)."""
    import builtins

    name = ename if isinstance(getattr(builtins, ename, None), type) or not ename else "[..]" + ename
    return f"{name}: {evalue}" if evalue else name


def _joined(text: str | list[str]) -> str:
    return text if isinstance(text, str) else "".join(text)


def shows_last(source: str) -> bool:
    """Whether a cell shows the value of its last statement, as IPython does:
    when that statement is a bare expression not followed by ``;``.  The run
    then compiles it in the interactive mode, which hands its value to
    ``sys.displayhook`` (``repr`` printed unless ``None``), and the cell's
    source runs as written, so tracebacks and warnings show its own lines.
    IPython magics (``%``/``!`` lines) are not Python: the run reports them.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return False
    last = tree.body[-1]
    lines = source.split("\n")
    tail = lines[(last.end_lineno or last.lineno) - 1][last.end_col_offset or 0 :]
    return not tail.strip().startswith(";")


#: A line IPython runs and plain python cannot: a line or cell magic, or a shell escape.
_IPYTHON_LINE = re.compile(r"^[ \t]*(?:%%?[A-Za-z_]\w*|!)")
#: The magic that only picks the inline backend: figures are captured as that backend shows them.
_MATPLOTLIB_MAGIC = re.compile(r"^([ \t]*)%matplotlib\b[^\n]*$", re.MULTILINE)


def runnable(source: str) -> str:
    """A cell's code as its run takes it: a ``%matplotlib`` line (``inline``,
    which most notebooks start with) becomes a comment, its line kept, as
    the run captures figures as the inline backend shows them; the rest as
    written."""
    return _MATPLOTLIB_MAGIC.sub(lambda m: f"{m.group(1)}pass  # {m.group(0).strip()}", source) if "%matplotlib" in source else source


def ipython_only(source: str) -> tuple[int, str] | None:
    """The first line of ``source`` (1-based number, text) that is IPython
    syntax, where plain python cannot compile the code: a magic (``%time``,
    ``%%capture``) or a shell escape (``!pip list``); ``None`` where the code
    compiles, or no such line is found (a plain syntax error)."""
    try:
        compile(source, "<cell>", "exec", dont_inherit=True)
        return None
    except (SyntaxError, ValueError):
        pass
    for number, line in enumerate(source.split("\n"), start=1):
        if _IPYTHON_LINE.match(line):
            return number, line.strip()
    return None
