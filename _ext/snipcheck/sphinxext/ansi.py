"""ANSI colour codes in captured output, highlighted without myst-nb.

An output block whose text holds colour codes gets the Pygments language
:data:`LEXER`.  :func:`register` binds that name to pygments-ansi-color's
``AnsiColorLexer`` through Sphinx's own registry (``Sphinx.add_lexer``), so the
name resolves whatever else is installed; a ``-W`` build without myst-nb never
sees "Pygments lexer name ... is not known".  The lexer turns SGR codes into
tokens ``Token.Color.<Bold|Faint>.<colour>.<BGcolour>`` (HTML classes
``-Color-Red``, ``-Color-Bold-Red-BGGreen`` ...) and drops every other escape;
``static/snipcheck-ansi.css`` colours those classes inside output panels only.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pygments_ansi_color import AnsiColorLexer

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: The Pygments language of an output block that holds ANSI colour codes.
LEXER = "snipcheck-ansi"
#: Its stylesheet, in snipcheck's static folder.
CSS = "snipcheck-ansi.css"


def language(text: str) -> str:
    """The Pygments language for an output block holding ``text``: :data:`LEXER`
    when it holds an escape character, else ``"none"`` (shown as is)."""
    return LEXER if "\x1b" in text else "none"


def register(app: Sphinx) -> None:
    """Bind :data:`LEXER` to the ANSI lexer and add its stylesheet (at ``setup``)."""
    app.add_lexer(LEXER, AnsiColorLexer)
    app.add_css_file(CSS)
