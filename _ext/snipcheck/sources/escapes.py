"""The escaped form of a stated output: any text, stated in any markup.

A directive body cannot hold every output as it is: reStructuredText drops
trailing whitespace and leading or trailing blank lines, turns tabs into
spaces and takes a first line ``:name: value`` for an option; myst-parser
drops a body of blank lines; both read a form feed or ``U+2028`` as a line
break.  A ``snippet`` directive (or a cell's ``snippet-code``) with the flag
option ``escapes`` states its output in this form, which every markup holds;
``record`` and ``accept`` write it, option included, wherever the plain form
would not read back identical (:func:`needed`), and keep it once it is there.

The escapes, as C, Python and troff spell them:

=========  ===========================================================
``\\\\``    a backslash (every backslash of the output is doubled)
``\\t``     a tab
``\\&``     nothing: after trailing spaces, before leading ones, as a
           blank line of its own, before a line that looks like markup
``\\xHH``   the character ``U+00HH`` (a form feed, ``\\x0c``)
``\\uHHHH`` the character ``U+HHHH`` (a line separator, ``\\u2028``)
=========  ===========================================================

A backslash before anything else stands for itself, so a hand-written body
never fails to read; :func:`encode` never writes one.

Pure core: standard library and :mod:`snipcheck.sources.sourcetext`.
"""

from __future__ import annotations

import re

from snipcheck.sources.sourcetext import UNICODE_BREAKS

__all__ = ["OPTION", "decode", "encode"]

#: The flag option that says a body is in the escaped form.
OPTION = "escapes"

_ESCAPE = re.compile(r"\\(\\|t|&|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})")
_SPECIAL = {"\\": "\\\\", "\t": "\\t"}
_HEX = {char: f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
        for char in [*UNICODE_BREAKS, "\r", "\x00"]}  # fmt: skip
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}|:{3,})")


def decode(text: str) -> str:
    """The output a body in the escaped form states."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code == "\\":
            return "\\"
        if code == "t":
            return "\t"
        if code == "&":
            return ""
        return chr(int(code[1:], 16))

    return _ESCAPE.sub(one, text)


def encode(body: str) -> str:
    """``body`` in the escaped form: the fewest escapes that let every markup
    hold it (``decode(encode(body)) == body`` for every text)."""
    lines = [_escape_chars(line) for line in body.split("\n")]
    texts = [k for k, line in enumerate(lines) if line.strip()]
    for k, line in enumerate(lines):
        if not line:
            if k == 0 or k == len(lines) - 1 or not texts:
                lines[k] = "\\&"  # a blank line at an end, or a body of blank lines
            continue
        if not line.strip():
            lines[k] = "\\&" + line + "\\&"  # whitespace alone: kept whole
            continue
        if line != line.rstrip():
            line += "\\&"
        if (k == texts[0] and line[0] in " :-") or _FENCE.match(line):
            line = "\\&" + line  # the body's indentation, an option, an option block or a fence
        lines[k] = line
    return "\n".join(lines)


def _escape_chars(line: str) -> str:
    if not any(c in line for c in ("\\", "\t", *_HEX)):
        return line
    return "".join(_SPECIAL.get(c) or _HEX.get(c) or c for c in line)
