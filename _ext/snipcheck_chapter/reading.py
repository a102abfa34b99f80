"""Reading aids computed from the page: an estimated reading time and resume points.

Two directives leave placeholders that a post-transform fills once the page is
complete (every snippet's code and output already in the doctree)::

    ```{reading-time}
    ```

    ```{resume-point}
    前半章到这里结束：……        (optional: what the part just read covered)
    ```

``reading-time`` becomes a line near the top of the page: the estimated
minutes for the whole page and what they are made of.  ``resume-point``
becomes a "you can stop here" box: minutes read so far, minutes left, and
links to the page's remaining top-level sections.  Nothing in either is typed
by hand; it is recomputed on every write from the page as built.

The estimate (:data:`RATES`, documented in ``docs/contributing.md``)::

    seconds = 60 × CJK characters / 350
            + 60 × other words / 200
            + 5 × non-blank code lines
            + 3 × non-blank output lines

Prose is every text node (headings, inline code, dropdown answers and tab
labels included); code is the snippets' code blocks and any other literal
block; output is the blocks inside an output panel.  The page's own meta
boxes (the environment box, snippet stamps, these reading aids) are not
counted.  Minutes are rounded to the nearest whole minute, at least 1.

Sub-extension ``snipcheck_chapter.reading``.  May import Sphinx and docutils
(Sphinx layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from snipcheck_chapter import add_static, i18n, metadata, reading_list
from snipcheck_chapter.i18n import _
from snipcheck_chapter.reading_measure import (
    RATES,
    Counts,
    Mark,
    Measure,
    Rates,
    Section,
    lines,
    measure,
    minutes,
    prose,
    reading_time,
    resume_point,
)

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = [
    "FORMULA_LABEL",
    "RATES",
    "Counts",
    "FillReadingAids",
    "Measure",
    "Rates",
    "ReadingTimeDirective",
    "ResumePointDirective",
    "lines",
    "measure",
    "minutes",
    "prose",
    "setup",
]

#: The label of the section that explains the estimate (``(snipcheck-reading-time)=``
#: in MyST); the reading-time line links to it when the project has it.
FORMULA_LABEL = "snipcheck-reading-time"

# --- nodes and directives ------------------------------------------------------


class _AidDirective(SphinxDirective):
    has_content = True
    required_arguments = 0
    optional_arguments = 0
    option_spec: ClassVar[dict[str, Any]] = {}
    node_class: ClassVar[type[nodes.Element]]

    def run(self) -> list[nodes.Node]:
        node = self.node_class()
        self.set_source_info(node)
        if self.content:
            node += self.parse_content_to_nodes()
        return [node]


class ReadingTimeDirective(_AidDirective):
    """``{reading-time}``: the page's estimated reading time, computed at build time."""

    node_class = reading_time


class ResumePointDirective(_AidDirective):
    """``{resume-point}``: a place to stop, with minutes read and left and the sections left."""

    node_class = resume_point


# --- filling the placeholders --------------------------------------------------


class FillReadingAids(SphinxPostTransform):
    """Replace the reading-time and resume-point placeholders with computed text.

    Runs on the page as it will be written (every snippet's code and output
    are already in it), before Sphinx resolves references (priority 10), so
    that the link to the formula's explanation is resolved like any other.
    """

    default_priority = 5

    def run(self, **kwargs: object) -> None:
        if not any(True for _ in self.document.findall(_is_aid)):
            return
        page = measure(self.document)
        for placeholder in list(self.document.findall(reading_time)):
            placeholder.replace_self(reading_time_box(placeholder, page.total, self.formula_link()))
        for mark in page.marks:
            mark.node.replace_self(resume_box(mark, page))

    def formula_link(self) -> nodes.Node | None:
        """A reference to the label :data:`FORMULA_LABEL`, where a page of the
        project explains the estimate, or ``None`` when no page has it.  Left
        for Sphinx's reference resolver (which runs after this transform), so
        every builder links it its own way."""
        if FORMULA_LABEL not in self.env.domaindata.get("std", {}).get("labels", {}):
            return None
        xref = addnodes.pending_xref(
            "", refdomain="std", reftype="ref", reftarget=FORMULA_LABEL, refexplicit=True, refwarn=True
        )
        xref["refdoc"] = self.env.docname
        xref += nodes.inline("", _("how this is estimated"), classes=["std", "std-ref"])
        return xref


def _is_aid(node: nodes.Node) -> bool:
    return isinstance(node, reading_time | resume_point)


def reading_time_box(placeholder: reading_time, total: Counts, formula: nodes.Node | None) -> nodes.Element:
    """The reading-time line: minutes, the counts they come from, and where
    the formula is explained (``formula``: a link, or ``None``)."""
    box = nodes.container(classes=["snipcheck-reading-time"])
    para = nodes.paragraph()
    para += nodes.strong("", _("Reading time about {minutes} min").format(minutes=minutes(total.seconds())))
    if formula is not None and total.words:
        detail = _(
            " (this page: {cjk} CJK characters, {words} other words and identifiers, {code} lines of code, "
            "{output} lines of output; estimated from the page at build time, {link})"
        )
    elif formula is not None:
        detail = _(
            " (this page: {cjk} CJK characters, {code} lines of code, {output} lines of output; "
            "estimated from the page at build time, {link})"
        )
    elif total.words:
        detail = _(
            " (this page: {cjk} CJK characters, {words} other words and identifiers, {code} lines of code, "
            "{output} lines of output; estimated from the page at build time)"
        )
    else:
        detail = _(
            " (this page: {cjk} CJK characters, {code} lines of code, {output} lines of output; "
            "estimated from the page at build time)"
        )
    text = detail.format(
        cjk=total.cjk, words=total.words, code=total.code_lines, output=total.output_lines, link="{link}"
    )
    before, _sep, after = text.partition("{link}")
    para += nodes.Text(before)
    if formula is not None:
        para += formula
        para += nodes.Text(after)
    box += para
    box += placeholder.children
    return box


def resume_box(mark: Mark, page: Measure) -> nodes.Element:
    """A "you can stop here" box for ``mark``."""
    read = minutes(mark.before.seconds())
    left_counts = page.total - mark.before
    remaining = page.sections[mark.index :]
    box = nodes.admonition(classes=["tip", "snipcheck-resume"])
    box += nodes.title("", _("You can stop here"))
    box += mark.node.children
    para = nodes.paragraph()
    if remaining:
        left = minutes(left_counts.seconds())
        para += nodes.Text(
            _("You have read for about {read} min; about {left} min are left: ").format(read=read, left=left)
        )
        for i, section in enumerate(remaining):
            if i:
                para += nodes.Text(" · ")
            para += _link(section)
        para += nodes.Text(_("."))
        box += para
        again = nodes.paragraph()
        before, _sep, after = _("When you come back, no need to reread: go on from {section}.").partition("{section}")
        again += nodes.Text(before)
        again += _link(remaining[0])
        again += nodes.Text(after)
        box += again
    else:
        para += nodes.Text(_("You have read for about {read} min: this is the end of the page.").format(read=read))
        box += para
    return box


def _link(section: Section) -> nodes.Node:
    ids = section.node.get("ids") or []
    text = _("“{title}”").format(title=section.title)
    if not ids:
        return nodes.Text(text)
    return nodes.reference("", text, internal=True, refid=ids[0])


def setup(app: Sphinx) -> dict[str, Any]:
    """Sub-extension ``snipcheck_chapter.reading``: ``{reading-time}``,
    ``{resume-point}`` and ``{reading-list}`` (:mod:`.reading_list`), and the
    post-transforms that fill them."""
    app.setup_extension("snipcheck")
    i18n.register(app)
    app.add_node(reading_time)
    app.add_node(resume_point)
    app.add_directive("reading-time", ReadingTimeDirective)
    app.add_directive("resume-point", ResumePointDirective)
    app.add_post_transform(FillReadingAids)
    add_static(app, css="snipcheck-reading.css")
    reading_list.register(app)
    return metadata(env_version=1)  # 1: env.snipcheck_reading_lists
