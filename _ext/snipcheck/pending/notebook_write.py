"""Write new stated outputs into a ``.ipynb`` notebook: a cell's ``outputs``, and nothing else.

A notebook cell's stated output is made from its stored outputs
(:func:`snipcheck.sources.notebook.stated_text`).  :func:`rewrite` does the
inverse for the accepted changes of ``record``, ``accept`` and ``review``
(one :class:`~snipcheck.sources.rewrite.Edit` per cell): it finds the text
span of each edited cell's ``outputs`` value in the file's JSON
(:func:`output_spans`), builds the new outputs from the old ones and the new
text (:func:`new_outputs`), serialises them as the file's own writer did
(Jupyter's ``indent=1``, sorted keys, ``ensure_ascii=False``, or whatever
re-serialises the stored outputs byte for byte) and splices them in.  Every
other byte stays as it was: key order, indentation, line ends, cell ids,
metadata, execution counts, the other cells.

How new text is shared out among a cell's outputs (the run captured one
terminal text, not Jupyter's output objects), see :func:`new_outputs`.

Before anything may be written the new text is read back
(:func:`_read_back`): it must validate against nbformat's schema, each
edited cell must state exactly its new output, and every other cell (and
every edited cell but for its outputs) must read as before.  A notebook
whose bytes differ from those the index read is refused
(:class:`NotebookChanged`), naming the cell; the write itself goes through
:func:`snipcheck.files.write_all` (:mod:`snipcheck.pending.commit`), which
checks the bytes once more and leaves the file byte-identical on a failure
or a Ctrl-C.

Pure core: standard library, nbformat (imported when a notebook is written),
:mod:`snipcheck.files`, :mod:`snipcheck.sources.notebook`,
:mod:`snipcheck.sources.rewrite`.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snipcheck.files import ChangedOnDisk
from snipcheck.sources import notebook as nb
from snipcheck.sources import notebook_outputs
from snipcheck.sources.rewrite import Edit, Unwritable

__all__ = ["NotebookChanged", "new_outputs", "output_spans", "rewrite", "unwritable"]

#: What ``record`` says of a notebook cell whose figures changed.
FIGURES_NOT_WRITTEN = (
    "snipcheck does not write figures into a notebook: run the cell in Jupyter and save the notebook "
    "(its new figure is shown on the built page)"
)
#: The line that starts a traceback, in the stated output of an ``error`` output and in a run's.
TRACEBACK = "Traceback (most recent call last):"
#: The markup of a notebook cell's placement (:mod:`snipcheck.sphinxext.notebook`).
MARKUP = "notebook"
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
#: The sentences between the tracebacks of a chained exception.
_CHAINED = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_V3 = re.compile(r'"nbformat"\s*:\s*3\s*[,}]')


class NotebookChanged(ChangedOnDisk):
    """A notebook holds other bytes than when the index read it: nothing was written.

    :param path: the notebook.
    :param cells: the cells whose outputs were to be written (``cell 3 (id printed)``).
    """

    def __init__(self, path: Path, cells: str) -> None:
        super().__init__(path)
        self.cells = cells


class FigureChanged(ValueError):
    """New text that changes a stored figure's placeholder line: its image
    would have to be written too, which is not done (``record`` refuses a
    notebook cell whose figures changed before it gets here)."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(f"its figure {old} would become {new!r}")


def cell_label(number: int, cell_id: str) -> str:
    """How a message names a cell: ``cell 3 (id printed)``, as the drift warning does."""
    return f"cell {number} (id {cell_id})"


def unwritable(text: str) -> str:
    """Why ``record``/``accept`` cannot write this notebook's outputs (``""``: they can).

    Only nbformat 4 is written: an nbformat 3 notebook is read upgraded
    (:func:`snipcheck.sources.notebook.read`), and writing it back would
    rewrite the whole file.
    """
    if not _V3.search(text):
        return ""
    try:
        major = json.loads(text).get("nbformat")
    except (ValueError, AttributeError):
        return ""  # the reader says what is wrong with it
    if major == 4:
        return ""
    return (
        f"an nbformat {major} notebook: snipcheck writes outputs into nbformat 4 only; open and save it in "
        "a current Jupyter (which upgrades it), then record again"
    )


# --- where each cell's outputs are in the JSON text --------------------------------------------


class _Unlocatable(ValueError):
    """The JSON text is not shaped as a notebook where a cell's outputs were expected."""


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _members(text: str, i: int) -> dict[str, tuple[int, int]]:
    """The members of the JSON object at ``text[i]``: key → ``(start, end)`` of
    its value's text (the last of repeated keys, as :func:`json.loads` reads them)."""
    if text[i : i + 1] != "{":
        raise _Unlocatable(f"an object was expected at offset {i}")
    found: dict[str, tuple[int, int]] = {}
    i = _skip(text, i + 1)
    if text[i : i + 1] == "}":
        return found
    while True:
        key, i = _DECODER.raw_decode(text, i)
        i = _skip(text, i)
        if text[i : i + 1] != ":" or not isinstance(key, str):
            raise _Unlocatable(f"a member was expected at offset {i}")
        start = _skip(text, i + 1)
        _, end = _DECODER.raw_decode(text, start)
        found[key] = (start, end)
        i = _skip(text, end)
        if text[i : i + 1] == ",":
            i = _skip(text, i + 1)
        elif text[i : i + 1] == "}":
            return found
        else:
            raise _Unlocatable(f"',' or '}}' was expected at offset {i}")


def _items(text: str, i: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each item's text in the JSON array at ``text[i]``."""
    if text[i : i + 1] != "[":
        raise _Unlocatable(f"an array was expected at offset {i}")
    found: list[tuple[int, int]] = []
    i = _skip(text, i + 1)
    if text[i : i + 1] == "]":
        return found
    while True:
        _, end = _DECODER.raw_decode(text, i)
        found.append((i, end))
        i = _skip(text, end)
        if text[i : i + 1] == ",":
            i = _skip(text, i + 1)
        elif text[i : i + 1] == "]":
            return found
        else:
            raise _Unlocatable(f"',' or ']' was expected at offset {i}")


def output_spans(text: str) -> list[tuple[int, int] | None]:
    """For each cell of a notebook's JSON text, in order, the ``(start, end)``
    offsets of its ``outputs`` value (``None`` for a cell without one).

    :raises ValueError: if the text is not a JSON object whose ``cells`` are
        objects (:class:`json.JSONDecodeError` for text that is not JSON).
    """
    top = _members(text, _skip(text, 0))
    if "cells" not in top:
        raise _Unlocatable("the notebook has no 'cells'")
    return [_members(text, start).get("outputs") for start, _ in _items(text, top["cells"][0])]


# --- the new outputs --------------------------------------------------------------------------


def _joined(value: Any) -> str:
    return value if isinstance(value, str) else "".join(value)


def _split_error(body: str) -> tuple[str, list[str] | None]:
    """``body`` cut before its traceback: the text before it (with the line
    break that ends it) and the traceback's lines (a chained exception's
    tracebacks all in it, as IPython stores them in one ``error`` output), or
    ``None`` for no traceback."""
    lines = body.split("\n")
    at = max((k for k, line in enumerate(lines) if line == TRACEBACK), default=None)
    while at is not None:
        k = at - 1
        while k >= 0 and not lines[k]:
            k -= 1
        if k < 0 or lines[k] not in _CHAINED:
            break
        earlier = max((i for i in range(k) if lines[i] == TRACEBACK), default=None)
        if earlier is None:
            break
        at = earlier
    if at is None:
        return body, None
    return "".join(line + "\n" for line in lines[:at]), lines[at:]


def _exception(lines: list[str]) -> tuple[str, str, list[str]]:
    """``(ename, evalue, frames)`` of a traceback's lines as a run printed them:
    the last exception's line, and every line before it but a ``...`` wildcard line."""
    last = max(k for k, line in enumerate(lines) if line == TRACEBACK)
    first = next(
        (k for k in range(last + 1, len(lines)) if lines[k] != "..." and not lines[k][:1].isspace()), len(lines)
    )
    frames = [line for line in lines[1:first] if line != "..."]
    ename, _, evalue = "\n".join(lines[first:]).partition(": ")
    return ename, evalue, frames


def stated_form(body: str, raises: bool) -> str:
    """What a cell states once ``body`` is written into its outputs: ``body``,
    with the frames of its traceback (for a cell that raises) as the ``...``
    line an ``error`` output states (see :func:`snipcheck.sources.notebook.stated_text`)."""
    before, tail = _split_error(body) if raises else (body, None)
    if tail is None:
        return body
    ename, evalue, _ = _exception(tail)
    return f"{before}{TRACEBACK}\n...\n{nb.error_line(_short(ename), evalue)}"


def _share(parts: list[str], text: str) -> list[str]:
    """``text`` shared out among the outputs whose old texts are ``parts``:
    each new line goes to the output of the old line it replaces (paired in
    order within a replaced block; an inserted line to that of the line
    before it, or after it at the start); an unchanged line keeps its
    characters where they were."""
    old = "".join(parts)
    if not old:
        return [text, *[""] * (len(parts) - 1)] if parts else []
    owner: list[int] = []  # per character of old
    for k, part in enumerate(parts):
        owner += [k] * len(part)
    old_lines = old.splitlines(True)
    new_lines = text.splitlines(True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    shared = [""] * len(parts)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for pos in range(starts[i1], starts[i2]):
                shared[owner[pos]] += old[pos]
            continue
        if op == "delete":
            continue
        for j in range(j1, j2):
            # a replaced block pairs its lines one to one, the extra new ones
            # go with its last; an inserted line goes with the line before it
            at = min(i1 + j - j1, i2 - 1) if op == "replace" else max(i1 - 1, 0)
            shared[owner[starts[at]]] += new_lines[j]
    return shared


def new_outputs(old: list[dict[str, Any]], body: str, raises: bool) -> list[dict[str, Any]]:
    """A cell's outputs once ``body`` (the stated output to write) replaces what they state.

    The stored structure is kept, and only text replaced: the run captured one
    terminal text, where Jupyter keeps stdout, stderr and a shown value apart.

    * The text is shared out among the outputs that state text (``stream``,
      and ``execute_result``/``display_data`` by their ``text/plain``) line by
      line (:func:`_share`): a line the run no longer prints leaves its
      output, a changed line stays in the output of the line it replaces.  An
      output whose text is unchanged stays byte for byte (its
      ``execution_count`` and metadata too); one left without text is
      removed; one whose ``text/plain`` changes keeps only that (its HTML,
      LaTeX or image showed the old value).  A cell that stored no text gets
      one ``stdout`` stream.
    * The final line break the stated output drops is put back where the
      stored text had one.
    * For a cell that may raise (``raises``), a traceback at the end of the
      text is its ``error`` output: ``ename`` and ``evalue`` from its last
      line; an unchanged one stays as stored (IPython's coloured traceback),
      a new one gets the plain lines the run printed as ``traceback``.
    * Outputs that state no text (images, widgets) stay where they are.

    :param old: the stored outputs, as the JSON text holds them.
    """
    before, tail = _split_error(body) if raises else (body, None)
    texts = nb.output_texts(old)
    parts = [t for t in texts if t is not None]
    ends_line = not parts or parts[-1].endswith("\n")
    if tail is None and before and ends_line:
        before += "\n"  # the line break the stated output dropped
    elif tail is not None and before and not ends_line:
        before = before[:-1]  # the stated output put it before the traceback
    if before and not parts:
        stream = {"name": "stdout", "output_type": "stream", "text": ""}
        at = next((k for k, out in enumerate(old) if out.get("output_type") == "error"), len(old))
        old, texts, parts = [*old[:at], stream, *old[at:]], [*texts[:at], "", *texts[at:]], [""]
    shared = _share(parts, before)
    result: list[dict[str, Any]] = []
    mine = iter(shared)
    for out, text in zip(old, texts, strict=True):
        if out.get("output_type") == "error":
            if tail is not None:
                result.append(_error(out, tail))
                tail = None
        elif text is None or (new := next(mine)) == text:
            result.append(out)  # no text (a widget), or the same text: as stored
        elif notebook_outputs.figure(out) is not None:
            raise FigureChanged(text.strip(), new.strip())
        elif new:
            result.append(_with_text(out, new))
    if tail is not None:
        result.append(_error(None, tail))
    return result


def _with_text(out: dict[str, Any], text: str) -> dict[str, Any]:
    """``out`` stating ``text`` instead (lines split as nbformat stores them)."""
    new = copy.deepcopy(out)
    if new.get("output_type") == "stream":
        new["text"] = text.splitlines(True)
    else:
        new["data"] = {"text/plain": text.removesuffix("\n").splitlines(True)}
    return new


def _short(ename: str) -> str:
    """The name IPython stores of an exception (``type.__name__``) for the one a plain run prints
    (``json.decoder.JSONDecodeError``: ``JSONDecodeError``)."""
    return ename.rpartition(".")[2]


def _error(old: dict[str, Any] | None, lines: list[str]) -> dict[str, Any]:
    printed, evalue, frames = _exception(lines)
    ename = _short(printed)
    if old is not None and (old.get("ename"), old.get("evalue")) == (ename, evalue):
        return old
    traceback = [TRACEBACK, *frames, f"{printed}: {evalue}" if evalue else printed]
    return {"ename": ename, "evalue": evalue, "output_type": "error", "traceback": traceback}


# --- writing it as the file was written -------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    """How the file's writer serialised JSON: ``indent`` (``None``: on one line), key order, escapes."""

    indent: str | None
    sort_keys: bool
    ensure_ascii: bool
    separators: tuple[str, str]
    newline: str
    base: str  # the indentation of the line that holds the "outputs" key

    def dump(self, value: Any) -> str:
        text = json.dumps(
            value, indent=self.indent, sort_keys=self.sort_keys, ensure_ascii=self.ensure_ascii, separators=self.separators
        )
        # JSON strings hold no raw line break: every one is the writer's
        return text.replace("\n", self.newline + self.base) if self.indent is not None else text


def _style(text: str, start: int, end: int) -> _Style:
    """The style that re-serialises the stored outputs ``text[start:end]`` byte for
    byte, or Jupyter's (``indent=1`` at the key's depth, sorted keys,
    ``ensure_ascii=False``) where none does (say, for ``[]``)."""
    line_start = text.rfind("\n", 0, start) + 1
    lead = text[line_start:start]
    base = lead[: len(lead) - len(lead.lstrip(" \t"))]
    newline = "\r\n" if text[max(0, line_start - 2) : line_start] == "\r\n" else "\n"
    indented = lead.lstrip(" \t").startswith('"outputs"')
    depth = 3  # notebook → cells → cell → its "outputs" key
    unit = base[: len(base) // depth] if base and len(base) % depth == 0 and base == base[0] * len(base) else " "
    old = text[start:end]
    value = json.loads(old)
    candidates = []
    for sort_keys in (True, False):
        for ensure_ascii in (False, True):
            if indented:
                candidates.append(_Style(unit, sort_keys, ensure_ascii, (",", ": "), newline, base))
            else:
                for seps in ((",", ":"), (", ", ": ")):
                    candidates.append(_Style(None, sort_keys, ensure_ascii, seps, newline, base))
    return next((s for s in candidates if s.dump(value) == old), candidates[0])


# --- the rewrite --------------------------------------------------------------------------------


def rewrite(path: Path, edits: Sequence[Edit]) -> tuple[bytes, bytes]:
    """The notebook's old and new bytes, with each edited cell's outputs replaced; nothing is written.

    :param edits: the edits of cells of this notebook (placements of
        :data:`MARKUP`: ``line`` is the cell's number, the snippet id ends in
        its cell id, ``digest`` the SHA-256 of the bytes the index read).
    :raises NotebookChanged: if the notebook holds other bytes than the
        index read (it was saved meanwhile).
    :raises snipcheck.sources.rewrite.Unwritable: naming the notebook and the
        cell: it cannot be read or written (nbformat 3, not shaped as
        nbformat writes), or the new notebook would not validate against
        nbformat's schema or would read back differently.
    """
    cells = ", ".join(cell_label(e.placement.line, _cell_id(e)) for e in edits)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise Unwritable(f"{path}: {cells}: cannot be read: {exc.strerror or exc}; nothing was written") from None
    digest = hashlib.sha256(raw).hexdigest()
    if any(e.placement.digest not in ("", digest) for e in edits):
        raise NotebookChanged(path, cells)
    try:
        text = raw.decode("utf-8")
        before = nb.read(text)
        spans = output_spans(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unwritable(f"{path}: {cells}: the notebook cannot be read ({exc}); nothing was written") from None
    why = unwritable(text)
    if why:
        raise Unwritable(f"{path}: {cells}: {why}; nothing was written")
    by_number = {c.number: c for c in before.cells}
    splices: list[tuple[int, int, str]] = []
    expected: dict[int, str] = {}
    for edit in sorted(edits, key=lambda e: e.placement.line):
        number, cell_id = edit.placement.line, _cell_id(edit)
        cell = by_number.get(number)
        span = spans[number - 1] if 0 < number <= len(spans) else None
        if cell is None or cell.cell_id != cell_id or span is None:
            raise NotebookChanged(path, cell_label(number, cell_id))
        if number in expected:
            raise Unwritable(f"{path}: {cell_label(number, cell_id)}: two new outputs for one cell")
        start, end = span
        try:
            outputs = new_outputs(json.loads(text[start:end]), edit.body, bool(cell.expect))
        except FigureChanged as exc:
            raise Unwritable(f"{path}: {cell_label(number, cell_id)}: {exc}; {FIGURES_NOT_WRITTEN}") from None
        splices.append((start, end, _style(text, start, end).dump(outputs)))
        expected[number] = stated_form(edit.body, bool(cell.expect))
    new_text = text
    for start, end, value in sorted(splices, reverse=True):
        new_text = new_text[:start] + value + new_text[end:]
    _read_back(path, text, new_text, expected)
    return raw, new_text.encode("utf-8")


def _cell_id(edit: Edit) -> str:
    return edit.placement.snippet_id.rsplit("/", 1)[-1]


def _read_back(path: Path, text: str, new_text: str, expected: dict[int, str]) -> None:
    """Refuse a new notebook text that does not validate, or that reads back as
    anything but the old one with the ``expected`` stated outputs (cell number → text).

    :raises snipcheck.sources.rewrite.Unwritable: naming the notebook and the cell.
    """
    import nbformat

    try:
        after = nb.read(new_text)  # validates against nbformat's schema
    except nb.NotebookError as exc:
        cells = ", ".join(f"cell {n}" for n in sorted(expected))
        raise Unwritable(
            f"{path}: {cells}: with the new outputs the notebook would not validate against nbformat's schema "
            f"({exc}); nothing was written (a bug: please report it with the notebook)"
        ) from None
    old_nb, new_nb = nbformat.reads(text, as_version=4), nbformat.reads(new_text, as_version=4)
    for number, (was, now) in enumerate(zip(old_nb.cells, new_nb.cells, strict=False), start=1):
        if number in expected:
            was, now = {**was, "outputs": None}, {**now, "outputs": None}
        if was != now or len(old_nb.cells) != len(new_nb.cells) or old_nb.metadata != new_nb.metadata:
            raise Unwritable(f"{path}: cell {number} would read back changed; nothing was written (a bug: please report it)")
    for cell in after.cells:
        if cell.number in expected and cell.stated != expected[cell.number]:
            raise Unwritable(
                f"{path}: {cell_label(cell.number, cell.cell_id)}: written into the notebook, its outputs would state "
                f"{cell.stated[:80]!r} instead of {expected[cell.number][:80]!r}, so they would never match; "
                "nothing was written"
            )
