"""Translations of every label and message that snipcheck puts on a page.

Labels go through :mod:`sphinx.locale` (``_ = get_translation("snipcheck")``)
and follow the project's ``language``: English is the default (the msgids),
and ``locale/<lang>/LC_MESSAGES/snipcheck.mo`` translates them (zh_CN ships
with snipcheck).  Console messages (warnings, the build summary) stay in
English, like Sphinx's own.

Catalogs: edit ``locale/<lang>/LC_MESSAGES/snipcheck.po``, then compile it
with ``pybabel compile -d _ext/snipcheck/locale -D snipcheck`` (Babel comes
with Sphinx).  ``tests/sphinxext/test_i18n.py`` checks that every label in the code has a
zh_CN translation and that the committed ``.mo`` matches its ``.po``.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.locale import get_translation

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: The gettext domain of snipcheck's labels (``snipcheck.po`` / ``snipcheck.mo``).
MESSAGE_CATALOG = "snipcheck"
#: Where the catalogs live: ``<lang>/LC_MESSAGES/<domain>.mo`` (package data).
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"

_ = get_translation(MESSAGE_CATALOG)


def register(app: Sphinx) -> None:
    """Load snipcheck's catalog for ``config.language`` (called from ``setup``,
    when Sphinx has read ``language`` but not yet built anything)."""
    app.add_message_catalog(MESSAGE_CATALOG, str(LOCALE_DIR))
