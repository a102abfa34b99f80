"""Where a MyST directive sits in its file: its fence, head and body lines.

myst-parser hands over a directive's ``block_text`` (its fence line and what
follows), its content and the content's offset from the opening line; this
finds the opening fence in the file (myst-parser can report a line one off),
the body's lines and their prefix (indentation, block quotes), and whether
a closing fence ends it.

Pure core: standard library and the sources layer.
"""

from __future__ import annotations

import re
from typing import Any

from snipcheck.sources.geometry import NotWritable, Parsed, ends_with
from snipcheck.sources.sourcetext import SourceText

_FENCE = re.compile(r"(`{3,}|~{3,}|:{3,})")
_KIND = {"`": "backtick", "~": "tilde", ":": "colon"}


def myst_geometry(directive: Parsed, text: SourceText, opening: int) -> dict[str, Any]:
    """The geometry of ``directive``, whose opening line the parser reports
    as ``opening`` (0-based): ``line`` (1-based, as found), ``kind``,
    ``fence``, ``head_end``, ``body_end``, ``closed`` and ``prefix`` (see
    :class:`snipcheck.sources.placement.Placement`).

    :raises NotWritable: when the fence or the body is not where the parser says.
    """
    first, _, rest = directive.block_text.partition("\n")
    m = _FENCE.match(first)
    if m is None:
        raise NotWritable("its fence could not be located (an unexpected myst-parser version?)")
    fence = m.group(1)
    inner = rest[: -len(fence) - 1] if rest.endswith(fence + "\n") else rest
    # myst-parser can report a line one off inside a colon-fenced directive
    # whose content starts with another colon fence: find the opening line
    opening_words = (f"{fence}{{{directive.name}}}", directive.argument)
    for shift in (0, -1, 1, -2, 2):
        if ends_with(text.line(opening + shift), opening_words):
            opening += shift
            break
    else:
        raise NotWritable(f"line {opening + 1} of its file does not hold its opening fence {fence}")
    head_end = opening + 1 + directive.content_offset
    body_end = opening + 1 + inner.count("\n")
    src = text.line(opening)
    at = src.find(fence)
    prefix = re.sub(r"[^\s>]", " ", src[:at])
    for k, stated in enumerate(directive.content):
        if stated.strip():
            line = text.line(head_end + k)
            if not line.endswith(stated):
                raise NotWritable(f"its body was not found at line {head_end + k + 1} of its file")
            prefix = line[: len(line) - len(stated)]
            break
    closing = text.line(body_end) if body_end < len(text) else ""
    closed = bool(re.fullmatch(rf"[ \t>]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", closing))
    return {
        "line": opening + 1,
        "kind": _KIND[fence[0]],
        "fence": fence,
        "head_end": head_end,
        "body_end": body_end,
        "closed": closed,
        "prefix": prefix,
    }
