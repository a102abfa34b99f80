"""The ``{reading-list}`` directive: the pages to read, in order, each with its
reading time computed from the page itself.

Part of the sub-extension ``snipcheck_chapter.reading``.  MyST usage::

    ```{reading-list}
    inplace: What in-place means, the version counter, ...
    burn: The same question in burn.
    ```

Each line names a document (relative to the page holding the list) and, after
a colon, one line about it (inline markup allowed); a line starting with
blanks continues the one before.  The list renders as a numbered list: the
page's title as a link, "about N min" (the same estimate as the page's own
``{reading-time}``, from :func:`snipcheck_chapter.reading_measure.measure` on that
page's doctree), and the description; a last line gives the total.  Nothing
is typed by hand: a page that grows changes the list on the next build (the
page holding the list is re-read whenever a listed page is).

May import Sphinx and docutils (Sphinx layer).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from snipcheck.sphinxext.fill import FillSnippets
from snipcheck.sphinxext.log import warn
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from snipcheck_chapter.i18n import _
from snipcheck_chapter.reading_measure import Counts, measure, minutes

if TYPE_CHECKING:
    from collections.abc import Set as AbstractSet

    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


class reading_minutes(nodes.Inline, nodes.TextElement):
    """Placeholder for "about N min" of the documents in ``docnames``."""


class ReadingListDirective(SphinxDirective):
    """``{reading-list}``: documents in reading order with computed reading times."""

    has_content = True
    required_arguments = 0
    optional_arguments = 0
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        entries = self._entries()
        listed = lists(self.env).setdefault(self.env.docname, set())
        items = nodes.enumerated_list(classes=["snipcheck-reading-list"])
        for docname, description, line in entries:
            if docname not in self.env.found_docs:
                warn("tag", f"reading-list: no document {docname!r}; name a page of this project", (self.env.docname, line))
                continue
            listed.add(docname)
            item = nodes.list_item()
            head = nodes.paragraph(classes=["snipcheck-reading-list-head"])
            xref = addnodes.pending_xref(
                "", refdomain="std", reftype="doc", reftarget="/" + docname, refexplicit=False, refwarn=True
            )
            xref["refdoc"] = self.env.docname
            xref += nodes.inline("", docname)
            head += xref
            head += nodes.Text(" · ")
            head += reading_minutes("", "", docnames=[docname])
            item += head
            if description:
                item += self.parse_text_to_nodes(description)
            items += item
        total = nodes.paragraph(classes=["snipcheck-reading-list-total"])
        total += reading_minutes("", "", docnames=[d for d, _d, _l in entries if d in listed], total=True)
        return [items, total]

    def _entries(self) -> list[tuple[str, str, int]]:
        """``(docname, description, line)`` per entry of the content."""
        entries: list[tuple[str, str, int]] = []
        base = posixpath.dirname(self.env.docname)
        for offset, raw in enumerate(self.content):
            line = self.content_offset + offset + 1
            if not raw.strip():
                continue
            if raw[:1].isspace() and entries:
                docname, description, first = entries[-1]
                entries[-1] = (docname, f"{description} {raw.strip()}".strip(), first)
                continue
            name, _colon, description = raw.partition(":")
            docname = posixpath.normpath(posixpath.join(base, name.strip()))
            entries.append((docname, description.strip(), line))
        return entries


def lists(env: BuildEnvironment) -> dict[str, set[str]]:
    """``env.snipcheck_reading_lists``: docname holding a list → documents listed."""
    if not hasattr(env, "snipcheck_reading_lists"):
        env.snipcheck_reading_lists = {}  # type: ignore[attr-defined]
    return env.snipcheck_reading_lists  # type: ignore[attr-defined,no-any-return]


def page_counts(env: BuildEnvironment, docname: str) -> Counts:
    """What ``docname`` holds, as its own ``{reading-time}`` counts it: its
    doctree with the snippets' outputs filled in (they are filled when a page
    is written, before its reading time is counted)."""
    doctree = env.get_doctree(docname)
    FillSnippets(doctree).fill(docname)
    return measure(doctree).total


class FillReadingMinutes(SphinxPostTransform):
    """Replace each :class:`reading_minutes` with "about N min" (priority 5,
    before references are resolved, like the page's own reading time)."""

    default_priority = 5

    def run(self, **kwargs: object) -> None:
        for node in list(self.document.findall(reading_minutes)):
            counts = Counts()
            for docname in node["docnames"]:
                counts += page_counts(self.env, docname)
            if node.get("total"):
                text = _("About {minutes} min in all.").format(minutes=minutes(counts.seconds()))
            else:
                text = _("about {minutes} min").format(minutes=minutes(counts.seconds()))
            node.replace_self(nodes.inline(text, text, classes=["snipcheck-reading-minutes"]))


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    lists(env).pop(docname, None)


def merge(app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str], other: BuildEnvironment) -> None:
    for docname in docnames:
        if docname in lists(other):
            lists(env)[docname] = lists(other)[docname]


def reread_lists(
    app: Sphinx, env: BuildEnvironment, added: AbstractSet[str], changed: AbstractSet[str], removed: AbstractSet[str]
) -> list[str]:
    """Pages holding a list whose listed pages are read again (``env-get-outdated``)."""
    touched = set(added) | set(changed) | set(removed)
    return sorted(doc for doc, listed in lists(env).items() if listed & touched)


def register(app: Sphinx) -> None:
    """Called by :func:`snipcheck_chapter.reading.setup`."""
    app.add_node(reading_minutes)
    app.add_directive("reading-list", ReadingListDirective)
    app.add_post_transform(FillReadingMinutes)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("env-get-outdated", reread_lists)
