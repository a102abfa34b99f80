"""The ``snipcheck-versions`` directive: a page generated from verify reports.

Usage (MyST)::

    ```{snipcheck-versions} _reports/*.json
    ```

The argument is a glob relative to the page's directory.  Each matching file
is a committed ``snipcheck verify`` JSON report (one per torch release
verified).  The directive renders, without a word typed by hand: a summary
table (one row per release: counts and whether the chapter holds), the
environment-wide differences of each release, and for every snippet that
differs on any release, its status per release with the diff.  Each report is
a dependency of the page, so committing a new report rebuilds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from packaging.version import InvalidVersion, Version
from sphinx.util.docutils import SphinxDirective

from ..verify import Report, SnippetReport
from . import index
from .collector import watch_glob
from .log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx

_STATUS_ZH = {
    "unchanged": "一致",
    "drifted": "输出不同",
    "failing": "运行失败",
    "not-run": "未运行",
    "error": "无法加载",
}


def _sort_key(report: Report) -> tuple[int, Version | str]:
    try:
        return (0, Version(report.stamp.torch or "0"))
    except InvalidVersion:
        return (1, report.stamp.torch or "")


class VersionsDirective(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        base = Path(self.env.doc2path(self.env.docname)).parent
        pattern = str(base / self.arguments[0])
        paths = sorted(base.glob(self.arguments[0]))
        watch_glob(self.env, pattern, paths)
        reports: list[tuple[Path, Report]] = []
        for path in paths:
            self.env.note_dependency(str(path))
            try:
                report = Report.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                warn("config", f"cannot read verify report {path.name}: {exc}; it is left out", self.get_location())
                continue
            if report.shard != (1, 1):
                continue  # one slice of a run: merge the shards (nox -s merge) and publish the whole
            reports.append((path, report))
        if not reports:
            warn("config", f"no whole-chapter verify reports match {self.arguments[0]!r}", self.get_location())
            return []
        reports.sort(key=lambda item: _sort_key(item[1]))
        current = {p.snippet_id: p.stated for p in index.all_placements(self.env)}
        out: list[nodes.Node] = [self._summary(reports, current)]
        for _, report in reports:
            stale = self._staleness(report, current)
            if stale:
                out.append(stale)
        for path, report in reports:
            if report.environment_wide:
                out.append(self._env_wide(report))
        out.extend(self._per_snippet(reports))
        out.extend(self._masked(reports))
        return out

    def _masked(self, reports: list[tuple[Path, Report]]) -> list[nodes.Node]:
        """Differences the compare-only normalizers absorbed, shown for honesty."""
        out: list[nodes.Node] = []
        for _, r in reports:
            masked = [s for s in r.snippets if s.masked and s.masked_diff]
            if not masked:
                continue
            title = f"{r.stamp.label()}：被规整掉、不算漂移的差异"
            box = nodes.container(classes=["snipcheck-versions-masked"])
            box += nodes.rubric(title, title)
            for s in masked:
                line = f"{s.id}（{s.doc}:{s.line}）：经规整 {', '.join(s.masked)} 后一致。原始差异："
                box += nodes.paragraph(line, line)
                block = nodes.literal_block(s.masked_diff, s.masked_diff)
                block["language"] = "diff"
                box += block
            out.append(box)
        return out

    def _summary(self, reports: list[tuple[Path, Report]], current: dict[str, str]) -> nodes.table:
        headers = ["验证的环境", "报告文件", "覆盖", "一致", "输出不同", "运行失败", "未运行", "结论"]
        rows = []
        for path, r in reports:
            c = r.counts()
            covered = sum(1 for s in r.snippets if s.id in current)
            verdict = ("本章成立" if covered == len(current) else "所覆盖的部分成立") if r.holds else "有漂移"
            rows.append(
                [
                    f"{r.stamp.label()} · {r.stamp.platform}",
                    path.name,
                    f"{covered}/{len(current)}",
                    str(c["unchanged"] + c["env-wide-only"]),
                    str(c["drifted"]),
                    str(c["failing"] + c["error"]),
                    str(c["not-run"]),
                    verdict,
                ]
            )
        return _table(headers, rows)

    def _staleness(self, report: Report, current: dict[str, str]) -> nodes.Element | None:
        """A note when the chapter changed after the report was made."""
        ids = {s.id for s in report.snippets}
        missing = sorted(set(current) - ids)
        edited = sorted(s.id for s in report.snippets if s.id in current and current[s.id] != s.stated)
        gone = sorted(ids - set(current))
        if not (missing or edited or gone):
            return None
        parts = []
        if missing:
            parts.append(f"{len(missing)} 个代码片段不在报告里（{'、'.join(missing[:5])}{' 等' if len(missing) > 5 else ''}）")
        if edited:
            parts.append(f"{len(edited)} 个代码片段陈述的输出已改")
        if gone:
            parts.append(f"{len(gone)} 个已不在正文中")
        version = (report.stamp.torch or "").split("+")[0]
        text = f"{report.stamp.label()} 的报告早于当前正文：" + "；".join(parts) + "。它的结论只适用于报告覆盖的部分；重新验证："
        command = f"nox -s verify -- {version}"
        box = nodes.caution()
        box += nodes.paragraph("", "", nodes.Text(text), nodes.literal(command, command))  # literal: no smart dashes
        return box

    def _env_wide(self, report: Report) -> nodes.Element:
        section = nodes.container(classes=["snipcheck-versions-envwide"])
        title = f"{report.stamp.label()}：所有代码片段共有的差异（只列一次）"
        section += nodes.rubric(title, title)
        text = "\n".join(f"{c.sign} {c.text}" for c in report.environment_wide)
        block = nodes.literal_block(text, text)
        block["language"] = "diff"
        section += block
        return section

    def _per_snippet(self, reports: list[tuple[Path, Report]]) -> list[nodes.Node]:
        by_id: dict[str, dict[str, SnippetReport]] = {}
        for _, r in reports:
            for s in r.snippets:
                if s.status not in ("unchanged", "not-run") and not s.env_wide_only:
                    by_id.setdefault(s.id, {})[r.stamp.label()] = s
        if not by_id:
            para = nodes.paragraph("", "所有验证过的版本上，每个代码片段的输出都与正文陈述一致（共有差异除外）。")
            return [para]
        title = "输出与正文不同的代码片段"
        out: list[nodes.Node] = [nodes.rubric(title, title)]
        for snippet_id in sorted(by_id):
            box = nodes.container(classes=["snipcheck-versions-snippet"])
            box += nodes.rubric(snippet_id, snippet_id)
            for label, s in by_id[snippet_id].items():
                status = _STATUS_ZH.get(s.status, s.status)
                line = f"{label}：{status}（{s.doc}:{s.line}）"
                if s.missing:
                    line += "，缺少 " + "、".join(s.missing)
                box += nodes.paragraph(line, line)
                if s.diff:
                    block = nodes.literal_block(s.diff, s.diff)
                    block["language"] = "diff"
                    box += block
            out.append(box)
        return out


def _table(headers: list[str], rows: list[list[str]]) -> nodes.table:
    table = nodes.table(classes=["snipcheck-versions-table"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    head += _row(headers)
    body = nodes.tbody()
    group += body
    for row in rows:
        body += _row(row)
    return table


def _row(cells: list[str]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += nodes.paragraph(cell, cell)
        row += entry
    return row


def register(app: Sphinx) -> None:
    app.add_directive("snipcheck-versions", VersionsDirective)
