"""The ``snippet`` directive: place a snippet in a page and state its output.

MyST usage::

    ```{snippet} inplace/leaf-add
    a.add_(1): same storage? True
    ```

reStructuredText::

    .. snippet:: inplace/leaf-add

       a.add_(1): same storage? True

The argument is the snippet id; the body is the stated output.  While the
page is read, the directive records its placement in the index
(:mod:`.index`), loads the snippet, starts its run (in a serial build; a
parallel build starts every run once all pages are read), and leaves a
placeholder.  Once every page is read (``env-updated``) :mod:`.results`
waits for the outcomes, judges them and warns; :mod:`.fill` renders the
output panels when each page is written.

Option ``stated-env``: the environment the stated output was recorded in, for
snippets this build may not be able to run (the record command writes it).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from snipcheck.run import requirements
from snipcheck.sources.chains import Broken, attach
from snipcheck.sources.snippets import SnippetError
from snipcheck.sphinxext import chain, dependencies, index, render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import SnippetRecord, add
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


def is_myst(directive: SphinxDirective) -> bool:
    """Whether ``directive`` sits in a MyST page (myst-parser or myst-nb)."""
    return type(directive.state).__module__.startswith("myst_parser")


def missing_id(directive: SphinxDirective) -> str:
    """The warning for a snipcheck directive written without its id, with an
    example in the markup of its own page."""
    name = directive.name
    return (
        f"{name} directive without a snippet id: write the id after the directive name, e.g. "
        + (f"```{{{name}}} my/example" if is_myst(directive) else f".. {name}:: my/example")
    )


class SnippetDirective(SphinxDirective):
    """Place snippet ``<id>``; the body is its stated output."""

    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = False
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "stated-env": directives.unchanged,
        "chain": directives.unchanged,
        "escapes": directives.flag,  # the body states its output in the escaped form (snipcheck.sources.escapes)
    }

    def run(self) -> list[nodes.Node]:
        if not self.arguments:
            warn("tag", self._missing_id(), self.get_location())
            return []
        return place(self, self.arguments[0])

    def _missing_id(self) -> str:
        return missing_id(self)

    def _is_myst(self) -> bool:
        return is_myst(self)


def place(directive: SphinxDirective, snippet_id: str, code_lines: int = 0) -> list[nodes.Node]:
    """Place ``snippet_id`` where ``directive`` stands: record its placement,
    load and link the snippet, start its run, and return the output node (a
    placeholder that :mod:`.fill` renders when the page is written).

    Called from the ``snippet`` directive's ``run``, and from a cell's
    (:mod:`.code`), with ``code_lines`` its content lines before the stated
    output.  Bad input warns at the directive's line and gives an error box
    in its place; the build carries on.
    """
    state = state_mod.for_env(directive.env)
    placement = index.capture(directive, snippet_id, code_lines)
    serial = len(index.placements(directive.env)[directive.env.docname]) - 1
    docname = directive.env.docname
    where = _where(directive.env.srcdir, placement.source, placement.line)
    base = SnippetRecord(
        docname,
        placement.line,
        snippet_id,
        "pending",
        "none",
        serial=serial,
        where=where,
        stated=placement.stated,
        stated_env=directive.options.get("stated-env"),
    )
    node = render.snippet_node(None, snippet_id)
    code = index.code_in(directive.env, docname, snippet_id)
    try:
        snippet = state.load(snippet_id, code)
    except SnippetError as exc:
        if exc.path:
            directive.env.note_dependency(str(state.root / exc.path))
        at = f" ({exc.path}:{exc.line})" if exc.path and exc.line else (f" ({exc.path})" if exc.path else "")
        subtype = "tag" if exc.line else "missing"
        message = exc.message if snippet_id in exc.message else f"snippet {snippet_id!r}: {exc.message}"
        warn(subtype, message + at, directive.get_location())
        add(directive.env, _replace(base, status="error", problems=(exc.message,)))
        node += render.error_box(f"snippet {snippet_id}{at}: {exc.message}")
        return [node]
    linked = chain.link(directive.env, docname, serial, snippet)
    if isinstance(linked, Broken):
        warn("exec", f"snippet {snippet_id!r} is not run: {linked.message}", directive.get_location())
        add(directive.env, _replace(base, status="error", problems=(linked.message,)))
        node += render.error_box(f"snippet {snippet_id}: {linked.message}")
        return [node]
    snippet = linked
    directive.env.note_dependency(snippet.abspath)
    dependencies.note(directive.env, snippet)  # helpers, declared data files and variables
    for req in snippet.tags.requires:
        try:
            requirements.check(req, state.settings.provides, state.settings.requirements)
        except requirements.RequirementError as exc:
            warn("tag", f"snippet {snippet_id!r} ({snippet.path}): {exc}", directive.get_location())
    if code is None:  # code written in the page is shown where it is written
        node += render.code_block(snippet)
    node += render.pending_output(serial)
    add(directive.env, _replace(base, snippet=snippet))
    if state.execute and state.in_main_process and state.planned:
        state.executor.submit(snippet)  # runs while the rest of the pages are read
    return [node]


def _where(srcdir: str | Path, source: str, line: int) -> str:
    """``path:line`` of the directive, relative to the source directory when inside it."""
    try:
        shown = Path(source).resolve().relative_to(srcdir).as_posix()
    except ValueError:
        shown = source
    return f"{shown}:{line}"


def _replace(record: SnippetRecord, **changes: Any) -> SnippetRecord:
    return dataclasses.replace(record, **changes)


def prefetch(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Start the runs of the pages about to be read (``env-before-read-docs``).

    The placements come from the index of the previous build (Sphinx purges a
    page only when it reads it again), so a rebuild starts its runs before
    parsing begins, and the executor can plan: a handful of runs (one edited
    snippet in a live preview) go to plain subprocesses instead of starting
    the fork server; directives then start the runs of placements that are
    new.  A cold build has no previous index: with more than one page, its
    directives start their runs as they are read (results in the cache at
    once, runs once ``fork_min_runs`` of them wait: see
    :meth:`snipcheck.engine.execute.Executor.hold_runs`); a one-page build starts
    them once the page is read, when the executor can plan with the whole list.  Pages read now record their placements anew;
    this is a head start, never the list of what runs.
    """
    state = state_mod.get(app)
    state.read_now = frozenset(docnames)
    known = index.placements(env)
    if not state.execute:
        return
    if not known:
        # A cold build: nothing is known yet.  With more than one page to
        # read, runs start as the directives are read (the fork server starts
        # with the first), so they overlap with Sphinx's own reading and
        # writing instead of waiting for it; a one-page build waits and plans.
        if len(docnames) > 1:
            state.planned = True
            state.executor.hold_runs()
        return
    items = []
    for docname in sorted(docnames):
        for placement in known.get(docname, []):
            try:
                code = index.code_in(env, docname, placement.snippet_id)
                loaded = state.load(placement.snippet_id, code)
            except SnippetError:
                loaded = None  # reported by the directive, at its line
            items.append((docname, placement.chain, loaded))
    snippets = [s for s in attach(items) if s is not None and not isinstance(s, Broken)]
    state.executor.plan(snippets)
    state.planned = True
    for snippet in snippets:
        state.executor.submit(snippet)


def register(app: Sphinx) -> None:
    app.add_directive("snippet", SnippetDirective)
    app.connect("env-before-read-docs", prefetch)
