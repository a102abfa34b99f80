"""No stray space where a line of Chinese or Japanese text breaks in the source.

Sub-extension ``snipcheck_chapter.cjk``.

Sources wrap long lines; a line break inside a paragraph stays a newline in
the doctree, and every writer turns it into a space.  Between two words of
English that space is right; between two CJK characters it is a stray gap
("torch 自己源文件里的 行号").  :class:`JoinCJKLines` removes each line break
(and the blanks around it) whose neighbours on both sides are CJK, across
inline markup too (``从不\\n**规整**``), and leaves every other break alone:
CJK next to Latin text keeps its space, and code, literals, math and raw
markup are never touched.  It works on any page in any ``language``: the
decision is made from the characters themselves.

Hangul is not joined: Korean separates words with spaces.

May import Sphinx and docutils (Sphinx layer).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

from snipcheck_chapter import metadata

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: Characters that are CJK on their own: ideographs (with extensions and
#: compatibility ideographs), kana, CJK symbols and punctuation (、。「」),
#: fullwidth forms (（），：), vertical and small forms.
_STRONG = (
    "\u2e80-\u2fdf"  # radicals
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u312f\u31a0-\u31ff"  # bopomofo, katakana extensions
    "\u3400-\u4dbf\u4e00-\u9fff"  # ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\ufe10-\ufe1f\ufe30-\ufe4f"  # vertical forms, compatibility forms
    "\uff00-\uffef"  # halfwidth and fullwidth forms
    "\U00020000-\U0003ffff"  # ideograph extensions B and later
)
#: Characters that Chinese text shares with others (curly quotes, ellipsis,
#: dashes, middle dot, circled numbers such as 形态③): CJK only next to a
#: strong CJK character.
_WEAK = "\u2018\u2019\u201c\u201d\u2026\u2014\u00b7\u2460-\u24ff\u2776-\u2793"
_IS_STRONG = re.compile(f"[{_STRONG}]")
_IS_CJK = re.compile(f"[{_STRONG}{_WEAK}]")
#: A line break with the blanks around it (MyST keeps the break as ``\n``).
_BREAK = re.compile(r"[ \t]*\n[ \t]*")

#: Inline nodes whose text is never changed (but which are read as context).
_VERBATIM = (nodes.literal, nodes.raw, nodes.math, nodes.FixedTextElement, nodes.comment)


def joins(before: str, after: str) -> bool:
    """Whether a line break between the characters ``before`` and ``after``
    is removed: both are CJK, and at least one of them is a CJK character
    proper (not only a quote, dash or circled number)."""
    if not (_IS_CJK.match(before) and _IS_CJK.match(after)):
        return False
    return bool(_IS_STRONG.match(before) or _IS_STRONG.match(after))


def join_text(text: str) -> str:
    """``text`` with the line breaks between CJK characters removed (the
    same rule as the transform, for a plain string)."""

    def replace(match: re.Match[str]) -> str:
        start, end = match.start(), match.end()
        if 0 < start and end < len(text) and joins(text[start - 1], text[end]):
            return ""
        return match.group(0)

    return _BREAK.sub(replace, text)


def _texts(element: nodes.Element) -> list[tuple[nodes.Text, bool]]:
    """Every text node under ``element`` in reading order, with whether it may
    be changed (not inside a literal, raw markup or math)."""
    found: list[tuple[nodes.Text, bool]] = []

    def walk(node: nodes.Node, editable: bool) -> None:
        if isinstance(node, nodes.Text):
            found.append((node, editable))
            return
        editable = editable and not isinstance(node, _VERBATIM)
        for child in node.children:
            walk(child, editable)

    walk(element, not isinstance(element, _VERBATIM))
    return found


def join_element(element: nodes.Element) -> None:
    """Remove the CJK line breaks in the text of ``element`` (a paragraph,
    title, caption, …), looking across its inline children."""
    texts = _texts(element)
    if not any(editable and "\n" in text for text, editable in texts):
        return
    whole = "".join(text.astext() for text, _editable in texts)
    drop: set[int] = set()
    for match in _BREAK.finditer(whole):
        start, end = match.start(), match.end()
        if 0 < start and end < len(whole) and joins(whole[start - 1], whole[end]):
            drop.update(range(start, end))
    if not drop:
        return
    offset = 0
    for text, editable in texts:
        value = text.astext()
        if editable:
            kept = "".join(ch for i, ch in enumerate(value, start=offset) if i not in drop)
            if kept != value:
                _replace(text, nodes.Text(kept))
        offset += len(value)


def _replace(old: nodes.Text, new: nodes.Text) -> None:
    """Put ``new`` where ``old`` is, found by identity: text nodes compare
    equal by value, and a paragraph often holds several equal ones (``"\\n"``),
    so ``Element.replace`` (which looks up by equality) could change another."""
    parent = old.parent
    index = next(i for i, child in enumerate(parent.children) if child is old)
    parent[index] = new


class JoinCJKLines(SphinxTransform):
    """Remove line breaks between CJK characters in running text (read time,
    so the search index, every builder and the reading-time counts all see
    the joined text)."""

    default_priority = 400

    def apply(self, **kwargs: Any) -> None:
        for element in list(self.document.findall(nodes.TextElement)):
            if isinstance(element, _VERBATIM) or _inside_text_element(element):
                continue
            join_element(element)


def _inside_text_element(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.TextElement):
            return True
        parent = parent.parent
    return False


def setup(app: Sphinx) -> dict[str, Any]:
    """Sub-extension ``snipcheck_chapter.cjk``."""
    app.add_transform(JoinCJKLines)
    return metadata()
