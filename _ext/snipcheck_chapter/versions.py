"""The ``snipcheck-versions`` directive: a page generated from verify reports.

Sub-extension ``snipcheck_chapter.versions``.

Usage (MyST)::

    ```{snipcheck-versions} _reports/*.json
    ```

The argument is a glob relative to the page's directory.  Each matching file
is a committed ``snipcheck verify`` JSON report (one per torch release
verified).  The directive renders, without a word typed by hand: a summary
table (one row per release: whether the chapter holds, first, then the counts), the
environment-wide differences of each release, and for every snippet that
differs on any release, its status per release with the diff.  Each report is
a dependency of the page, so committing a new report rebuilds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from packaging.version import InvalidVersion, Version
from snipcheck.report import read as report_file
from snipcheck.report.display import visible
from snipcheck.report.verify import Report, SnippetReport
from snipcheck.sphinxext import index
from snipcheck.sphinxext.collector import watch_glob
from snipcheck.sphinxext.log import warn
from snipcheck.sphinxext.panel import captured_block
from snipcheck.sphinxext.render import diff_block
from sphinx.util.docutils import SphinxDirective

from snipcheck_chapter import i18n, metadata
from snipcheck_chapter.i18n import _

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def status_label(status: str) -> str:
    """A snippet's status in a report, in the page's language."""
    labels = {
        "unchanged": _("unchanged"),
        "drifted": _("output differs"),
        "failing": _("run fails"),
        "not-run": _("not run"),
        "error": _("cannot be loaded"),
    }
    return labels.get(status, status)


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
                report = report_file.read(path)
            except report_file.ReportError as exc:
                warn("config", f"{exc}; it is left out of the versions page", self.get_location())
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
        cuda_on_cpu = [report for _path, report in reports if _cuda_build_on_cpu(report)]
        if cuda_on_cpu:
            out.append(self._cuda_on_cpu(cuda_on_cpu))
        for _path, report in reports:
            stale = self._staleness(report, current)
            if stale:
                out.append(stale)
        for _path, report in reports:
            if report.environment_wide:
                out.append(self._env_wide(report))
        out.extend(self._per_snippet(reports))
        out.extend(self._masked(reports))
        return out

    def _masked(self, reports: list[tuple[Path, Report]]) -> list[nodes.Node]:
        """Differences the compare-only normalizers absorbed, shown for honesty."""
        out: list[nodes.Node] = []
        for _path, r in reports:
            masked = [s for s in r.snippets if s.masked and s.masked_diff]
            if not masked:
                continue
            title = _("{environment}: differences the normalizers absorbed (not drift)").format(
                environment=r.stamp.label()
            )
            box = nodes.container(classes=["snipcheck-versions-masked"])
            box += nodes.rubric(title, title)
            for s in masked:
                line = _("{id} ({where}): the same after the normalizers {names}. The raw difference:").format(
                    id=s.id, where=f"{s.doc}:{s.line}", names=", ".join(s.masked)
                )
                box += nodes.paragraph(line, line)
                box += diff_block(s.masked_diff, [])
            out.append(box)
        return out

    def _summary(self, reports: list[tuple[Path, Report]], current: dict[str, str]) -> nodes.Element:
        # The verdict first: on a phone the table scrolls sideways, and the
        # verdict is what a reader looks for; the counts say how it was reached.
        headers = [
            _("Verdict"),
            _("Environment verified"),
            _("Coverage"),
            _("Unchanged"),
            _("Output differs"),
            _("Run fails"),
            _("Not run"),
        ]
        rows: list[list[nodes.Node | str]] = []
        for path, r in reports:
            c = r.counts()
            covered = sum(1 for s in r.snippets if s.id in current)
            if not r.holds:
                verdict = _("drift")
            elif covered == len(current):
                verdict = _("the chapter holds")
            else:
                verdict = _("holds where covered")
            environment = nodes.paragraph()
            environment += nodes.Text(visible(f"{r.stamp.label()} · {r.stamp.platform}"))  # as a report says
            environment += nodes.Text(" ")
            environment += nodes.literal(path.name, path.name, classes=["snipcheck-versions-file"])
            rows.append(
                [
                    verdict,
                    environment,
                    f"{covered}/{len(current)}",
                    str(c["unchanged"] + c["env-wide-only"]),
                    str(c["drifted"]),
                    str(c["failing"] + c["error"]),
                    str(c["not-run"]),
                ]
            )
        return _table(headers, rows)

    def _cuda_on_cpu(self, reports: list[Report]) -> nodes.Element:
        """One sentence: CUDA builds of torch ran on a machine without a GPU."""
        builds = _(", ").join(f"torch {r.stamp.torch}" for r in reports)
        if len(reports) == 1:
            text = _(
                "{builds} is a CUDA build of torch (the +cu suffix), but the machine that verified it had no GPU: "
                "every snippet ran on the CPU, and the snippets that need cuda did not run there either."
            )
        else:
            text = _(
                "{builds} are CUDA builds of torch (the +cu suffix), but the machine that verified them had no GPU: "
                "every snippet ran on the CPU, and the snippets that need cuda did not run there either."
            )
        text = text.format(builds=builds)
        return nodes.paragraph(text, text, classes=["snipcheck-versions-cuda-on-cpu"])

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
            shown = _(", ").join(missing[:5]) + (_(", …") if len(missing) > 5 else "")
            parts.append(_("{count} snippets are not in the report ({ids})").format(count=len(missing), ids=shown))
        if edited:
            parts.append(_("{count} snippets have a different stated output now").format(count=len(edited)))
        if gone:
            parts.append(_("{count} are no longer in the chapter").format(count=len(gone)))
        version = (report.stamp.torch or "").split("+")[0]
        text = _(
            "The report of {environment} is older than the chapter: {parts}. Its verdict applies only to what it "
            "covers; verify again: "
        ).format(environment=report.stamp.label(), parts=_("; ").join(parts))
        command = f"nox -s verify -- {version}"
        box = nodes.caution()
        box += nodes.paragraph("", "", nodes.Text(text), nodes.literal(command, command))  # literal: no smart dashes
        return box

    def _env_wide(self, report: Report) -> nodes.Element:
        section = nodes.container(classes=["snipcheck-versions-envwide"])
        title = _("{environment}: differences every snippet shares (listed once)").format(
            environment=report.stamp.label()
        )
        section += nodes.rubric(title, title)
        text = "\n".join(f"{c.sign} {c.text}" for c in report.environment_wide)
        section += captured_block(visible(text), [], "diff")
        return section

    def _per_snippet(self, reports: list[tuple[Path, Report]]) -> list[nodes.Node]:
        by_id: dict[str, dict[str, SnippetReport]] = {}
        for _path, r in reports:
            for s in r.snippets:
                if s.status not in ("unchanged", "not-run") and not s.env_wide_only:
                    by_id.setdefault(s.id, {})[r.stamp.label()] = s
        if not by_id:
            text = _(
                "On every version verified, every snippet's output is the one the chapter states "
                "(apart from the shared differences)."
            )
            return [nodes.paragraph(text, text)]
        title = _("Snippets whose output differs from the chapter")
        out: list[nodes.Node] = [nodes.rubric(title, title)]
        for snippet_id in sorted(by_id):
            box = nodes.container(classes=["snipcheck-versions-snippet"])
            box += nodes.rubric(snippet_id, snippet_id)
            for label, s in by_id[snippet_id].items():
                line = _("{environment}: {status} ({where})").format(
                    environment=label, status=status_label(s.status), where=f"{s.doc}:{s.line}"
                )
                if s.missing:
                    line += _(", lacks {missing}").format(missing=_(", ").join(s.missing))
                box += nodes.paragraph(line, line)
                if s.diff:
                    box += diff_block(s.diff, [])
            out.append(box)
        return out


def _cuda_build_on_cpu(report: Report) -> bool:
    return "+cu" in (report.stamp.torch or "") and not report.stamp.cuda


def _table(headers: list[str], rows: list[list[nodes.Node | str]]) -> nodes.Element:
    """A table; wide ones scroll sideways inside their box (CSS), and header
    cells never wrap."""
    table = nodes.table(classes=["snipcheck-versions-table"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _header in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    head += _row(list(headers))
    body = nodes.tbody()
    group += body
    for row in rows:
        body += _row(row)
    return table


def _row(cells: list[nodes.Node | str]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(cell, cell)
        row += entry
    return row


def setup(app: Sphinx) -> dict[str, Any]:
    """Sub-extension ``snipcheck_chapter.versions``."""
    app.setup_extension("snipcheck")
    i18n.register(app)
    app.add_directive("snipcheck-versions", VersionsDirective)
    return metadata()
