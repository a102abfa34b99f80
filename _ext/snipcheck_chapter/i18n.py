"""Translations of the labels this site's own features put on a page.

The reading aids and the versions page label their text through
:mod:`sphinx.locale` with a catalog of their own (``snipcheck_chapter``), so
snipcheck's catalog, which ships in the wheel, holds only what snipcheck
itself shows.  Edit ``locale/<lang>/LC_MESSAGES/snipcheck_chapter.po``, then
compile it with ``pybabel compile -d _ext/snipcheck_chapter/locale -D
snipcheck_chapter``; ``tests/sphinxext/test_i18n.py`` checks that every
label of this package is there and that the committed ``.mo`` matches.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sphinx.locale import get_translation

from snipcheck_chapter import LOCALE_DIR

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: The gettext domain of this package's labels (``snipcheck_chapter.po`` / ``.mo``).
MESSAGE_CATALOG = "snipcheck_chapter"

_ = get_translation(MESSAGE_CATALOG)


def register(app: Sphinx) -> None:
    """Load this package's catalog for ``config.language`` (from a sub-extension's ``setup``)."""
    app.add_message_catalog(MESSAGE_CATALOG, str(LOCALE_DIR))
