"""Where a directive sits in its source file: what both markups share.

A placement's geometry (see :class:`snipcheck.sources.placement.Placement`)
says which lines of its file hold the directive's head and body, in the line
model of its markup (:class:`~snipcheck.sources.sourcetext.SourceText`).
The parser hands over the directive (:class:`Parsed`); each markup finds it
in the file its own way (:mod:`snipcheck.sources.myst_geometry`,
:mod:`snipcheck.sources.rst_geometry`), and :func:`check_body` then makes
sure the lines found are the body the parser read.  Where they are not, the
placement cannot be rewritten: :class:`NotWritable` says why.

Pure core: standard library and :mod:`snipcheck.sources.sourcetext`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from snipcheck.sources.sourcetext import SourceText


class NotWritable(Exception):
    """A placement whose body cannot be located in its file; the message says why."""


@dataclass(frozen=True)
class Parsed:
    """A directive as its parser handed it over (the Sphinx directive's attributes).

    :param name: the directive's name (``snippet``).
    :param argument: its first argument (the snippet id).
    :param block_text: the whole directive as the parser saw it.
    :param content: its content lines.
    :param content_offset: the content's first line, from the directive's
        opening line (MyST).
    :param items: ``(source, line offset)`` of each content line (docutils).
    """

    name: str
    argument: str
    block_text: str
    content: tuple[str, ...]
    content_offset: int = 0
    items: tuple[tuple[str, int], ...] = ()


def ends_with(line: str, words: Sequence[str]) -> bool:
    """Whether ``line`` ends with ``words``, whitespace between them, and
    perhaps whitespace after: the search of ``w1\\s+w2\\s+…\\s*$``, without
    compiling an expression for each directive (a snippet id in each: half
    a millisecond a snippet, on a page of 50,000)."""
    rest = line.rstrip()
    for k, word in enumerate(reversed(words)):
        if not rest.endswith(word):
            return False
        rest = rest[: len(rest) - len(word)]
        if k < len(words) - 1:
            if not rest[-1:].isspace():
                return False
            rest = rest.rstrip()
    return True


def check_body(text: SourceText, geometry: dict[str, Any], content: Sequence[str]) -> None:
    """The lines between ``head_end`` and ``body_end`` must be the body, with
    the prefix, as the parser read it (trailing blank lines aside).

    :raises NotWritable: where they are not.
    """
    prefix = geometry["prefix"]
    region = []
    for i in range(geometry["head_end"], geometry["body_end"]):
        line = text.line(i)
        if line.startswith(prefix):
            region.append(line[len(prefix) :])
        elif not line.strip() or line == prefix.rstrip():
            region.append("")
        else:
            raise NotWritable(f"line {i + 1} of its file is not part of its body as the parser read it")
    if geometry["kind"] == "rst":
        region = [line.rstrip() for line in region]
    if region[: len(content)] != list(content) or any(line.strip() for line in region[len(content) :]):
        raise NotWritable(
            f"lines {geometry['head_end'] + 1}-{geometry['body_end']} of its file do not hold its body as the parser read it"
        )
