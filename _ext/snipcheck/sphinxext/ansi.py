"""ANSI colour codes in captured output, interpreted without myst-nb.

Two ways, by what the block holds:

* a block of one stream (the usual case) is a :class:`coloured_block`: a
  literal block whose text is the output without its colour codes (what the
  search index, the text builder and LaTeX get), holding the text with its
  codes in ``node["ansi"]``.  The HTML writer highlights that text with
  pygments-ansi-color's ``AnsiColorLexer`` (bound to :data:`LEXER` through
  Sphinx's own registry, so a ``-W`` build without myst-nb never sees
  "Pygments lexer name ... is not known"), which turns SGR codes into
  tokens ``Token.Color.<Bold|Faint>.<colour>.<BGcolour>`` (HTML classes
  ``-Color -Color-Red``, ``-Color -Color-Bold -Color-Bold-Red-BGGreen`` ...)
  and drops the codes.  One node a block, whatever its number of colours:
  as document nodes (below), a megabyte with a colour every ten bytes cost a
  build 8 s of docutils' tree walks, highlighted 1.5 s.
* the parts of a terminal line that mixes streams
  (:func:`.panel.parsed_block`) are document nodes already: there
  :func:`colour_nodes` gives each run of one colour state an ``inline`` with
  the classes the lexer's token would have.

``static/snipcheck-ansi.css`` colours those classes inside output panels
only (:func:`register` adds it).  Only complete colour codes reach the
lexer: every other control character is shown as an escape before
(:func:`snipcheck.report.display.visible_keeping_colours`).

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from docutils import nodes
from pygments_ansi_color import AnsiColorLexer

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.writers.html5 import HTML5Translator

#: The Pygments language of a coloured block's HTML.
LEXER = "snipcheck-ansi"
#: Its stylesheet, in snipcheck's static folder.
CSS = "snipcheck-ansi.css"
#: A colour code, as :func:`snipcheck.report.display.visible_keeping_colours` keeps them.
_SGR = re.compile("\x1b\\[[0-9;]*m")


class coloured_block(nodes.literal_block):
    """A literal block of output with colour codes: its text has none, ``self["ansi"]`` has them.

    Builders other than HTML write it as the literal block it is (Sphinx's
    translators look a visitor up along the node's classes).
    """


def coloured(text: str) -> bool:
    """Whether ``text`` holds an escape character (a colour code, once made visible)."""
    return "\x1b" in text


def without_colours(text: str) -> str:
    """``text`` with its colour codes removed (every other control character already visible)."""
    return _SGR.sub("", text)


def block(text: str, classes: list[str], to_nodes: Callable[[str], list[nodes.Node]]) -> coloured_block:
    """A :class:`coloured_block` of ``text``.

    :param text: text whose only escape sequences are colour codes.
    :param to_nodes: makes the nodes of the plain text (its children).
    """
    plain = without_colours(text)
    node = coloured_block(plain, "", *to_nodes(plain), classes=classes)
    node["language"] = "none"
    node["ansi"] = text
    return node


def visit_coloured_block(translator: HTML5Translator, node: coloured_block) -> None:
    """HTML: the text with its codes, highlighted by :data:`LEXER` as Sphinx highlights any block."""
    source = node["ansi"]
    shown = nodes.literal_block(source, source, classes=node["classes"], ids=node["ids"])
    shown["language"] = LEXER
    shown.source, shown.line = node.source, node.line
    translator.visit_literal_block(shown)  # raises SkipNode once it has written the block


def colour_nodes(text: str, to_nodes: Callable[[str], list[nodes.Node]]) -> list[nodes.Node]:
    """``text`` with its colour codes interpreted: each run of one colour
    state as ``to_nodes(run)``, inside an ``inline`` with the state's classes
    where it has a colour.

    :param text: text whose only escape sequences are colour codes.
    :param to_nodes: makes the nodes of a run of plain text.
    """
    if not coloured(text):
        return to_nodes(text)
    out: list[nodes.Node] = []
    for _index, token, value in AnsiColorLexer().get_tokens_unprocessed(text):
        if not value:
            continue
        if token[:1] == ("Color",):
            classes = ["-" + "-".join(token[: depth + 1]) for depth in range(len(token))]
            out.append(nodes.inline("", "", *to_nodes(value), classes=classes))
        else:
            out.extend(to_nodes(value))
    return out


def _depart(translator: object, node: nodes.Node) -> None:
    """Never reached: the visitor skips the node."""


def register(app: Sphinx) -> None:
    """Bind :data:`LEXER` to the ANSI lexer, add the coloured block's HTML
    writer and the colours' stylesheet (at ``setup``)."""
    app.add_lexer(LEXER, AnsiColorLexer)
    app.add_node(coloured_block, html=(visit_coloured_block, _depart))
    app.add_css_file(CSS)
