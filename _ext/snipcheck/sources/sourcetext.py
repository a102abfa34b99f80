"""A page's source file in the line model of its markup, kept byte for byte.

Sphinx decodes a source with ``utf-8-sig`` (a BOM is dropped) and universal
newlines (``\\r\\n`` and a lone ``\\r`` end a line).  The parsers then count
lines differently:

* myst-parser (markdown-it) ends a line only at ``\\n`` after that;
* docutils splits with :meth:`str.splitlines`, so a form feed, ``\\x85``,
  ``\\u2028`` and the other Unicode line separators end a line too.

:class:`SourceText` splits a file the way its parser does, keeps each line's
own terminator (a file with mixed line ends stays mixed), the BOM and the
file's permissions, so that replacing some lines changes those lines and not
one other byte.

Pure core: standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

BOM = b"\xef\xbb\xbf"
_MYST_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
#: Characters :meth:`str.splitlines` ends a line at, besides ``\r`` and ``\n``.
UNICODE_BREAKS = {
    "\x0b": "a vertical tab (U+000B)",
    "\x0c": "a form feed (U+000C)",
    "\x1c": "a file separator (U+001C)",
    "\x1d": "a group separator (U+001D)",
    "\x1e": "a record separator (U+001E)",
    "\x85": "a next-line character (U+0085)",
    "\u2028": "a line separator (U+2028)",
    "\u2029": "a paragraph separator (U+2029)",
}


class SourceError(ValueError):
    """A source file that cannot be read as UTF-8 text (the message says why)."""


def split_lines(text: str, markup: str) -> list[str]:
    """``text`` split into lines with their terminators, as ``markup``'s parser counts them.

    ``"".join(split_lines(t, m)) == t`` for every text; the last element has
    no terminator (it is ``""`` when the text ends with one).
    """
    if markup == "rst":
        lines = text.splitlines(keepends=True)
        if not lines or lines[-1] != lines[-1].rstrip("\r\n" + "".join(UNICODE_BREAKS)):
            lines.append("")
        return lines
    lines = _MYST_LINES.findall(text)
    # findall yields a final empty match at the end of the text
    if len(lines) > 1 and lines[-1] == "" and lines[-2][-1:] not in ("\n", "\r"):
        lines.pop()
    return lines


def terminator(line: str) -> str:
    """The line end of ``line`` (``""`` for the last line of a file without one)."""
    stripped = line.rstrip("\r\n" + "".join(UNICODE_BREAKS))
    return line[len(stripped) :]


def content(line: str) -> str:
    """``line`` without its terminator."""
    return line[: len(line) - len(terminator(line))]


@dataclass
class SourceText:
    """One source file, split as its parser splits it.

    :param path: the file.
    :param markup: ``"myst"`` or ``"rst"`` (the line model).
    :param bom: whether the file starts with a UTF-8 byte order mark.
    :param lines: the lines with their terminators (see :func:`split_lines`).
    """

    path: Path
    markup: str
    bom: bool
    lines: list[str] = field(default_factory=list)

    @classmethod
    def from_bytes(cls, path: Path, raw: bytes, markup: str) -> SourceText:
        """Decode ``raw`` (the bytes of ``path``).

        :raises SourceError: if it is not UTF-8.
        """
        bom = raw.startswith(BOM)
        try:
            text = raw[len(BOM) if bom else 0 :].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceError(
                f"{path} is not valid UTF-8 ({exc.reason} at byte {exc.start}): a stated output is written only into "
                "a UTF-8 page; save it as UTF-8 (and leave source_encoding at its default)"
            ) from None
        return cls(path, markup, bom, split_lines(text, markup))

    @classmethod
    def read(cls, path: Path, markup: str) -> SourceText:
        """Read ``path``.

        :raises OSError: if it cannot be read; :raises SourceError: if it is not UTF-8.
        """
        return cls.from_bytes(path, path.read_bytes(), markup)

    @property
    def text(self) -> str:
        """The decoded text (BOM left out), line ends as in the file."""
        return "".join(self.lines)

    def as_parsed(self) -> str:
        """The text as Sphinx hands it to the parser (universal newlines)."""
        return self.text.replace("\r\n", "\n").replace("\r", "\n")

    def to_bytes(self) -> bytes:
        return (BOM if self.bom else b"") + self.text.encode("utf-8")

    def line(self, index: int) -> str:
        """Line ``index`` (0-based) without its terminator, ``""`` past the end."""
        return content(self.lines[index]) if 0 <= index < len(self.lines) else ""

    def __len__(self) -> int:
        """The number of lines a parser sees (a final empty remainder is not a line)."""
        if self.lines and self.lines[-1] == "":
            return len(self.lines) - 1
        return len(self.lines)

    def newline(self) -> str:
        """The most common line end of the file (``\\n`` when it has none)."""
        counts: dict[str, int] = {}
        for line in self.lines:
            end = terminator(line)
            if end in ("\n", "\r\n", "\r"):
                counts[end] = counts.get(end, 0) + 1
        return max(counts, key=lambda k: counts[k]) if counts else "\n"

    def replace(self, start: int, end: int, new: list[str]) -> None:
        """Replace lines ``[start, end)`` with ``new`` (lines without terminators).

        A new line takes the terminator of the old line at its position, the
        last new line that of the last old line (so a file that ends without a
        newline still does); lines beyond the old ones, or inserted where
        nothing is replaced, take the terminator of their neighbours.  Every
        other line, and its terminator, stays as it was.
        """
        old = self.lines[start:end]
        fallback = self.newline()
        if old:
            endings = [terminator(line) for line in old]
            tail = endings[-1]  # "" only for a last line without a newline
            inner = endings[:-1]
        else:
            before = terminator(self.lines[start - 1]) if start > 0 else fallback
            if start > 0 and not before:
                # inserting after a last line that has no newline: it gets one,
                # and the inserted lines end the file the way it ended
                self.lines[start - 1] += fallback
            tail, inner = before, []
        out = []
        for k, text in enumerate(new):
            if k == len(new) - 1:
                ending = tail
            elif k < len(inner):
                ending = inner[k]
            else:
                ending = inner[-1] if inner else tail
            out.append(text + (ending or (fallback if k < len(new) - 1 else "")))
        if not new and old and not tail and start > 0:
            # the file's unterminated last lines go: the line before becomes the last
            self.lines[start - 1] = content(self.lines[start - 1])
        self.lines[start:end] = out
        self._keep_apart(start, start + len(out))

    def _keep_apart(self, start: int, stop: int) -> None:
        """Keep a lone ``\r`` from joining an empty ``\n`` line after it into
        one ``\r\n`` (two lines read back as one) where lines ``[start, stop)``
        were put: such a new line ends with ``\r`` too, and a line before an
        old one gets ``\r\n``."""
        lines = self.lines
        for i in range(max(start, 1), min(stop + 1, len(lines))):
            if lines[i] == "\n" and lines[i - 1].endswith("\r"):
                if i < stop:
                    lines[i] = "\r"
                else:
                    lines[i - 1] += "\n"
