"""What the tests of page labels share (test_i18n.py, test_cases_reader.py): the
page-text classes snipcheck and its chapter own, and the names that stay as
they are in any language.

It holds no tests; test modules import it as a plain module (tests/ is on sys.path).
"""

from __future__ import annotations

from bs4 import BeautifulSoup

# The page-text classes snipcheck and its chapter sub-extensions own.
UI = (
    ".snipcheck-output-label, .snipcheck-badges, .snipcheck-note, .snipcheck-environment, "
    ".snipcheck-belief-head, .snipcheck-problem-title, .caution, .snipcheck-reading-time, .snipcheck-resume, "
    ".snipcheck-stamp"
)
# Names that stay as they are in any language (and the snippet's own output in the diff).
NAMES = {"stdout", "stderr", "torch", "cpu", "Python", "CPU", "Linux", "cuda", "index", "The", "end",
         "this", "not", "what", "prints", "really", "snippets", "belief", "py", "drifts", "warns",
         "raises", "i18n", "md", "numpy"}  # fmt: skip


def ui_text(page: BeautifulSoup) -> str:
    """The text of ``page``'s labels (the elements :data:`UI` selects), one element a line."""
    return "\n".join(el.get_text(" ", strip=True) for el in page.select(UI))
