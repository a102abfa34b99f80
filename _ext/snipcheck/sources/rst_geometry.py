"""Where a reStructuredText directive sits in its file: its head and body lines.

docutils hands over each content line with its source and line offset; the
body is one run of lines of one file, under the directive's ``..`` line, at
the indentation of its first non-blank line.

Pure core: standard library and the sources layer.
"""

from __future__ import annotations

from typing import Any

from snipcheck.sources.geometry import NotWritable, Parsed, ends_with
from snipcheck.sources.sourcetext import SourceText


def rst_geometry(directive: Parsed, text: SourceText, opening: int) -> dict[str, Any]:
    """The geometry of ``directive``, whose ``..`` line is line ``opening``
    (0-based): ``kind`` (``"rst"``), ``fence``, ``head_end``, ``body_end``,
    ``closed`` and ``prefix`` (see :class:`snipcheck.sources.placement.Placement`).

    :raises NotWritable: when the directive or its body is not where the parser says.
    """
    items = directive.items
    src = text.line(opening)
    if not ends_with(src, ("..", f"{directive.name}::", directive.argument)):
        raise NotWritable(f"line {opening + 1} of its file does not hold its directive")
    if items:
        sources = {s for s, _ in items}
        offsets = [o for _, o in items]
        if len(sources) != 1 or offsets != list(range(offsets[0], offsets[0] + len(offsets))):
            raise NotWritable("its body is not one run of lines of one file")
        head_end, body_end = offsets[0], offsets[-1] + 1
        k, stated = next((k, s) for k, s in enumerate(directive.content) if s.strip())
        line = text.line(head_end + k).rstrip()
        # docutils has expanded tabs in ``stated``; the raw prefix keeps the
        # author's own (a tab stays a tab), and what a rewrite writes is read
        # back through the parser before it is kept
        if not line.endswith(stated) or line[: len(line) - len(stated)].strip():
            raise NotWritable(f"its body was not found at line {head_end + k + 1} of its file")
        prefix = line[: len(line) - len(stated)]
    else:
        block = directive.block_text.rstrip("\n")
        head_end = opening + block.count("\n") + 1
        prefix = src[: len(src) - len(src.lstrip())] + "   "
        body_end = head_end
    return {"kind": "rst", "fence": "", "head_end": head_end, "body_end": body_end, "closed": False, "prefix": prefix}
