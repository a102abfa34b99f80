"""Captured text as a page shows it: control characters made visible, terminal lines, long words.

Three things every place that puts captured text on a page needs (the
output panel, the problem box and its diff, the stamp, the versions page,
the verify HTML report), kept apart from comparing: the stated output in the
page source is the terminal text (:func:`snipcheck.judge.compare.terminal_text`),
and nothing here changes it or what is compared.

**Control characters** (:func:`visible`).  Every control character but the
line feed and the tab -- C0 (``\\x00``-``\\x1f``), DEL (``\\x7f``), C1
(``\\x80``-``\\x9f``) and the line and paragraph separators ``\\u2028`` and
``\\u2029`` -- is shown as its Python escape: ``\\x00``, ``\\x1b``, ``\\x7f``,
``\\x85``, ``\\u2028``: what ``repr()`` prints, so a reader knows it
(invalid UTF-8 already reads ``\\x{ff}``, with braces, so that it never
reads as the text ``\\xff``: :mod:`snipcheck.rawbytes`); it is never emitted raw (NUL and most C0 characters are not
allowed in HTML or XML; ESC would be read by a terminal; docutils and the
browsers take ``\\f``, ``\\v``, ``\\x85`` and ``\\u2028`` for line breaks).
In an output panel the colour codes (SGR, ``ESC [ ... m``) are interpreted
instead (:func:`visible_keeping_colours`); every other escape sequence was
removed before (:func:`snipcheck.judge.compare.keep_colours`), and what is left of
a malformed one shows its ESC as ``\\x1b``.

**Terminal lines** (:func:`terminal_blocks`).  A terminal shows what a run
writes to stdout and stderr in one stream of lines: a line begun on stdout
and ended on stderr (partial writes with explicit flushes) is one line.  The
page groups the run's events into blocks of whole lines; a block whose lines
mix streams is one block whose parts keep their stream.

**Long words** (:func:`long_words`).  A search index splits text into words
and stems each one; Snowball's English stemmer (Sphinx's ``en``, and the
Latin words of ``zh``) takes time quadratic in a word's length, so one
1,000,000-character "word" cost a build over two minutes.  No reader types a
word longer than :data:`LONGEST_WORD` characters into a search box: the page
marks such runs of word characters so that no search language ever sees them
(see :func:`snipcheck.sphinxext.panel.captured_text`), and the rest of the
output stays searchable.

**Wrapping** (:func:`may_wrap`).  Output never soft-wraps where a line's
place on the screen means something: a traceback's caret line (``^^^^``)
stands under the expression it marks, a printed tensor's rows line up under
its first, a table's columns line up by spaces.  A block of plain stdout
whose every line reads as prose has no such place, so on a phone it may
wrap at the screen's edge rather than hide its end off to the side.

Every function here is linear in the length of its text.

Pure core: standard library and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import islice

from snipcheck.model import Event

#: The characters :func:`visible` shows as escapes (see the module docstring).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_OR_COLOUR = re.compile("(\x1b\\[[0-9;]*m)|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
#: Runs of word characters longer than this are kept out of the search index.
LONGEST_WORD = 100
_LONG_WORD = re.compile(rf"(?<!\w)\w{{{LONGEST_WORD + 1},}}")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character (see the module docstring) shown
    as its Python escape, e.g. ``"a\\x00b"`` → ``"a\\\\x00b"``."""
    if CONTROL.search(text) is None:
        return text
    return CONTROL.sub(lambda m: _escape(m.group(0)), text)


def visible_keeping_colours(text: str) -> str:
    """:func:`visible`, except that colour codes (``ESC [ digits ; ... m``) stay
    as they are, for the output panel's ANSI lexer to interpret."""
    if CONTROL.search(text) is None:
        return text
    return _CONTROL_OR_COLOUR.sub(lambda m: m.group(1) or _escape(m.group(0)), text)


def long_words(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each run of word characters (``\\w``) longer than
    :data:`LONGEST_WORD` in ``text``, in order."""
    for match in _LONG_WORD.finditer(text):
        yield match.span()


def where(event: Event) -> tuple[str, str]:
    """``(stream, kind)`` of an event."""
    return event.stream, event.kind


def mixed(block: Sequence[Event]) -> bool:
    """Whether a block of :func:`terminal_blocks` holds parts of more than one stream or kind."""
    first = where(block[0])
    # islice, not block[1:]: the copy made this quadratic in a block of many parts
    return any(where(part) != first for part in islice(block, 1, None))


def _open(block: Sequence[Event]) -> bool:
    """Whether the last line of ``block`` is still unfinished (the next event goes on with it)."""
    last = block[-1]
    return last.kind != "figure" and not last.text.endswith("\n")


def terminal_blocks(events: Sequence[Event]) -> list[tuple[Event, ...]]:
    """The events of a run grouped into blocks of whole terminal lines.

    A block is either the events of one stream and kind, or (:func:`mixed`)
    a run of lines each begun by one stream and ended by another: e.g.
    ``print("a", end="", flush=True)``, then ``"b"`` to stderr, then
    ``print("c")`` make one block ``[stdout "a", stderr "b", stdout "c\\n"]``.
    A figure is a block of its own.  Joining every block's text gives back
    the events' text, unchanged.
    """
    blocks: list[list[Event]] = []
    for event in events:
        if not blocks or event.kind == "figure" or not _open(blocks[-1]):
            blocks.append([event])
            continue
        last = blocks[-1]
        if not mixed(last) and where(last[0]) == where(event):  # the same stream goes on
            last[0] = Event(event.stream, event.kind, last[0].text + event.text)
            continue
        if not mixed(last):
            # Its unfinished last line becomes the start of a mixed line: the
            # whole lines before it stay a block of their own.
            (part,) = last
            cut = part.text.rfind("\n") + 1
            line = Event(part.stream, part.kind, part.text[cut:])
            if cut:
                last[0] = Event(part.stream, part.kind, part.text[:cut])
                blocks.append([line])
            elif len(blocks) > 1 and mixed(blocks[-2]) and not _open(blocks[-2]):
                blocks.pop()  # right after mixed lines: one more of them
                blocks[-1].append(line)
            else:
                last[0] = line
            last = blocks[-1]
        end = event.text.find("\n") + 1 or len(event.text)
        if where(last[-1]) == where(event):
            last[-1] = Event(event.stream, event.kind, last[-1].text + event.text[:end])
        else:
            last.append(Event(event.stream, event.kind, event.text[:end]))
        if end < len(event.text):
            blocks.append([Event(event.stream, event.kind, event.text[end:])])
    return [tuple(block) for block in blocks]


#: A line that is nothing but a rule of one repeated mark (``-----``, ``=====``), under a table's head.
_RULE = re.compile(r"^([^\w\s])\1{2,}$")


def may_wrap(stream: str, kind: str, text: str) -> bool:
    """Whether a block of output may soft-wrap on a narrow screen.

    Only plain stdout text (``kind`` ``"text"``: no warning, traceback or
    figure) whose every line reads as prose: it starts with no space or tab
    (an indented line lines up with the one above it: the rows of a tensor or
    array printed over several lines, a nested structure), holds no tab and
    no two spaces in a row (columns lined up by spaces), and is no rule of
    one repeated mark (``-----`` under a table's head).  Everything else
    keeps one line to a row and scrolls sideways in its box (see the module
    docstring).

    :param stream: ``"stdout"`` or ``"stderr"``.
    :param kind: the event's kind (:func:`snipcheck.judge.compare.display_events`).
    :param text: the block's text, as shown.
    """
    if stream != "stdout" or kind != "text" or "\t" in text or "  " in text or "\x1b" in text:
        return False
    lines = text.rstrip("\n").split("\n")
    return all(not line[:1].isspace() and not _RULE.match(line) for line in lines)

