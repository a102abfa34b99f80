"""The ``snippet`` directive: place a snippet in a page and state its output.

MyST usage::

    ```{snippet} inplace/leaf-add
    a.add_(1): same storage? True
    ```

The argument is the snippet id; the body is the stated output.  While the
document is read, the directive loads the snippet, gets its outcome from the
executor (already started for the whole page by :func:`prefetch` on
``source-read``), compares actual with stated output, warns on drift at the
directive's line, records the result for the environment box and the report,
and returns the rendered nodes.

Option ``stated-env``: the environment the stated output was recorded in, for
snippets this build may not be able to run (the record command writes it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from .. import docsource, requirements
from ..cache import write_atomic
from ..compare import Verdict, judge
from ..model import Outcome, Snippet
from ..snippets import SnippetError
from . import render
from . import state as state_mod
from .collector import SnippetRecord, add
from .i18n import _
from .log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

_DIFF_LINES = 24
_DIFF_WIDTH = 300


class SnippetDirective(SphinxDirective):
    """Place snippet ``<id>``; the body is its stated output."""

    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = False
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {"stated-env": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        state = state_mod.for_env(self.env)
        if not self.arguments:
            warn(
                "tag",
                f"{self.name} directive without a snippet id: write the id on the opening line, "
                f"e.g. ```{{{self.name}}} inplace/my-example",
                (self.env.docname, self.lineno),
            )
            return []
        snippet_id = self.arguments[0]
        stated = "\n".join(self.content)
        docname = self.env.docname
        location = (docname, self.lineno)
        try:
            snippet = state.load(snippet_id)
        except SnippetError as exc:
            if exc.path:
                self.env.note_dependency(str(state.root / exc.path))
            where = f" ({exc.path}:{exc.line})" if exc.path and exc.line else (f" ({exc.path})" if exc.path else "")
            subtype = "tag" if exc.line else "missing"
            message = exc.message if snippet_id in exc.message else f"snippet {snippet_id!r}: {exc.message}"
            warn(subtype, message + where, location)
            add(self.env, SnippetRecord(docname, self.lineno, snippet_id, "error", "none", problems=(exc.message,)))
            node = render.snippet_node(None, snippet_id)
            node += render.error_box(f"snippet {snippet_id}{where}: {exc.message}")
            return [node]
        self.env.note_dependency(snippet.abspath)
        for helper, _kind in snippet.helpers:  # a helper module it may import changes its output too
            self.env.note_dependency(str(state.root / helper))
        for req in snippet.tags.requires:
            try:
                requirements.check(req, state.settings.provides)
            except requirements.RequirementError as exc:
                warn("tag", f"snippet {snippet_id!r} ({snippet.path}): {exc}", location)
        node = render.snippet_node(snippet, snippet_id)
        if not state.execute:
            add(self.env, SnippetRecord(docname, self.lineno, snippet_id, "off", "none"))
            label = _("Stated output (this build did not execute code)")
            node += render.stated_panel(stated, label, self.options.get("stated-env"))
            return [node]
        outcome = state.executor.outcome(snippet)
        if outcome.origin == "error":
            message = f"snippet {snippet_id!r}: " + "; ".join(outcome.notes) + "; check snipcheck_python"
            warn("exec", message, location)
            add(self.env, SnippetRecord(docname, self.lineno, snippet_id, "error", "none", problems=outcome.notes))
            node += render.error_box(message)
            return [node]
        for note in outcome.notes:
            warn("cache", f"snippet {snippet_id!r}: {note}", location)
        if outcome.result is None:
            return [self._not_run(node, snippet, outcome, stated)]
        verdict = judge(
            snippet.tags,
            outcome.result,
            stated,
            state.settings.normalizers,
            stated_label=f"stated ({self.env.doc2path(docname, False)}:{self.lineno})",
            actual_label=f"actual ({outcome.result.stamp.label()})",
        )
        self._report(snippet, verdict, location)
        add(
            self.env,
            SnippetRecord(
                docname,
                self.lineno,
                snippet_id,
                verdict.status,
                outcome.origin,
                duration=outcome.result.duration,
                problems=verdict.problems,
                diff=verdict.diff,
                stamp=outcome.result.stamp.label(),
            ),
        )
        if not verdict.ok:
            node += render.problem_box(verdict, stated, outcome.result)
        node += render.output_panel(outcome, state.settings.normalizers)
        node += render.stamp(outcome, snippet)
        return [node]

    def _not_run(self, node: nodes.container, snippet: Snippet, outcome: Outcome, stated: str) -> nodes.Node:
        add(
            self.env,
            SnippetRecord(self.env.docname, self.lineno, snippet.id, "not-run", "not-run", missing=outcome.missing),
        )
        node += render.badges(outcome.missing)
        label = _("Stated output · not verified by this build (this build lacks: {missing})").format(
            missing=_(", ").join(outcome.missing)
        )
        node += render.stated_panel(stated, label, self.options.get("stated-env"))
        return node

    def _report(self, snippet: Snippet, verdict: Verdict, location: tuple[str, int]) -> None:
        if verdict.ok:
            return
        state = state_mod.for_env(self.env)
        subtype = verdict.status if verdict.status in ("drift", "exec", "timeout") else "drift"
        message = f"snippet {snippet.id!r}: " + "; ".join(verdict.problems)
        if verdict.diff:
            path = state.settings.report_dir / "diffs" / (re.sub(r"[^\w.-]", "__", snippet.id) + ".diff")
            try:
                write_atomic(path, (verdict.diff + "\n").encode("utf-8"))
                where = f"\nfull diff: {_shown(path, state.root)}"
            except OSError:
                where = ""
            lines = [_clip(line) for line in verdict.diff.splitlines()]
            short = "\n".join(lines[:_DIFF_LINES])
            if len(lines) > _DIFF_LINES:
                short += f"\n... ({len(lines) - _DIFF_LINES} more diff lines)"
            message += f":\n{short}{where}"
            if not verdict.ended_wrong:
                message += f"\nif the new output is right, record it: nox -s record -- {snippet.id}"
        warn(subtype, message, location)


def _clip(line: str, width: int = _DIFF_WIDTH) -> str:
    """A diff line cut to ``width`` characters for the console (the full diff file has it whole)."""
    return line if len(line) <= width else f"{line[:width]}... ({len(line) - width:,} more characters)"


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def prefetch(app: Sphinx, docname: str, source: list[str]) -> None:
    """Start every snippet of a page as soon as Sphinx reads it (``source-read``).

    The runs proceed in parallel while the page is parsed; each directive then
    waits only for its own result.  Problems are left for the directive to
    report at its own line.
    """
    state = state_mod.get(app)
    if not state.execute:
        return
    for placement in docsource.scan_text(source[0], Path(docname)):
        try:
            snippet = state.load(placement.snippet_id)
        except SnippetError:
            continue
        state.executor.submit(snippet)


def prefetch_all(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Start every snippet of every page about to be read (``env-before-read-docs``).

    In a serial build the runs overlap with parsing from the first page on.
    In a parallel build (``-j``) this process runs them all before Sphinx forks
    its readers, which then find every result in the cache: one warm fork
    server for the build instead of one per reader.
    """
    state = state_mod.get(app)
    state.read_now = frozenset(docnames)
    if not state.execute:
        return
    snippets = []
    for docname in sorted(docnames):
        path = Path(env.doc2path(docname))
        try:
            placements = docsource.scan(path)
        except (OSError, UnicodeDecodeError):
            continue  # Sphinx reports unreadable sources itself
        for placement in placements:
            try:
                snippets.append(state.load(placement.snippet_id))
            except SnippetError:
                continue  # reported by the directive, at its line
    state.executor.plan(snippets)
    futures = [state.executor.submit(snippet) for snippet in snippets]
    if app.parallel > 1 and futures:
        for future in futures:
            future.exception()  # wait; failures are reported by the readers


def register(app: Sphinx) -> None:
    app.add_directive("snippet", SnippetDirective)
    app.connect("source-read", prefetch)
    app.connect("env-before-read-docs", prefetch_all)
