"""Measuring a page for its reading aids: what it holds, in the units of the estimate.

:func:`measure` walks a built page in reading order and counts its prose (CJK
characters and other words), code lines and output lines (:class:`Counts`),
where its resume points stand and where its top-level sections start; the
estimate's reading speeds are :data:`RATES` (see :mod:`snipcheck_chapter.reading`
for the formula).  The placeholder nodes of ``{reading-time}`` and
``{resume-point}`` live here, as the walk must know them; the directives that
make them, and the post-transform that fills them, are in
:mod:`snipcheck_chapter.reading`, the ``{reading-list}`` directive in
:mod:`snipcheck_chapter.reading_list`: both import this module.

Part of the sub-extension ``snipcheck_chapter.reading``.  May import docutils
and Sphinx (Sphinx layer).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from docutils import nodes
from snipcheck.sphinxext.environment_box import environment_box
from sphinx import addnodes

# CJK Unified Ideographs (with extension A and the compatibility block):
# the characters a Chinese reader reads one by one.  Punctuation is not read.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Latin words, numbers and identifiers (``set_detect_anomaly`` is one word).
_WORD = re.compile(r"[A-Za-z0-9_]+(?:['’.-][A-Za-z0-9_]+)*")
#: Classes of boxes about the page rather than part of it: not counted.
_META = frozenset(
    {"snipcheck-environment", "snipcheck-stamp", "snipcheck-reading-time", "snipcheck-resume", "snipcheck-output-label"}
)


@dataclass(frozen=True)
class Rates:
    """Reading speeds of the estimate.

    :param cjk_per_minute: Chinese characters read per minute (300–400 is
        the usual range for technical text; 350 is its middle).
    :param words_per_minute: Latin words, numbers and identifiers per minute.
    :param seconds_per_code_line: seconds to read one non-blank code line.
    :param seconds_per_output_line: seconds to read one non-blank output line.
    """

    cjk_per_minute: float = 350.0
    words_per_minute: float = 200.0
    seconds_per_code_line: float = 5.0
    seconds_per_output_line: float = 3.0


RATES = Rates()


@dataclass(frozen=True)
class Counts:
    """What a stretch of page holds, in the units of :class:`Rates`."""

    cjk: int = 0
    words: int = 0
    code_lines: int = 0
    output_lines: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.cjk + other.cjk,
            self.words + other.words,
            self.code_lines + other.code_lines,
            self.output_lines + other.output_lines,
        )

    def __sub__(self, other: Counts) -> Counts:
        return Counts(
            self.cjk - other.cjk,
            self.words - other.words,
            self.code_lines - other.code_lines,
            self.output_lines - other.output_lines,
        )

    def seconds(self, rates: Rates = RATES) -> float:
        """Estimated reading time in seconds."""
        return (
            60.0 * self.cjk / rates.cjk_per_minute
            + 60.0 * self.words / rates.words_per_minute
            + rates.seconds_per_code_line * self.code_lines
            + rates.seconds_per_output_line * self.output_lines
        )


def prose(text: str) -> Counts:
    """Counts of running text: CJK characters and other words."""
    return Counts(cjk=len(_CJK.findall(text)), words=len(_WORD.findall(text)))


def lines(text: str) -> int:
    """Non-blank lines of a literal block."""
    return sum(1 for line in text.splitlines() if line.strip())


def minutes(seconds: float) -> int:
    """Seconds as whole minutes for the reader: rounded, at least 1."""
    return max(1, round(seconds / 60.0))



# --- placeholder nodes -------------------------------------------------------


class reading_time(nodes.General, nodes.Element):
    """Placeholder for the reading-time line; its children are the author's extra text."""


class resume_point(nodes.General, nodes.Element):
    """Placeholder for a resume-point box; its children are the author's extra text."""



# --- measuring the page --------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """A resume point and what precedes it."""

    node: resume_point
    before: Counts
    index: int  # how many top-level sections had started before it


@dataclass(frozen=True)
class Section:
    """A top-level section of the page (a child of the title's section)."""

    node: nodes.section
    title: str
    start: Counts  # counts before its title


@dataclass(frozen=True)
class Measure:
    """The page measured in one walk: total, resume points, top-level sections."""

    total: Counts
    marks: tuple[Mark, ...]
    sections: tuple[Section, ...]


def measure(document: nodes.document) -> Measure:
    """Walk ``document`` in reading order and measure it."""
    top = _top_sections(document)
    total = Counts()
    marks: list[Mark] = []
    sections: list[Section] = []
    for kind, item in _events(document, in_output=False):
        if isinstance(item, Counts):
            total += item
        elif kind == "mark":
            assert isinstance(item, resume_point)
            marks.append(Mark(item, total, len(sections)))
        elif kind == "section" and item in top:
            assert isinstance(item, nodes.section)
            sections.append(Section(item, item[0].astext() if item.children else "", total))
    return Measure(total, tuple(marks), tuple(sections))


def _top_sections(document: nodes.document) -> set[nodes.Node]:
    """Sections just below the page title (or the document's own, when it has no title section)."""
    roots = [n for n in document.children if isinstance(n, nodes.section)]
    if len(roots) == 1:
        return {n for n in roots[0].children if isinstance(n, nodes.section)}
    return set(roots)


def _events(node: nodes.Node, *, in_output: bool) -> Iterator[tuple[str, object]]:
    if isinstance(node, reading_time | environment_box):
        return
    if isinstance(node, resume_point):
        yield "mark", node
        return
    if isinstance(node, nodes.Text):
        yield "text", prose(node.astext())
        return
    if isinstance(node, nodes.comment | nodes.system_message | nodes.raw | nodes.substitution_definition):
        return
    if isinstance(node, addnodes.toctree):
        return
    assert isinstance(node, nodes.Element)
    classes: set[str] = set(node.get("classes", ()))
    if classes & _META:
        return
    if isinstance(node, nodes.literal_block):
        count = lines(node.astext())
        yield "text", Counts(output_lines=count) if in_output else Counts(code_lines=count)
        return
    if isinstance(node, nodes.section):
        yield "section", node
    in_output = in_output or "snipcheck-output" in classes
    for child in node.children:
        yield from _events(child, in_output=in_output)
