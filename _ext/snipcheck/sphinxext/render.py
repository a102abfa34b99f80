"""Build the docutils nodes of a placed snippet.

Layout (classes in brackets; the CSS lives in ``static/snipcheck.css``)::

    container [snipcheck-snippet]
      literal_block [snipcheck-code]            the code, line numbers as in the file
      container [snipcheck-badges]              only for snippets not run here
      caution                                   a problem this build found, with its diff
      container [cell_output snipcheck-output]  the output panel (:mod:`.panel`)
      paragraph [snipcheck-stamp]               torch 2.13.0+cpu · Python 3.11.7 · CPU · 0.03 s

Captured text reaches the page only through :mod:`.panel`'s
:func:`~.panel.captured_text`, its control characters made visible first
(:func:`snipcheck.report.display.visible`): in the panel, the problem box, its diff
and the stamp alike.

Every label is translated through :mod:`.i18n` (the project's ``language``),
so every builder (HTML, LaTeX, text) shows the same words.  Labels are
document text, not CSS ``content``, for that reason; the class ``no-search``
keeps them out of Sphinx's search index.
"""

from __future__ import annotations

import re

from docutils import nodes

from snipcheck.model import Outcome, RunResult, Snippet
from snipcheck.report.display import visible
from snipcheck.sphinxext.i18n import _
from snipcheck.sphinxext.panel import captured_block, captured_text, note

_LANG = {"python": "python", "rust": "rust"}


class snippet_output(nodes.General, nodes.Element):
    """Placeholder for a snippet's output panel; ``serial`` is its placement's
    position in the page.  :mod:`.fill` replaces it before the page is written."""


class belief_head(nodes.General, nodes.Element):
    """Placeholder for a refuted-claim block's verdict label (see :mod:`.fill`)."""


class claim_ref(nodes.Inline, nodes.TextElement):
    """A value cited by the ``claim`` role; rendered by :mod:`.fill` once checked."""


def pending_output(serial: int) -> snippet_output:
    """The placeholder the directive leaves for the output panel."""
    return snippet_output(serial=serial)


def code_block(snippet: Snippet) -> nodes.literal_block:
    """The snippet's code, numbered from its line in the file."""
    block = nodes.literal_block(snippet.code, snippet.code, classes=["snipcheck-code"])
    block["language"] = _LANG.get(snippet.language, "text")
    block["linenos"] = True
    block["highlight_args"] = {"linenostart": snippet.code_lineno}
    return block


def snippet_node(snippet: Snippet | None, snippet_id: str) -> nodes.container:
    node = nodes.container(classes=["snipcheck-snippet"])
    node["ids"].append(nodes.make_id(f"snippet-{snippet_id}"))
    if snippet is not None:
        node += code_block(snippet)
    return node


def stamp(
    outcome: Outcome, snippet: Snippet, durations: bool = True, *, where: str = "", environment: bool = True,
    cell: str = "",
) -> nodes.paragraph:
    """The environment stamp under an output panel (with the run's duration, unless ``durations`` is false).

    :param where: ``page:line`` of the directive, named instead of the file
        for code written in the page (:attr:`Snippet.in_page`: its run file is
        the run directory's, not one a reader can open).
    :param cell: ``script.py:line`` of a ``snippet-script`` cell's code,
        named instead of the file it runs as (which no reader can open).
    :param environment: whether to name the environment and the seed; false
        for a chain's later cells, which ran in the process the first cell's
        stamp names, seeded once before it.
    """
    assert outcome.result is not None
    r = outcome.result
    parts = [*([r.stamp.label()] if environment else []), *([f"{r.duration:.2f} s"] if durations else [])]
    if r.seed is not None and environment:  # a chain is seeded once, before its first cell
        parts.append(_("random seed {seed}").format(seed=r.seed))
    if r.exit_status not in (0, None):
        parts.append(_("exit status {status}").format(status=r.exit_status))
    if outcome.origin == "cache":
        parts.append(_("result from the cache"))
    para = nodes.paragraph(classes=["snipcheck-stamp"])
    if parts:
        para += captured_text(visible(" · ".join(parts) + " · "))  # the stamp's values come from the run's environment
    shown = visible(cell or (where if snippet.in_page and where else snippet.path))
    para += nodes.literal(shown, shown)
    return para


def stated_panel(stated: str, label: str, stated_env: str | None) -> nodes.container:
    """A stated output that this build did not verify, labelled as such."""
    panel = nodes.container(classes=["cell_output", "snipcheck-output", "snipcheck-unverified"])
    panel += note(label, "snipcheck-unverified-label")
    if stated.strip():
        panel += captured_block(visible(stated), ["output", "stream", "snipcheck-stdout"], "none")
        if stated_env:
            panel += note(_("The stated output comes from: {env}").format(env=stated_env), "snipcheck-stated-env")
    else:
        panel += note(
            _("No stated output yet: it has not been recorded in an environment that meets the requirements."),
            "snipcheck-empty",
        )
    return panel


def requirement_label(req: str) -> str:
    """What a page says of one entry of ``Outcome.missing``: a requirement (``cuda``)."""
    return str(_("needs {requirement}").format(requirement=req))


def badges(missing: tuple[str, ...], stopped_at: str = "") -> nodes.container:
    """One sphinx-design badge per missing requirement, and one naming the
    cell of its chain that kept a cell from running (``Outcome.stopped_at``)."""
    box = nodes.container(classes=["snipcheck-badges"])
    para = nodes.paragraph()
    labels = [requirement_label(req) for req in missing]
    if stopped_at:
        labels.append(str(_("its chain stopped at {id}").format(id=stopped_at)))
    for text in labels:
        para += nodes.inline(text, text, classes=["sd-badge", "sd-bg-warning", "sd-bg-text-warning"])
        para += nodes.Text(" ")
    text = _("not run in this build")
    para += nodes.inline(text, text, classes=["sd-badge", "sd-bg-secondary", "sd-bg-text-secondary"])
    box += para
    return box


def problem_sentence(status: str, stated: str, ended_wrong: bool, stopped: bool = False) -> str:
    """What went wrong, for the reader of the page, by the kind of problem.

    The build warning (English, for the author) gives the details; the page
    says which kind of problem it is and shows the diff.

    :param status: the record's status (``drift``, ``exec``, ``timeout``, ``truncated``, ...).
    :param stated: the stated output (the directive body).
    :param ended_wrong: the run ended otherwise than its ``expect`` tag says.
    :param stopped: the run was stopped for its output (:attr:`RunResult.stopped_by_output`).
    """
    if status == "timeout":
        return _("The run timed out and was killed; this page shows what it printed until then.")
    if ended_wrong:
        return _("The snippet did not end the way its tags expect (a normal exit, or the named exception).")
    if status == "truncated" and stopped:
        return _(
            "The output went far past the output limit, so the run was stopped there: it cannot be "
            "checked (the build warning says how to raise the limit)."
        )
    if status == "truncated":
        return _("The output was cut at the output limit: it cannot be checked whole (the build warning says how to raise the limit).")
    if not stated.strip():
        return _("No stated output yet: record it from a real run.")
    return _("The stated output differs from the actual output of this build.")


def problem_box(status: str, stated: str, diff: str, result: RunResult, ended_wrong: bool) -> nodes.Element:
    """Shown on the page when a snippet drifted or failed (the build warns, and fails, too).

    :param stated: the stated output (the directive body).
    :param diff: stated → actual, as the build warning shows it (headers relabelled here).
    :param result: the run: how it ended is quoted when that is the problem.
    :param ended_wrong: the run ended otherwise than its ``expect`` tag says.
    """
    box = nodes.caution()
    title = _("Problem found by this build (the build warns too, and fails)")
    box += nodes.paragraph(title, title, classes=["snipcheck-problem-title"])
    sentence = problem_sentence(status, stated, ended_wrong, result.stopped_by_output)
    if result.ended_chain and status != "timeout":
        sentence = _(
            "The snippet ended its chain's process, so the cells after it could not run ({ids}): "
            "a cell of a chain must let the process go on."
        ).format(ids=_(", ").join(result.ended_chain))
    para = nodes.paragraph(sentence, sentence)
    if ended_wrong and status != "timeout":
        para += nodes.Text(" " + _("It ended with:") + " ")
        ending = visible(ended_with(result))
        para += nodes.literal(ending, "", *captured_text(ending))  # text, never markup: it may quote the exception
    box += para
    if diff:
        box += diff_block(diff, ["snipcheck-diff"])
    return box


def diff_block(diff: str, classes: list[str]) -> nodes.literal_block:
    """A diff of outputs for a page (:func:`relabel_diff`, every control
    character made visible, long words kept out of the search index)."""
    return captured_block(visible(relabel_diff(diff)), classes, "diff")


def ended_with(result: RunResult) -> str:
    """How a run ended, for the page: the exception's first line, the signal
    or the exit status."""
    if result.signal:
        return _("signal {signal}").format(signal=result.signal)
    if result.exception is not None:
        lines = result.exception.message.strip().splitlines()
        return f"{result.exception.type}: {lines[0] if lines else ''}".rstrip(": ")
    return _("exit status {status}").format(status=result.exit_status)


_STATED_HEADER = re.compile(r"^--- stated \((?P<where>.*)\)$")
_ACTUAL_HEADER = re.compile(r"^\+\+\+ actual \((?P<where>.*)\)$")


def relabel_diff(diff: str) -> str:
    """``diff`` (stated → actual, as :func:`snipcheck.judge.compare.text_diff` and
    verify reports write it) with its two file headers in the page's
    language; the build warning and the JSON reports keep the English ones."""
    lines = diff.split("\n")
    stated = _STATED_HEADER.match(lines[0])
    if stated:
        lines[0] = "--- " + _("stated ({where})").format(where=stated["where"])
    actual = _ACTUAL_HEADER.match(lines[1]) if len(lines) > 1 else None
    if actual:
        lines[1] = "+++ " + _("actual ({where})").format(where=actual["where"])
    return "\n".join(lines)


def belief_label(verdict: bool | None, verified: bool) -> list[nodes.Node]:
    """The verdict badge of a refuted-claim block, and a note when this build did not run it."""
    if verdict is None:
        text, color = _("Common belief · the code gives no verdict"), "warning"
    elif verdict:
        text, color = _("Common belief · holds when tested"), "success"
    else:
        text, color = _("Common belief · refuted when tested"), "danger"
    head = nodes.paragraph(classes=["snipcheck-belief-head"])
    head += nodes.inline(text, text, classes=["sd-badge", f"sd-bg-{color}", f"sd-bg-text-{color}"])
    out: list[nodes.Node] = [head]
    if not verified:
        note = _("(This build did not run this snippet: the verdict rests on the stated output.)")
        out.append(nodes.paragraph(note, note, classes=["snipcheck-note"]))
    return out


def claim(value: str, snippet_id: str, record: object, here: bool) -> nodes.Element:
    """A cited value: a link to the snippet when it is on this page, titled
    with whether this build checked it (``record`` is the claim's record)."""
    verified = bool(getattr(record, "verified", False))
    classes = ["snipcheck-claim"] + ([] if verified else ["snipcheck-claim-unverified"])
    if here:
        title = (
            _("From the actual output of snippet {id}, checked by this build")
            if verified
            else _("From the stated output of snippet {id}, not verified by this build")
        ).format(id=snippet_id)
        node: nodes.Element = nodes.reference(
            value, value, refuri=f"#{nodes.make_id('snippet-' + snippet_id)}", reftitle=title
        )
    else:
        node = nodes.inline(value, value)
    node["classes"] += classes
    return node


def error_box(detail: str) -> nodes.Element:
    """A snippet that could not be placed: a translated headline and the
    author-facing ``detail`` (the same text as the build warning)."""
    box = nodes.error()
    headline = _("This snippet could not be loaded; the build warning says why:")
    box += nodes.paragraph(headline, headline)
    shown = visible(detail)  # it may quote an OS error or a file name
    box += nodes.paragraph(shown, "", *captured_text(shown))
    return box
