"""The ``claim`` role and the ``refuted-claim`` directive.

``{claim}`VALUE <snippet-id>``` renders VALUE in running text, linked to the
snippet when it is on the same page, and checks while the page is read that
VALUE appears in that snippet's actual output (its stated output when this
build cannot run it).  A value that does not is a ``snipcheck.drift`` warning
at the role's line.

``{refuted-claim} <snippet-id>`` places a snippet like ``{snippet}`` (its body
is the stated output) under a quoted belief (option ``:belief:``, default the
snippet's ``refutes`` tag) and checks the snippet's own verdict line (see
:mod:`snipcheck.claims`).  Option ``:holds:`` marks a belief the chapter says
is true.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxRole

from .. import docsource
from ..claims import belief_problem, belief_verdict, claim_problem, parse_claim
from ..compare import terminal_text
from ..snippets import SnippetError
from . import state as state_mod
from .collector import mark_problem
from .directive import SnippetDirective
from .i18n import _
from .log import warn

if TYPE_CHECKING:
    from docutils.nodes import Node, system_message
    from sphinx.application import Sphinx


def placements_here(env) -> dict[str, docsource.Placement]:  # type: ignore[no-untyped-def]
    """Snippet placements of the document being read, by snippet id (scanned once)."""
    key = "snipcheck_placements"  # temp_data is per document being read
    if key not in env.temp_data:
        source = Path(env.doc2path(env.docname))
        env.temp_data[key] = {p.snippet_id: p for p in docsource.scan(source)} if source.is_file() else {}
    return env.temp_data[key]  # type: ignore[no-any-return]


def snippet_output(env, snippet_id: str) -> tuple[str | None, bool]:  # type: ignore[no-untyped-def]
    """The text a claim about ``snippet_id`` is checked against.

    :return: ``(text, verified)``: the actual terminal text and ``True`` when
        this build ran it; the stated output on this page and ``False`` when
        it cannot run it; ``(None, False)`` when neither exists.
    :raises SnippetError: if the snippet cannot be loaded.
    """
    state = state_mod.for_env(env)
    snippet = state.load(snippet_id)
    env.note_dependency(snippet.abspath)
    for helper, _kind in snippet.helpers:
        env.note_dependency(str(state.root / helper))
    if state.execute:
        outcome = state.executor.outcome(snippet)
        if outcome.result is not None:
            return terminal_text(outcome.result, state.settings.normalizers), True
    placement = placements_here(env).get(snippet_id)
    if placement is None:
        placement = _placement_anywhere(env, snippet_id)
        if placement is not None:
            env.note_dependency(str(placement.path))  # its stated output is what the claim cites
    return (placement.body, False) if placement is not None else (None, False)


def _placement_anywhere(env, snippet_id: str) -> docsource.Placement | None:  # type: ignore[no-untyped-def]
    """The placement of ``snippet_id`` on any page of the project (scanned once per process)."""
    state = state_mod.for_env(env)
    if state.placements is None:
        state.placements = {p.snippet_id: p for p in docsource.scan_tree(Path(env.srcdir))}
    return state.placements.get(snippet_id)


class ClaimRole(SphinxRole):
    """``{claim}`VALUE <snippet-id>``: a value cited from a snippet's output."""

    def run(self) -> tuple[list[Node], list[system_message]]:
        line = self._exact_line()
        location = (self.env.docname, line)
        parsed = parse_claim(self.text)
        if parsed is None:
            warn("tag", f"malformed claim {self.text!r}: write {{claim}}`VALUE <snippet-id>`", location)
            return [nodes.inline(self.text, self.text)], []
        value, snippet_id = parsed
        docname = self.env.docname
        try:
            output, verified = snippet_output(self.env, snippet_id)
        except SnippetError as exc:
            where = f" ({exc.path}:{exc.line})" if exc.path and exc.line else ""
            warn(
                "tag" if exc.line else "missing",
                f"claim {value!r} cites snippet {snippet_id!r}, which cannot be loaded: {exc.message}{where}",
                location,
            )
            return [nodes.inline(value, value)], []
        status = "ok"
        if output is None:
            status = "unverified"
        else:
            problem = claim_problem(value, output)
            if problem:
                status = "drift"
                excerpt = "\n".join(output.splitlines()[:12])
                warn(
                    "drift",
                    f"claim {value!r} from snippet {snippet_id!r}: {problem}; the prose must cite what the "
                    f"snippet prints. Its {'actual' if verified else 'stated'} output begins:\n{excerpt}",
                    location,
                )
        claims(self.env).setdefault(docname, []).append((line, snippet_id, value, status, verified))
        classes = ["snipcheck-claim"] + ([] if verified else ["snipcheck-claim-unverified"])
        if snippet_id in placements_here(self.env):
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
        return [node], []


    def _exact_line(self) -> int:
        """The source line of this role.  MyST reports the line where the
        paragraph starts; find the role's own text from there on."""
        key = "snipcheck_source_lines"  # temp_data is per document being read
        if key not in self.env.temp_data:
            path = Path(self.env.doc2path(self.env.docname))
            self.env.temp_data[key] = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        lines: list[str] = self.env.temp_data[key]
        start = max(self.lineno - 1, 0)
        needle = f"`{self.text}`"  # MyST's rawtext is ":claim:`...`", not what the source says
        for i in range(start, min(start + 200, len(lines))):
            if needle in lines[i]:
                return i + 1
        return self.lineno


def claims(env) -> dict[str, list[tuple[int, str, str, str, bool]]]:  # type: ignore[no-untyped-def]
    """``env.snipcheck_claims``: docname → (line, snippet id, value, status, verified)."""
    if not hasattr(env, "snipcheck_claims"):
        env.snipcheck_claims = {}
    return env.snipcheck_claims  # type: ignore[no-any-return]


class RefutedClaimDirective(SnippetDirective):
    """A quoted belief and the snippet that tests it."""

    option_spec: ClassVar[dict[str, Any]] = {
        **SnippetDirective.option_spec,
        "belief": directives.unchanged,
        "holds": directives.flag,
    }

    def run(self) -> list[Node]:
        placed = super().run()
        if not self.arguments:
            return placed  # the snippet directive has warned
        holds = "holds" in self.options
        snippet_id = self.arguments[0]
        belief = self.options.get("belief")
        try:
            snippet = state_mod.for_env(self.env).load(snippet_id)
            belief = belief or snippet.tags.refutes
            output, verified = snippet_output(self.env, snippet_id)
        except SnippetError:
            return placed  # the snippet directive already warned
        if not belief:
            warn("tag", f"refuted claim {snippet_id!r}: give the belief with :belief: or the snippet's refutes tag", self.get_location())
        problem = belief_problem(output or "", holds=holds) if output is not None else None
        if problem:
            subtype, sentence = problem
            warn(subtype, f"refuted claim {snippet_id!r}: {sentence}", self.get_location())
        verdict = belief_verdict(output or "")
        if verdict is None:
            label, color = _("Common belief · the code gives no verdict"), "warning"
        elif verdict:
            label, color = _("Common belief · holds when tested"), "success"
        else:
            label, color = _("Common belief · refuted when tested"), "danger"
        box = nodes.container(classes=["snipcheck-belief"])
        head = nodes.paragraph(classes=["snipcheck-belief-head"])
        head += nodes.inline(label, label, classes=["sd-badge", f"sd-bg-{color}", f"sd-bg-text-{color}"])
        box += head
        if belief:
            quote = nodes.block_quote()
            quote += nodes.paragraph(belief, belief)
            box += quote
        if not verified:
            note = _("(This build did not run this snippet: the verdict rests on the stated output.)")
            box += nodes.paragraph(note, note, classes=["snipcheck-note"])
        box += placed
        if problem:
            mark_problem(self.env, self.lineno, problem[1])
        return [box]


def register(app: Sphinx) -> None:
    app.add_role("claim", ClaimRole())
    app.add_directive("refuted-claim", RefutedClaimDirective)
