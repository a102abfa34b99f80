"""Replace stated outputs in a page's source, and nothing else.

An :class:`Edit` names a :class:`~snipcheck.sources.placement.Placement` (from the
placement index), the new stated output and the options to set.
:func:`apply` rewrites the lines of each placement's body region in a
:class:`~snipcheck.sources.sourcetext.SourceText`, bottom-up so that earlier line
numbers stay valid, keeping every other line and every line end as it was.

What the markup cannot hold as it is (:func:`holdable`: a line break the
parser would see where the output has none, a form feed or ``\\u2028``; for
reStructuredText a tab, trailing whitespace or a leading or trailing blank
line, which docutils drops or rewrites) is written in the escaped form, with
the directive's ``escapes`` option (:mod:`snipcheck.sources.escapes`), which
every markup holds; so is every body of a directive that has the option.  A
stated output is never written approximately.

The caller reads the rewritten text back through the page's own parser before
writing anything (see :func:`snipcheck.app.index_reader.read_back`): this module decides
the bytes, the parser has the last word on what they mean.

Pure core: standard library and :mod:`snipcheck.sources.placement`,
:mod:`snipcheck.sources.sourcetext`, :mod:`snipcheck.sources.escapes`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from snipcheck.sources import escapes
from snipcheck.sources.placement import Placement
from snipcheck.sources.sourcetext import UNICODE_BREAKS, SourceText


class Unwritable(ValueError):
    """A stated output the page cannot hold where its directive sits; the
    message names the place, what is wrong and what to do."""


@dataclass(frozen=True)
class Edit:
    """A new stated output for one placement.

    :param placement: where (from the placement index).
    :param body: the new stated output (lines joined with ``\\n``).
    :param options: options to add or replace (name → value); others are kept.
    """

    placement: Placement
    body: str
    options: Mapping[str, str] = field(default_factory=dict)


def holdable(body: str, markup: str, cell: bool = False) -> str | None:
    """Why ``markup`` cannot state ``body`` exactly as it is, or ``None`` if
    it can (where it cannot, :func:`apply` writes the escaped form).

    :param cell: the body follows a cell's output separator, not the
        directive's head: a reStructuredText cell keeps a leading blank line
        and indentation (the code above sets the body's indentation).
    """
    for number, line in enumerate(body.split("\n"), start=1):
        for char, name in {**UNICODE_BREAKS, "\r": "a carriage return (U+000D)"}.items():
            if char in line:
                return (
                    f"line {number} of the output holds {name}, which the page's parser reads as a line "
                    "break, so no stated output can match it; print repr() of such text, or add a "
                    "normalizer that maps it to something visible"
                )
        if "\x00" in line:
            return f"line {number} of the output holds a NUL character, which Markdown replaces; print repr() of it"
        if markup == "rst":
            if "\t" in line:
                return (
                    f"line {number} of the output holds a tab, which reStructuredText turns into spaces; "
                    "print spaces, or place the snippet in a MyST page"
                )
            if line != line.rstrip():
                return (
                    f"line {number} of the output ends with whitespace, which reStructuredText drops; "
                    "strip it in the snippet, or place the snippet in a MyST page"
                )
    if markup != "rst" and body and not body.replace("\n", ""):
        return (
            "the output is nothing but empty lines, which a MyST directive body cannot hold (myst-parser "
            "drops them); print something visible, or strip the output in the snippet"
        )
    texts = [line for line in body.split("\n") if line.strip()]
    if markup == "rst" and cell and body and not body.split("\n")[-1].strip():
        return (
            "the output ends with a blank line, which a reStructuredText directive body cannot hold; "
            "print without it, or place the snippet in a MyST page"
        )
    if cell:
        return None
    if markup == "rst" and texts and all(line[0] in " \t" for line in texts):
        return (
            "every line of the output starts with whitespace, which reStructuredText takes for the "
            "body's indentation and removes; print without it, or place the snippet in a MyST page"
        )
    if markup == "rst" and body and (not body.split("\n")[0].strip() or not body.split("\n")[-1].strip()):
        return (
            "the output starts or ends with a blank line, which a reStructuredText directive body cannot "
            "hold; print without it, or place the snippet in a MyST page"
        )
    return None


def apply(text: SourceText, edits: Sequence[Edit]) -> None:
    """Apply ``edits`` (all in ``text``'s file) to ``text``, bottom-up; equal
    edits of one directive (a file included by two pages) are applied once.

    :raises Unwritable: if a placement is not writable or two edits
        overlap; ``text`` may then be partly changed, so callers work on a copy.
    """
    # A file included by several pages is one directive placed once per page:
    # the same new output for it is one edit.
    unique = {(e.placement.line, e.body, tuple(sorted(e.options.items()))): e for e in edits}
    ordered = sorted(unique.values(), key=lambda e: e.placement.line, reverse=True)
    for later, earlier in itertools.pairwise(ordered):
        if earlier.placement.line == later.placement.line:
            raise Unwritable(f"{later.placement.location}: two new outputs for one directive")
    for edit in ordered:
        p = edit.placement
        if p.writable:
            raise Unwritable(f"{p.location}: snippet {p.snippet_id!r} cannot be rewritten: {p.writable}")
        if p.option(escapes.OPTION) is not None or holdable(edit.body, p.markup, cell=p.code_lines > 0):
            edit = Edit(p, escapes.encode(edit.body), {**edit.options, escapes.OPTION: ""})
        if p.markup == "rst":
            _apply_rst(text, edit)
        else:
            _apply_myst(text, edit)


# --- MyST ---------------------------------------------------------------------------

_FENCE = re.compile(r"(`{3,}|~{3,}|:{3,})")


def needs_guard(body: str) -> bool:
    """Whether myst-parser would misread ``body`` as options (or drop its
    blank first line) unless an option block precedes it."""
    first = body.split("\n", 1)[0]
    return body.lstrip().startswith(":") or body.startswith("---") or (body != "" and not first.strip())


def _fence_for(lines: Sequence[str], fence: str) -> str:
    """A fence no line of the body can close: ``fence`` if possible, else one
    of another character (a longer one of the same character could close an
    enclosing directive fenced with it)."""

    def longest(char: str) -> int:
        runs = [len(m.group(1)) for line in lines if (m := re.match(rf"^ {{0,3}}({re.escape(char)}{{3,}})", line))]
        return max(runs, default=0)

    if longest(fence[0]) < len(fence):
        return fence
    other = "~" if fence[0] == "`" else "`"
    return other * max(3, longest(other) + 1)


def _blank(prefix: str) -> str:
    return prefix.rstrip()


def _apply_myst(text: SourceText, edit: Edit) -> None:
    p = edit.placement
    body = edit.body.split("\n") if edit.body != "" else []
    opening = p.line - 1
    head = [text.line(i) for i in range(opening + 1, p.options_end)]
    has_block = any(line.strip() for line in head)
    cell = p.code_lines > 0  # the body follows the cell's code: no option block can be misread there
    options = dict(p.options)
    changed = any(options.get(k) != v for k, v in edit.options.items())
    options.update(edit.options)
    fence = _fence_for(body, p.fence)
    if changed or (not has_block and (options or (needs_guard(edit.body) and not cell))):
        new_head = [f":{k}: {v}" if v else f":{k}:" for k, v in options.items()] or ["---", "---"]
        new_head.append("")
        has_block = True
    else:
        new_head = None
    lines = list(body)
    if has_block and lines and not lines[-1].strip():
        lines.append("")  # myst-parser drops one trailing blank line after an option block
    block = [p.prefix + line if line else _blank(p.prefix) for line in lines]
    if fence != p.fence or not p.closed:
        closing = [p.prefix + fence]
        end = p.body_end + 1 if p.closed else p.body_end
        text.replace(p.head_end, end, block + closing)
        first = text.line(opening)
        at = first.find(p.fence)
        if fence != p.fence and at >= 0:
            text.replace(opening, opening + 1, [first[:at] + fence + first[at + len(p.fence) :]])
    else:
        text.replace(p.head_end, p.body_end, block)
    if new_head is None and not cell and has_block and lines and needs_guard(edit.body) and head[-1].strip():
        # Without a blank line after the option block, myst-parser would take
        # the body's blank first line for the separator, or its first line
        # for one more option.
        text.replace(p.head_end, p.head_end, [_blank(p.prefix)])
    if new_head is not None:
        text.replace(opening + 1, p.options_end, [p.prefix + line if line else _blank(p.prefix) for line in new_head])


# --- reStructuredText ---------------------------------------------------------------


def _apply_rst(text: SourceText, edit: Edit) -> None:
    p = edit.placement
    lines = [p.prefix + line if line else "" for line in (edit.body.split("\n") if edit.body != "" else [])]
    if p.code_lines:  # a cell: the output lines follow its separator directly
        text.replace(p.head_end, p.body_end, lines)
    elif p.body_end > p.head_end:  # an existing body
        if lines:
            text.replace(p.head_end, p.body_end, lines)
        else:
            start = p.head_end - 1 if p.head_end - 1 >= p.line and not text.line(p.head_end - 1).strip() else p.head_end
            text.replace(start, p.body_end, [])
    elif lines:
        at = p.head_end
        if at < len(text) and not text.line(at).strip():
            at += 1  # a blank line already separates the head from what follows
            block = lines
        else:
            block = ["", *lines]
        if at < len(text) and text.line(at).strip():
            block = [*block, ""]
        text.replace(at, at, block)
    if edit.options:
        _set_rst_options(text, p, edit.options)


def _set_rst_options(text: SourceText, p: Placement, options: Mapping[str, str]) -> None:
    """Replace or add ``:name: value`` lines after the directive's first line."""
    opening = p.line - 1
    last = opening
    i = opening + 1
    found: dict[str, int] = {}
    while i < len(text) and text.line(i).strip().startswith(":") and text.line(i).strip():
        name = text.line(i).strip()[1:].split(":", 1)[0]
        found[name] = i
        last = i
        i += 1
    for name, value in reversed(list(options.items())):
        line = f"{p.prefix}:{name}: {value}".rstrip()
        if name in found:
            text.replace(found[name], found[name] + 1, [line])
        else:
            text.replace(last + 1, last + 1, [line])
