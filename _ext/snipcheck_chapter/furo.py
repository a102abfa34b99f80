"""The Furo theme in the page's language, and out of the way of code on phones.

Sub-extension ``snipcheck_chapter.furo``.  Does nothing unless the HTML
builder uses Furo.

**Labels.**  Furo marks most of its labels for translation ("Next", "Back to
top", "Made with …") but ships no catalogs, and Sphinx's own catalogs do not
have them, so a Chinese page showed them in English.  A few it never marks at
all: the ``aria-label`` of its toolbar buttons ("Toggle site navigation
sidebar") and the possessive in its footer ("@pradyunsg's Furo").  At
``builder-inited`` this module

- adds ``locale/<language>/LC_MESSAGES/furo.mo`` (in this package)
  behind Sphinx's own catalog, so Furo's ``_()`` and ``{% trans %}`` find
  their translations there when Sphinx has none;
- makes the literal ``aria-label`` values and the possessive of Furo's
  ``page.html`` translatable as it loads the template (the template file is
  not changed).

**Layout** (``static/snipcheck-furo.css``): Furo's floating "Back to top"
pill sat over code blocks; it is moved into the margin where the page has
one and left out where it has none.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snipcheck_chapter import LOCALE_DIR, add_static, metadata

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: gettext domain of the Furo catalog (``furo.po`` / ``furo.mo``).
CATALOG = "furo"
_ARIA_LABEL = re.compile(r'aria-label="([A-Z][^"{}\']*)"')
_POSSESSIVE = "</a>'s"


def translatable(source: str) -> str:
    """Furo template source with its literal ``aria-label`` values and its
    footer's possessive made translatable (``{{ _('…') }}``)."""
    source = _ARIA_LABEL.sub(lambda m: "aria-label=\"{{ _('" + m.group(1) + "') }}\"", source)
    return source.replace(_POSSESSIVE, "</a>{{ _(\"'s\") }}")


def _is_furo(filename: str | None) -> bool:
    if not filename:
        return False
    parts = Path(filename).parts
    return "furo" in parts and "theme" in parts


def add_furo_translations(app: Sphinx) -> None:
    """Put the Furo catalog behind Sphinx's (``builder-inited``) and make
    Furo's untranslated literals translatable."""
    builder = app.builder
    if builder.format != "html" or getattr(getattr(builder, "theme", None), "name", None) != "furo":
        return
    language = app.config.language or "en"
    catalog = gettext.translation(CATALOG, localedir=str(LOCALE_DIR), languages=[language], fallback=True)
    translator = app.translator
    if type(catalog) is not gettext.NullTranslations and not _has_furo_catalog(translator):
        catalog._snipcheck_furo = True  # type: ignore[attr-defined]
        translator.add_fallback(catalog)
    loader = getattr(builder, "templates", None)
    if loader is None or getattr(loader, "_snipcheck_furo", False):
        return
    original = loader.get_source

    def get_source(environment: Any, template: str) -> Any:
        source, filename, uptodate = original(environment, template)
        if _is_furo(filename) and template.lstrip("!") == "page.html":
            source = translatable(source)
        return source, filename, uptodate

    loader.get_source = get_source
    loader._snipcheck_furo = True


def _has_furo_catalog(translator: gettext.NullTranslations) -> bool:
    """Whether the Furo catalog is already in ``translator``'s chain (a
    process may build more than once with the same translator)."""
    current: gettext.NullTranslations | None = translator
    while current is not None:
        if getattr(current, "_snipcheck_furo", False):
            return True
        current = getattr(current, "_fallback", None)
    return False


def setup(app: Sphinx) -> dict[str, Any]:
    """Sub-extension ``snipcheck_chapter.furo``."""
    app.setup_extension("snipcheck")
    app.connect("builder-inited", add_furo_translations)
    add_static(app, css="snipcheck-furo.css")
    return metadata()
