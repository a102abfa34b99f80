"""Render judged snippets, refuted-claim verdicts and claims into the page.

A post-transform, so it runs when each page is written, for every builder,
after :mod:`.results` has judged every snippet: it replaces the placeholders
the directives left (:class:`~.render.snippet_output`,
:class:`~.render.belief_head`, :class:`~.render.claim_ref`) with what the
records of the page say.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from snipcheck.judge.claims import belief_verdict
from snipcheck.judge.compare import outcome_problem, terminal_text
from snipcheck.sphinxext import figure_nodes as figures
from snipcheck.sphinxext import index, panel, render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.claim_role import claims
from snipcheck.sphinxext.collector import SnippetRecord, records
from snipcheck.sphinxext.i18n import _
from snipcheck.sphinxext.results import judge_page

if TYPE_CHECKING:
    from sphinx.application import Sphinx


class FillSnippets(SphinxPostTransform):
    """Replace the placeholders of the page being written."""

    default_priority = 3  # before the reading aids (5), which count the output lines

    def run(self, **kwargs: object) -> None:
        self.fill(self.env.docname)

    def fill(self, docname: str) -> None:
        """Fill the placeholders of ``self.document``, the doctree of
        ``docname`` (the page being written, or another page's doctree that
        :mod:`snipcheck_chapter.reading_list` measures as it will be written)."""
        judge_page(self.env, docname)
        by_serial = {r.serial: r for r in records(self.env).get(docname, [])}
        for node in list(self.document.findall(render.snippet_output)):
            rec = by_serial.get(node["serial"])
            node.replace_self(self.panel(rec) if rec is not None else [])
        for head in list(self.document.findall(render.belief_head)):
            head.replace_self(self.belief(by_serial.get(head["serial"])))
        page_claims = {(c.line, c.snippet_id, c.value): c for c in claims(self.env).get(docname, [])}
        here = {p.snippet_id for p in index.placements(self.env).get(docname, [])}
        for ref in list(self.document.findall(render.claim_ref)):
            claim = page_claims.get((ref["line"], ref["snippet_id"], ref["value"]))
            ref.replace_self(render.claim(ref["value"], ref["snippet_id"], claim, ref["snippet_id"] in here))

    def panel(self, rec: SnippetRecord) -> list[nodes.Node]:
        state = state_mod.for_env(self.env)
        if rec.status in ("off", "pending"):
            label = _("Stated output (this build did not execute code)")
            return [render.stated_panel(rec.stated, label, rec.stated_env)]
        if rec.status in ("not-run", "stopped"):
            stopped_at = rec.outcome.stopped_at if rec.outcome is not None else ""
            if rec.status == "stopped":
                label = _(
                    "Stated output · not verified by this build: its chain stopped at {id}, which did not run "
                    "or did not end as its tags expect"
                ).format(id=stopped_at)
            else:
                label = _("Stated output · not verified by this build (this build lacks: {missing})").format(
                    missing=_(", ").join(rec.missing)
                )
            return [render.badges(rec.missing, stopped_at), render.stated_panel(rec.stated, label, rec.stated_env)]
        outcome = rec.outcome
        if outcome is None or outcome.result is None:
            return [render.error_box(f"snippet {rec.snippet_id}: " + "; ".join(rec.problems))]
        out: list[nodes.Node] = []
        if rec.status != "ok":
            assert rec.snippet is not None
            ended_wrong = rec.status == "timeout" or outcome_problem(rec.snippet.tags, outcome.result) is not None
            out.append(render.problem_box(rec.status, rec.stated, rec.diff, outcome.result, ended_wrong))
        out.append(
            panel.output_panel(
                outcome,
                state.settings.normalizers,
                lambda number, figure: figures.figure_node(figure, number, rec.snippet_id),
            )
        )
        assert rec.snippet is not None
        first = not rec.snippet.earlier  # a chain's later cells ran in the process its first cell's stamp names
        out.append(render.stamp(outcome, rec.snippet, state.settings.show_durations, where=rec.where, environment=first,
                                cell=self._script_line(rec)))  # fmt: skip
        return out

    def _script_line(self, rec: SnippetRecord) -> str:
        """``<script>.py:<line>`` (relative to the snippets directory) of a
        ``snippet-script`` cell's code, ``""`` for any other snippet."""
        code = index.code_in(self.env, rec.docname, rec.snippet_id)
        if code is None or not code.source.endswith(".py"):
            return ""
        snippets_dir = state_mod.for_env(self.env).settings.snippets_dir
        try:
            shown = Path(code.source).relative_to(snippets_dir.resolve()).as_posix()
        except ValueError:
            shown = code.source
        return f"{shown}:{code.body_line}"

    def belief(self, rec: SnippetRecord | None) -> list[nodes.Node]:
        if rec is None:
            return []
        state = state_mod.for_env(self.env)
        verified = rec.outcome is not None and rec.outcome.result is not None
        if verified:
            assert rec.outcome is not None and rec.outcome.result is not None
            output = terminal_text(rec.outcome.result, state.settings.normalizers)
        else:
            output = rec.stated
        return render.belief_label(belief_verdict(output), verified)


def register(app: Sphinx) -> None:
    app.add_node(render.snippet_output)
    app.add_node(render.belief_head)
    app.add_node(render.claim_ref)
    app.add_post_transform(FillSnippets)
