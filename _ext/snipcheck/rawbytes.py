"""Output bytes as text: invalid UTF-8 kept apart from the text of its escape.

A run's output is bytes; a stated output is text in a page.  Valid UTF-8
reads as itself.  A byte that is not part of valid UTF-8 reads as
``\\x{ff}`` (:data:`FORM`: a backslash, ``x``, its two hex digits in braces),
and so that no printed text reads the same, a run of backslashes that the
output itself has right before such a form, or before the text ``x{ff}``,
is doubled::

    bytes                 text (stated, compared, recorded, shown)
    FF FE                 \\x{ff}\\x{fe}
    "\\xff\\xfe" (8 chars)   \\xff\\xfe           (a bytes repr: unchanged)
    "\\x{ff}" (6 chars)     \\\\x{ff}
    "\\" FF                \\\\\\x{ff}

Reading a text back (:func:`to_bytes`): a run of *n* backslashes before
``x{HH}`` stands for *n* // 2 backslashes, then, when *n* is odd, the byte
``HH`` (else the text ``x{HH}``); every other character is itself, in UTF-8.
So :func:`from_bytes` is one to one, and :func:`to_bytes` undoes it: two
different outputs never read as the same text, and the text ``record``
writes reads back as the bytes it came from.  The braces keep the common case
as it was: a ``repr()`` of bytes (``b'\\xff'``) prints as itself.

(Before, invalid UTF-8 read as ``\\xff``, the same text as a snippet that
prints ``\\xff``: the raw bytes FF FE and the printed text ``\\xff\\xfe``
matched the same stated output.)

Pure core: standard library only.
"""

from __future__ import annotations

import re

#: How a byte that is not valid UTF-8 reads, e.g. ``FORM.format(0xFF)`` → ``\x{ff}``.
FORM = "\\x{{{:02x}}}"
# A run of backslashes (maybe none) before a byte the decoder could not read
# (surrogateescape: U+DC80-U+DCFF) or before the text of a form.
_BEFORE = re.compile(r"(\\*)([\udc80-\udcff]|x\{[0-9a-fA-F]{2}\})")
_READ = re.compile(r"(\\+)x\{([0-9a-fA-F]{2})\}")


def from_bytes(data: bytes | bytearray | memoryview) -> str:
    """The text of output ``data`` (see the module docstring)."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return _BEFORE.sub(_escape, bytes(data).decode("utf-8", "surrogateescape"))
    return _BEFORE.sub(_escape, text) if "\\x{" in text else text  # the common case: as it is


def _escape(match: re.Match[str]) -> str:
    run, what = match.group(1), match.group(2)
    if len(what) == 1:  # an undecoded byte
        return run * 2 + FORM.format(ord(what) - 0xDC00)
    return run * 2 + what  # the text "x{HH}": its backslashes doubled (none: as it is)


def to_bytes(text: str) -> bytes:
    """The output bytes ``text`` stands for: the inverse of :func:`from_bytes`."""
    out = bytearray()
    at = 0
    for match in _READ.finditer(text):
        run = len(match.group(1))
        out += text[at : match.start()].encode("utf-8")
        out += b"\\" * (run // 2)
        out += bytes([int(match.group(2), 16)]) if run % 2 else ("x{" + match.group(2) + "}").encode("ascii")
        at = match.end()
    out += text[at:].encode("utf-8")
    return bytes(out)
