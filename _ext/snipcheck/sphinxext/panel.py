"""The output panel of a run, and captured text as document nodes.

Layout of the panel (classes in brackets; the CSS lives in ``static/snipcheck.css``)::

    container [cell_output snipcheck-output]  per block of terminal lines, a label and the block:
        paragraph [snipcheck-output-label no-search]   stdout / stderr · warning / stdout + stderr ...
        literal_block [output stream  snipcheck-stdout (snipcheck-wraps)]
        literal_block [output stderr  snipcheck-stderr snipcheck-warning|snipcheck-traceback]
        ansi.coloured_block [output ...]               the same, for text with colour codes
        container [output ... snipcheck-mixed] > container [highlight] > literal_block
                                                       lines that mix streams (colours as nodes)
        snippet_figure                                 a figure, where its placeholder line stands (HTML)
        paragraph [snipcheck-note ...]                 cut at the output limit, timed out, killed

A block of plain stdout whose lines read as prose is marked
``snipcheck-wraps``: it soft-wraps on a narrow screen; every other block
keeps one line to a row and scrolls sideways (:func:`snipcheck.report.display.may_wrap`).

Output blocks reuse myst-nb's classes (``cell_output``, ``output stream``,
``output stderr``) so its stylesheet applies where it is loaded.  The panel
shows the run's terminal lines (:func:`snipcheck.report.display.terminal_blocks`):
a line begun on stdout and ended on stderr is one line of one block, its
parts kept apart by class.

Captured text only ever goes into text nodes, which every writer escapes:
output is shown as text, never interpreted as markup.  Every place that puts
captured text on a page (this panel; the problem box, its diff and the stamp
in :mod:`.render`; the versions page) makes its control characters visible
first (:func:`snipcheck.report.display.visible`; colour codes are interpreted
instead, :mod:`.ansi`) and builds its nodes with :func:`captured_text`, which
keeps every run of word characters too long for a search index out of it.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from docutils import nodes

from snipcheck.judge.compare import display_events
from snipcheck.judge.normalize import Normalizer
from snipcheck.model import Event, Figure, Outcome
from snipcheck.report.display import long_words, may_wrap, mixed, terminal_blocks, visible_keeping_colours
from snipcheck.sphinxext import ansi
from snipcheck.sphinxext.i18n import _


def output_panel(
    outcome: Outcome,
    normalizers: tuple[Normalizer, ...],
    figure: Callable[[int, Figure], nodes.Element | None] | None = None,
) -> nodes.container:
    """The output of a run as a terminal shows it, in blocks of whole lines,
    each labelled by stream and kind (see :func:`snipcheck.report.display.terminal_blocks`).

    :param figure: ``figure(number, figure)`` gives the node that shows a
        figure (:func:`.figures.figure_node`; its placeholder line goes in it,
        for builders that show no images), or ``None``: the placeholder line
        alone.
    """
    assert outcome.result is not None
    panel = nodes.container(classes=["cell_output", "snipcheck-output"])
    number = 0
    for block in terminal_blocks(display_events(outcome.result, normalizers)):
        if mixed(block):
            panel += mixed_label(block)
            panel += parsed_block(block, ["output", "snipcheck-mixed"])
            continue
        (event,) = block
        shown = None
        if event.kind == "figure":
            number += 1
            shown = figure(number, outcome.result.figures[number - 1]) if figure is not None else None
        classes = ["output"]
        classes += ["stream", "snipcheck-stdout"] if event.stream == "stdout" else ["stderr", "snipcheck-stderr"]
        if event.kind != "text":
            classes.append(f"snipcheck-{event.kind}")
        panel += output_label(event.stream, event.kind)
        text = visible_keeping_colours(event.text)
        if may_wrap(event.stream, event.kind, text):
            classes.append("snipcheck-wraps")
        block_node: nodes.Element
        if ansi.coloured(text):
            block_node = ansi.block(text, classes, captured_text)
        else:
            block_node = captured_block(text, classes, "none")
        if shown is not None:
            shown += block_node  # what builders without images show
            block_node = shown
        panel += block_node
    result = outcome.result
    if result.truncated_bytes:
        if result.stopped_by_output:
            text = _(
                "Output over the limit of {limit:,} bytes: the run was stopped once {dropped:,} more bytes "
                "had come; they are not shown."
            )
        else:
            text = _("Output over the limit of {limit:,} bytes: the other {dropped:,} bytes are not shown.")
        panel += note(text.format(limit=result.output_limit, dropped=result.truncated_bytes), "snipcheck-truncated")
    if result.timed_out:
        text = _(
            "Timed out: the whole process group was killed after {seconds:.1f} s; "
            "above is what it printed until then."
        )
        panel += note(text.format(seconds=result.duration), "snipcheck-killed")
    elif result.signal:
        panel += note(_("The process was killed by signal {signal}.").format(signal=result.signal), "snipcheck-killed")
    if not result.events and not result.truncated_bytes:
        panel += note(_("(no output)"), "snipcheck-empty")
    return panel


def captured_text(text: str) -> list[nodes.Node]:
    """``text`` as text nodes for a page, every run of word characters longer
    than :data:`snipcheck.report.display.LONGEST_WORD` in an ``inline`` of class
    ``no-search``: no search language ever sees it (Sphinx skips such nodes),
    the rest stays searchable, and every builder shows the whole text.

    :param text: already made visible (:func:`snipcheck.report.display.visible`).
    """
    out: list[nodes.Node] = []
    at = 0
    for start, end in long_words(text):
        if start > at:
            out.append(nodes.Text(text[at:start]))
        out.append(nodes.inline("", text[start:end], classes=["no-search"]))
        at = end
    if at < len(text) or not out:
        out.append(nodes.Text(text[at:]))
    return out


def captured_block(text: str, classes: list[str], language: str) -> nodes.literal_block:
    """A literal block of captured text, highlighted as ``language``.

    Its children are :func:`captured_text` (for the search index); its
    ``rawsource`` is the same text, which is what Sphinx highlights, so every
    builder shows the block as one.

    :param text: already made visible (:func:`snipcheck.report.display.visible`, or
        :func:`~snipcheck.report.display.visible_keeping_colours` for the ANSI lexer).
    """
    block = nodes.literal_block(text, "", *captured_text(text), classes=classes)
    block["language"] = language
    return block


def _part_classes(stream: str, kind: str) -> list[str]:
    return [f"snipcheck-part-{stream}"] + ([f"snipcheck-part-{kind}"] if kind != "text" else [])


def parsed_block(block: Sequence[Event], classes: list[str]) -> nodes.container:
    """Terminal lines begun on one stream and ended on another
    (:func:`snipcheck.report.display.mixed`), written as document nodes rather than
    highlighted: each part in an ``inline`` that keeps its stream (classes
    ``snipcheck-part-stdout``, ``snipcheck-part-stderr``, and the kind's
    ``snipcheck-part-warning`` ...), its colours interpreted
    (:func:`.ansi.colour_nodes`).

    A literal block whose children are the parts (a "parsed literal": Sphinx
    writes its nodes instead of highlighting its text), inside containers
    ``classes`` and ``highlight``, so that it is laid out, and scrolls, like
    every highlighted output block; builders without colours show its text.
    """
    pre = nodes.literal_block("", "", classes=["snipcheck-parsed"])
    for part in block:
        text = visible_keeping_colours(part.text)
        pre += nodes.inline(
            "", "", *ansi.colour_nodes(text, captured_text), classes=_part_classes(part.stream, part.kind)
        )
    inner = nodes.container(classes=["highlight"])
    inner += pre
    outer = nodes.container(classes=[*classes, "notranslate"])
    outer += inner
    return outer


def mixed_label(block: Sequence[Event]) -> nodes.paragraph:
    """The label above a block of mixed lines: each stream and kind it holds,
    in the order they first appear, joined by ``+``."""
    seen: list[tuple[str, str]] = []
    for part in block:
        if (part.stream, part.kind) not in seen:
            seen.append((part.stream, part.kind))
    text = " + ".join(label_text(stream, kind) for stream, kind in seen)
    return nodes.paragraph(text, text, classes=["snipcheck-output-label", "snipcheck-label-mixed", "no-search"])


def label_text(stream: str, kind: str) -> str:
    """The words of an output label (see :func:`output_label`)."""
    if kind == "figure":
        return str(_("figure"))
    if stream == "stdout":
        return str(_("stdout"))
    if kind == "warning":
        return str(_("stderr · warning"))
    if kind == "traceback":
        return str(_("stderr · uncaught exception"))
    return str(_("stderr"))


def output_label(stream: str, kind: str) -> nodes.paragraph:
    """The label above one output block: which stream, and what kind of text.

    :param stream: ``"stdout"`` or ``"stderr"``.
    :param kind: ``"text"``, ``"warning"``, ``"traceback"`` or ``"figure"``
        (see :func:`snipcheck.judge.compare.display_events`).
    """
    text = label_text(stream, kind)
    cls = f"snipcheck-label-{stream}" + (f"-{kind}" if kind != "text" else "")
    return nodes.paragraph(text, text, classes=["snipcheck-output-label", cls, "no-search"])


def note(text: str, cls: str) -> nodes.paragraph:
    """A small note paragraph of class ``snipcheck-note`` and ``cls``."""
    return nodes.paragraph(text, text, classes=["snipcheck-note", cls])
