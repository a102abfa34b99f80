"""The ``claim`` role and the ``refuted-claim`` directive.

``{claim}`VALUE <snippet-id>``` renders VALUE in running text, linked to the
snippet when it is on the same page.  Once every snippet of the build is
judged (:func:`resolve`, from ``env-updated``), the build checks that VALUE
appears in that snippet's actual output (its stated output when this build
cannot run it).  A value that does not is a ``snipcheck.drift`` warning at
the role's line.

``{refuted-claim} <snippet-id>`` places a snippet like ``{snippet}`` (its body
is the stated output) under a quoted belief (option ``:belief:``, default the
snippet's ``refutes`` tag) and checks the snippet's own verdict line (see
:mod:`snipcheck.judge.claims`).  Option ``:holds:`` marks a belief the chapter says
is true.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxRole

from snipcheck.judge.claims import belief_problem, claim_problem, parse_claim
from snipcheck.judge.compare import terminal_text
from snipcheck.sources.snippets import SnippetError
from snipcheck.sphinxext import dependencies, index, render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import SnippetRecord, location, records, replace
from snipcheck.sphinxext.directive import SnippetDirective
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from docutils.nodes import Node, system_message
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


@dataclass(frozen=True)
class Claim:
    """One cited value.

    :param status: ``pending`` (read, not checked yet), ``ok``, ``drift``,
        ``unverified`` (no output to check it against) or ``error``.
    :param verified: checked against an output this build produced.
    """

    line: int
    snippet_id: str
    value: str
    status: str = "pending"
    verified: bool = False


def claims(env: BuildEnvironment) -> dict[str, list[Claim]]:
    """``env.snipcheck_claims``: docname → the page's claims."""
    if not hasattr(env, "snipcheck_claims"):
        env.snipcheck_claims = {}  # type: ignore[attr-defined]
    return env.snipcheck_claims  # type: ignore[attr-defined,no-any-return]


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
        state = state_mod.for_env(self.env)
        status = "pending"
        try:
            snippet = state.load(snippet_id, index.code_in(self.env, self.env.docname, snippet_id))
        except SnippetError as exc:
            if exc.line:  # a broken tag block: say so here
                at = f" ({exc.path}:{exc.line})"
                warn("tag", f"claim {value!r} cites snippet {snippet_id!r}, which cannot be loaded: {exc.message}{at}",
                     location)  # fmt: skip
                status = "error"
            # else: not found yet; code written later in the page counts (checked once the page is read)
        else:
            self.env.note_dependency(snippet.abspath)
            dependencies.note(self.env, snippet)
        claims(self.env).setdefault(self.env.docname, []).append(Claim(line, snippet_id, value, status))
        node = render.claim_ref(value, value, value=value, snippet_id=snippet_id, line=line)
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
        serial = len(index.placements(self.env)[self.env.docname]) - 1
        belief = self.options.get("belief")
        if not belief:
            try:
                belief = state_mod.for_env(self.env).load(self.arguments[0]).tags.refutes
            except SnippetError:
                return placed  # the snippet directive already warned
        if not belief:
            warn(
                "tag",
                f"refuted claim {self.arguments[0]!r}: give the belief with :belief: or the snippet's refutes tag",
                self.get_location(),
            )
        box = nodes.container(classes=["snipcheck-belief"])
        box += render.belief_head(serial=serial)
        if belief:
            quote = nodes.block_quote()
            quote += nodes.paragraph(belief, belief)
            box += quote
        box += placed
        return [box]


def cited_output(app: Sphinx, env: BuildEnvironment, snippet_id: str) -> tuple[str | None, bool]:
    """The text a claim about ``snippet_id`` is checked against.

    :return: ``(text, verified)``: the actual terminal text and ``True`` when
        this build has its run; its stated output and ``False`` when this
        build cannot run it; ``(None, False)`` when neither exists.
    """
    state = state_mod.get(app)
    stated = None
    for recs in records(env).values():
        for rec in recs:
            if rec.snippet_id != snippet_id:
                continue
            if rec.outcome is not None and rec.outcome.result is not None:
                return terminal_text(rec.outcome.result, state.settings.normalizers), True
            stated = rec.stated if stated is None else stated
    if stated is not None:
        return stated, False
    if state.execute:  # cited, but placed on no page: run it for the claim
        try:
            outcome = state.executor.outcome(state.load(snippet_id))
        except SnippetError:
            return None, False
        if outcome.result is not None:
            return terminal_text(outcome.result, state.settings.normalizers), True
    return None, False


def resolve(app: Sphinx, env: BuildEnvironment) -> None:
    """Check refuted-claim verdicts and claims of the pages read now (after the snippets)."""
    state = state_mod.get(app)
    for docname in sorted(state.read_now):
        for placement, rec in _beliefs(env, docname):
            _check_belief(env, placement.options, rec)
        page = claims(env).get(docname, [])
        for i, claim in enumerate(page):
            if claim.status == "pending":
                page[i] = _check_claim(app, env, docname, claim)


def _beliefs(env: BuildEnvironment, docname: str) -> list[tuple[Any, SnippetRecord]]:
    by_serial = {r.serial: r for r in records(env).get(docname, [])}
    found = []
    for serial, placement in enumerate(index.placements(env).get(docname, [])):
        rec = by_serial.get(serial)
        if placement.directive == "refuted-claim" and rec is not None and rec.status not in ("error", "pending"):
            found.append((placement, rec))
    return found


def _check_belief(env: BuildEnvironment, options: tuple[tuple[str, str], ...], rec: SnippetRecord) -> None:
    state = state_mod.for_env(env)
    if rec.outcome is not None and rec.outcome.result is not None:
        output = terminal_text(rec.outcome.result, state.settings.normalizers)
    else:
        output = rec.stated
    problem = belief_problem(output, holds="holds" in dict(options))
    if problem is None:
        return
    subtype, sentence = problem
    warn(subtype, f"refuted claim {rec.snippet_id!r}: {sentence}", location(env, rec))
    replace(env, dataclasses.replace(rec, status="drift", problems=rec.problems + (sentence,)))


def _check_claim(app: Sphinx, env: BuildEnvironment, docname: str, claim: Claim) -> Claim:
    output, verified = cited_output(app, env, claim.snippet_id)
    if output is None:
        state = state_mod.get(app)
        try:
            state.load(claim.snippet_id, index.code_in(env, docname, claim.snippet_id))
        except SnippetError as exc:
            warn(
                "missing",
                f"claim {claim.value!r} cites snippet {claim.snippet_id!r}, which cannot be loaded: {exc.message}",
                (docname, claim.line),
            )
            return dataclasses.replace(claim, status="error")
        return dataclasses.replace(claim, status="unverified")
    problem = claim_problem(claim.value, output)
    if problem is None:
        return dataclasses.replace(claim, status="ok", verified=verified)
    excerpt = "\n".join(output.splitlines()[:12])
    warn(
        "drift",
        f"claim {claim.value!r} from snippet {claim.snippet_id!r}: {problem}; the prose must cite what the "
        f"snippet prints. Its {'actual' if verified else 'stated'} output begins:\n{excerpt}",
        (docname, claim.line),
    )
    return dataclasses.replace(claim, status="drift", verified=verified)


def register(app: Sphinx) -> None:
    app.add_role("claim", ClaimRole())
    app.add_directive("refuted-claim", RefutedClaimDirective)
