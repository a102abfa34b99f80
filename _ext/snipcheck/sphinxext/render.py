"""Build the docutils nodes of a placed snippet.

Layout (classes in brackets; the CSS lives in ``static/snipcheck.css``)::

    container [snipcheck-snippet]
      literal_block [snipcheck-code]            the code, line numbers as in the file
      container [snipcheck-badges]              only for snippets not run here
      container [cell_output snipcheck-output]  one literal_block per output event:
          [output stream  snipcheck-stdout]
          [output stderr  snipcheck-stderr snipcheck-warning|snipcheck-traceback]
      paragraph [snipcheck-stamp]               torch 2.13.0+cpu · Python 3.11.7 · CPU · 0.03 s

Output blocks reuse myst-nb's classes (``cell_output``, ``output stream``,
``output stderr``) so its stylesheet applies where it is loaded; text holding
ANSI colour codes gets snipcheck's own ANSI lexer (:mod:`.ansi`), so colours
need no myst-nb.  Captured text only ever goes into
``literal_block`` text nodes, which every writer escapes: output is shown as
text, never interpreted as markup.
"""

from __future__ import annotations

from docutils import nodes

from ..compare import display_events
from ..model import Outcome, Snippet
from ..normalize import Normalizer
from . import ansi

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


def output_panel(outcome: Outcome, normalizers: tuple[Normalizer, ...]) -> nodes.container:
    """The output events of a run, each labelled by stream and kind."""
    assert outcome.result is not None
    panel = nodes.container(classes=["cell_output", "snipcheck-output"])
    for event in display_events(outcome.result, normalizers):
        classes = ["output"]
        classes += ["stream", "snipcheck-stdout"] if event.stream == "stdout" else ["stderr", "snipcheck-stderr"]
        if event.kind != "text":
            classes.append(f"snipcheck-{event.kind}")
        block = nodes.literal_block(event.text, event.text, classes=classes)
        block["language"] = ansi.language(event.text)
        panel += block
    result = outcome.result
    if result.truncated_bytes:
        panel += _note(
            f"输出超过上限 {result.output_limit:,} 字节，其余 {result.truncated_bytes:,} 字节未显示。",
            "snipcheck-truncated",
        )
    if result.timed_out:
        panel += _note(f"超时：运行 {result.duration:.1f} 秒后整个进程组被终止；上面是终止前打印的部分。", "snipcheck-killed")
    elif result.signal:
        panel += _note(f"进程被信号 {result.signal} 终止。", "snipcheck-killed")
    if not result.events and not result.truncated_bytes:
        panel += _note("（没有输出）", "snipcheck-empty")
    return panel


def stamp(outcome: Outcome, snippet: Snippet) -> nodes.paragraph:
    """The environment stamp under an output panel."""
    assert outcome.result is not None
    r = outcome.result
    parts = [r.stamp.label(), f"{r.duration:.2f} s"]
    if r.exit_status not in (0, None):
        parts.append(f"exit {r.exit_status}")
    if outcome.origin == "cache":
        parts.append("缓存的运行结果")
    para = nodes.paragraph(classes=["snipcheck-stamp"])
    para += nodes.Text(" · ".join(parts) + " · ")
    para += nodes.literal(snippet.path, snippet.path)
    return para


def stated_panel(stated: str, label: str, stated_env: str | None) -> nodes.container:
    """A stated output that this build did not verify, labelled as such."""
    panel = nodes.container(classes=["cell_output", "snipcheck-output", "snipcheck-unverified"])
    panel += _note(label, "snipcheck-unverified-label")
    if stated.strip():
        block = nodes.literal_block(stated, stated, classes=["output", "stream", "snipcheck-stdout"])
        block["language"] = "none"
        panel += block
        if stated_env:
            panel += _note(f"陈述的输出来自：{stated_env}", "snipcheck-stated-env")
    else:
        panel += _note("尚无陈述的输出：还没有在满足要求的环境里记录过。", "snipcheck-empty")
    return panel


def badges(missing: tuple[str, ...]) -> nodes.container:
    """One sphinx-design badge per missing requirement."""
    box = nodes.container(classes=["snipcheck-badges"])
    para = nodes.paragraph()
    for req in missing:
        para += nodes.inline(f"需要 {req}", f"需要 {req}", classes=["sd-badge", "sd-bg-warning", "sd-bg-text-warning"])
        para += nodes.Text(" ")
    para += nodes.inline("本次构建未运行", "本次构建未运行", classes=["sd-badge", "sd-bg-secondary", "sd-bg-text-secondary"])
    box += para
    return box


def problem_box(problems: tuple[str, ...], diff: str) -> nodes.Element:
    """Shown on the page when a snippet drifted or failed (the build warns, and fails, too)."""
    box = nodes.caution()
    title = "构建发现的问题（构建同样报警并失败）"
    box += nodes.paragraph(title, title, classes=["snipcheck-problem-title"])
    for problem in problems:
        box += nodes.paragraph(problem, problem)
    if diff:
        block = nodes.literal_block(diff, diff, classes=["snipcheck-diff"])
        block["language"] = "diff"
        box += block
    return box


def belief_label(verdict: bool | None, verified: bool) -> list[nodes.Node]:
    """The verdict badge of a refuted-claim block, and a note when this build did not run it."""
    if verdict is None:
        text, color = "常见说法 · 代码没有给出结论", "warning"
    elif verdict:
        text, color = "常见说法 · 实测成立", "success"
    else:
        text, color = "常见说法 · 实测推翻", "danger"
    head = nodes.paragraph(classes=["snipcheck-belief-head"])
    head += nodes.inline(text, text, classes=["sd-badge", f"sd-bg-{color}", f"sd-bg-text-{color}"])
    out: list[nodes.Node] = [head]
    if not verified:
        note = "（本次构建没有运行这个代码片段：结论依据正文陈述的输出。）"
        out.append(nodes.paragraph(note, note, classes=["snipcheck-note"]))
    return out


def claim(value: str, snippet_id: str, record: object, here: bool) -> nodes.Element:
    """A cited value: a link to the snippet when it is on this page, titled
    with whether this build checked it (``record`` is the claim's record)."""
    verified = bool(getattr(record, "verified", False))
    classes = ["snipcheck-claim"] + ([] if verified else ["snipcheck-claim-unverified"])
    if here:
        title = (
            f"取自代码片段 {snippet_id} 的实际输出，本次构建已核对"
            if verified
            else f"取自代码片段 {snippet_id} 陈述的输出，未经本次构建验证"
        )
        node: nodes.Element = nodes.reference(value, value, refuri=f"#{nodes.make_id('snippet-' + snippet_id)}", reftitle=title)
    else:
        node = nodes.inline(value, value)
    node["classes"] += classes
    return node


def error_box(message: str) -> nodes.Element:
    box = nodes.error()
    box += nodes.paragraph(message, message)
    return box


def _note(text: str, cls: str) -> nodes.paragraph:
    return nodes.paragraph(text, text, classes=["snipcheck-note", cls])
