"""Show a verify report: in the terminal, and as a standalone HTML page.

The HTML page is rendered with Jinja2 with autoescaping on: every stated and
actual output, diff and message is text, never markup; and every control
character in what it writes is shown as an escape
(:func:`snipcheck.report.display.visible`), never raw.

Pure core: standard library, Jinja2, :mod:`snipcheck.report.verify`,
:mod:`snipcheck.report.display`.
"""

from __future__ import annotations

from collections.abc import Callable

import jinja2

from snipcheck.report.display import visible
from snipcheck.report.verify import Report

_LABEL = {
    "unchanged": "unchanged",
    "drifted": "drifted",
    "failing": "FAILING",
    "not-run": "not run",
    "error": "ERROR",
}


def terminal(report: Report, *, color: bool = False, problems_only: bool = False) -> str:
    """The report as terminal text: one line per snippet, diffs indented,
    the environment-wide changes once, then the counts.

    :param problems_only: only what does not hold (``verify -qq``): the
        drifted, failing and broken snippets with their diffs and problems,
        and the environment-wide changes; no heading, no other snippet, no
        counts.  Empty when the report holds.
    """

    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if color else text

    out = [
        f"snipcheck verify on {report.stamp.label()} · {report.stamp.platform}"
        + (f"  (stated outputs are for {report.reference})" if report.reference else "")
    ]
    if problems_only:
        out = []
    elif report.shard != (1, 1):
        out.append(f"shard {report.shard[0]}/{report.shard[1]}: {len(report.snippets)} of {report.total} snippets")
    width = max((len(s.id) for s in report.snippets), default=10)
    wide = {(c.sign, c.text) for c in report.environment_wide}
    for s in report.snippets:
        if problems_only and s.status in ("unchanged", "not-run"):
            continue
        label = _LABEL[s.status]
        code = {"unchanged": "32", "drifted": "33", "failing": "31", "error": "31", "not-run": "36"}[s.status]
        extra = ""
        if s.status == "not-run":
            extra = f"  (needs {', '.join(s.missing)})"
        elif s.env_wide_only:
            extra = "  (only the environment-wide change below)"
        elif s.masked:
            extra = f"  (equal after {', '.join(s.masked)})"
        out.append(f"  {paint(f'{label:<9}', code)}  {s.id:<{width}}  {s.doc}:{s.line}{extra}")
        for problem in s.problems:
            if s.status != "drifted" or not s.diff:  # a drift without a diff: a figure's
                out.append(f"      {problem}")
        if s.diff and not s.env_wide_only:
            lines, hidden = own_diff(s.shown_diff, wide)
            out.extend("      " + _paint_diff(line, paint) for line in lines)
            if hidden:
                out.append(f"      (and {hidden} environment-wide line(s), listed once below)")
    if report.environment_wide:
        out.append("environment-wide differences (shown once, not per snippet):")
        for change in report.environment_wide:
            out.append(f"  {change.sign} {change.text}")
            out.append(f"      in {len(change.snippets)} snippets: {', '.join(change.snippets[:6])}" + (" ..." if len(change.snippets) > 6 else ""))
    if problems_only:
        return "\n".join(out)
    c = report.counts()
    summary = (
        f"{c['unchanged']} unchanged, {c['drifted']} drifted, {c['failing']} failing, "
        f"{c['not-run']} not run, {c['error']} error"
    )
    if c["env-wide-only"]:
        summary += f"; {c['env-wide-only']} differ only by the environment-wide change"
    scope = "the project" if report.shard == (1, 1) else f"shard {report.shard[0]}/{report.shard[1]}"
    out.append((f"{scope} holds: " if report.holds else f"DRIFT in {scope}: ") + summary)
    return "\n".join(out)


def own_diff(diff: str, wide: set[tuple[str, str]]) -> tuple[list[str], int]:
    """A snippet's diff lines without the environment-wide ones.

    :return: the remaining lines and how many were left out.
    """
    lines, hidden = [], 0
    for line in diff.split("\n"):  # the diff's own lines: a form feed or \u2028 inside one is no line end
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")) and (line[0], line[1:]) in wide:
            hidden += 1
        else:
            lines.append(line)
    return lines, hidden


def _paint_diff(line: str, paint: Callable[[str, str], str]) -> str:
    if line.startswith(("+++", "---")):
        return paint(line, "1")
    if line.startswith("+"):
        return paint(line, "32")
    if line.startswith("-"):
        return paint(line, "31")
    if line.startswith("@@"):
        return paint(line, "36")
    return line


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>snipcheck verify: {{ r.stamp.label() }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #1f2328; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .25em .6em; border-bottom: 1px solid #d0d7de; }
.unchanged { color: #1a7f37; } .drifted { color: #9a6700; } .failing, .error { color: #cf222e; font-weight: 600; } .not-run { color: #0969da; }
pre { background: #f6f8fa; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.add { color: #1a7f37; } .del { color: #cf222e; } .hunk { color: #8250df; }
</style></head><body>
<h1>snipcheck verify</h1>
<p>Runs on <strong>{{ r.stamp.label() }} · {{ r.stamp.platform }}</strong>{% if r.reference %}; stated outputs are for <strong>{{ r.reference }}</strong>{% endif %}.
{% if r.shard != (1, 1) %}Shard {{ r.shard[0] }}/{{ r.shard[1] }} ({{ r.snippets|length }} of {{ r.total }} snippets).{% endif %}</p>
<p><strong>{{ "The project holds on this version." if r.holds else "Drift: the project does not hold on this version." }}</strong>
{% for k, v in counts.items() %}{{ v }} {{ k }}{{ ", " if not loop.last else "" }}{% endfor %}</p>
{% if r.environment_wide %}<h2>Environment-wide differences</h2>
<p>These lines differ in many snippets alike; they are listed once here.</p>
<ul>{% for c in r.environment_wide %}<li><code class="{{ 'add' if c.sign == '+' else 'del' }}">{{ c.sign }} {{ c.text }}</code> — in {{ c.snippets|length }} snippets</li>{% endfor %}</ul>{% endif %}
<h2>Snippets</h2>
<table><tr><th>status</th><th>snippet</th><th>stated in</th><th>note</th></tr>
{% for s in r.snippets %}<tr><td class="{{ s.status }}">{{ s.status }}</td><td><a href="#{{ s.id }}">{{ s.id }}</a></td><td>{{ s.doc }}:{{ s.line }}</td>
<td>{% if s.missing %}needs {{ s.missing|join(", ") }}{% elif s.env_wide_only %}only the environment-wide change{% elif s.masked %}equal after {{ s.masked|join(", ") }}{% else %}{{ s.problems|join("; ") }}{% endif %}</td></tr>
{% endfor %}</table>
{% for s in r.snippets if (s.diff and not s.env_wide_only) or s.status in ("failing", "error") %}
<h3 id="{{ s.id }}">{{ s.id }} <small class="{{ s.status }}">{{ s.status }}</small></h3>
{% for p in s.problems %}<p>{{ p }}</p>{% endfor %}
{% if s.diff %}{% set own = own_diff(s.diff, wide) %}<pre>{% for line in own[0] %}<span class="{{ diffclass(line) }}">{{ line }}</span>
{% endfor %}</pre>{% if own[1] %}<p>(and {{ own[1] }} environment-wide line(s), listed once above)</p>{% endif %}{% endif %}
{% endfor %}
</body></html>
"""


def html(report: Report) -> str:
    """The report as a standalone, self-contained HTML page (no external requests)."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, finalize=_finalize)
    template = env.from_string(_TEMPLATE)
    wide = {(c.sign, c.text) for c in report.environment_wide}
    return template.render(r=report, counts=report.counts(), diffclass=_diff_class, own_diff=own_diff, wide=wide)


def _finalize(value: object) -> object:
    """What the template writes of a value: text with its control characters made visible."""
    return visible(value) if isinstance(value, str) else value


def _diff_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return ""
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
