"""The ``snippet-code`` directive: a snippet's code written in the page itself.

MyST::

    ```{snippet-code} tutorial/first-tensor
    import torch
    print(torch.ones(2))
    ```

    ```{snippet} tutorial/first-tensor
    tensor([1., 1.])
    ```

reStructuredText::

    .. snippet-code:: tutorial/first-tensor

       import torch
       print(torch.ones(2))

    .. snippet:: tutorial/first-tensor

       tensor([1., 1.])

Like sphinx.ext.doctest's ``testcode`` and ``testoutput``: the code block
shows and holds the code, the ``snippet`` directive with the same id (later
in the same page) states its output and is where it is checked, recorded
and accepted.

A **cell** holds both in one directive: the code, a line ``--- output ---``
(:data:`snipcheck.sources.placement.OUTPUT_SEPARATOR`), then the stated output::

    ```{snippet-code} tutorial/first-tensor
    import torch
    print(torch.ones(2))
    --- output ---
    tensor([1., 1.])
    ```

The page shows the code, then the output panel, exactly as for the pair;
``record`` and ``accept`` rewrite the lines after the separator and never
the code.  A separator line inside a string or comment of the code is code
(:mod:`snipcheck.sources.cellsplit`); option ``separator`` names another separator
line, taken as written wherever it stands.  A cell takes the ``snippet`` directive's options too
(``stated-env``, ``chain``); a chain of cells is a notebook written in
Markdown or reStructuredText, one directive a cell.  The body is exactly what a snippet file would hold, tag block
included (``# /// snipcheck`` … ``# ///``), and runs in a fresh process as
``<id>.py``, with the same isolation, cache, claims and record as a file.
Option ``language``: ``python`` (default) or ``rust``.  Long snippets, and
snippets shared between pages, stay files under the snippets directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from snipcheck.sources import cellsplit
from snipcheck.sources.placement import OUTPUT_SEPARATOR, CodeBlock
from snipcheck.sources.snippets import SUFFIXES, SnippetError, check_id, from_page
from snipcheck.sphinxext import index, render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.directive import SnippetDirective, is_myst, missing_id, place
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx

LANGUAGES = tuple(SUFFIXES.values())


class SnippetCodeDirective(SphinxDirective):
    """The code of snippet ``<id>``, written in the page."""

    # optional, so a missing id gets snipcheck's warning, not docutils' "1 argument(s) required"
    required_arguments = 0
    optional_arguments = 1
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "language": lambda arg: directives.choice(arg, LANGUAGES),
        "separator": directives.unchanged_required,  # a cell's separator line, taken as written
        **SnippetDirective.option_spec,  # a cell's output options
    }

    def run(self) -> list[nodes.Node]:
        if not self.arguments:
            warn("tag", missing_id(self), self.get_location())
            return []
        snippet_id = self.arguments[0]
        docname = self.env.docname
        try:
            check_id(snippet_id)
        except SnippetError as exc:
            warn("tag", exc.message, self.get_location())
            return []
        if index.code_in(self.env, docname, snippet_id) is not None:
            message = f"snippet {snippet_id!r} has its code written twice in this page; keep one"
            warn("missing", message, self.get_location())
            path, line = self.get_source_info()
            index.page_problems(self.env).setdefault(docname, []).append((str(path or self.env.doc2path(docname)), line, message))
            return []
        content = list(self.content)
        language = self.options.get("language", "python")
        found = cellsplit.split(content, language, self.options.get("separator"))
        separator = found.index
        code = content if separator is None else content[:separator]
        problem = self._no_separator(snippet_id, found) if separator is None else None
        if problem is not None:
            warn("tag", problem, self.get_location())
            return [render.error_box(problem)]
        output_options = sorted(set(SnippetDirective.option_spec) & set(self.options))
        if separator is None and output_options:
            warn(
                "tag",
                f"snippet {snippet_id!r}: option {output_options[0]!r} belongs to its output, but this "
                f"snippet-code states none: add a line {OUTPUT_SEPARATOR!r} after the code and the output after "
                "it (a cell), or move the option to the snippet directive that places it",
                self.get_location(),
            )
        source, line = self.get_source_info()
        if is_myst(self):  # content offsets count from the fence
            body_line = (line or self.lineno) + 1 + self.content_offset
        else:
            body_line = self.content.items[0][1] + 1 if self.content else (line or self.lineno) + 1
        block = CodeBlock(
            snippet_id,
            docname,
            str(Path(source).resolve()) if source else str(self.env.doc2path(docname)),
            line or self.lineno,
            body_line,
            language,
            "\n".join(code),
        )
        index.code_blocks(self.env).setdefault(docname, []).append(block)
        state = state_mod.for_env(self.env)
        try:
            snippet = from_page(block, state.root)
        except SnippetError as exc:
            if separator is not None:  # a cell: placing it warns once and shows the error where its output goes
                return place(self, snippet_id, code_lines=separator + 1)
            warn("tag", f"snippet {snippet_id!r}: {exc.message} (line {exc.line})", self.get_location())
            return [render.error_box(f"snippet {snippet_id}: {exc.message}")]
        node = nodes.container(classes=["snipcheck-snippet", "snipcheck-inline-code"])
        node["ids"].append(nodes.make_id(f"snippet-code-{snippet_id}"))
        node += render.code_block(snippet)
        if separator is None:
            return [node]
        return [node, *place(self, snippet_id, code_lines=separator + 1)]  # a cell: its output, placed here


    def _no_separator(self, snippet_id: str, found: cellsplit.CellSplit) -> str | None:
        """Why a cell meant to state its output has no separator line (the
        ``separator`` option names a line that is not there, or every
        ``--- output ---`` line lies inside a string or comment the code
        never closes), or ``None``: a plain code block."""
        named = self.options.get("separator")
        if named is not None:
            message = (
                f"snippet {snippet_id!r}: option separator names the line {named.strip()!r}, but no line of the "
                "cell reads as it; put that line after the code, or drop the option"
            )
        elif found.opened is not None and found.inside is not None:
            first = self.content_offset_line(found.opened)
            at = self.content_offset_line(found.inside)
            message = (
                f"snippet {snippet_id!r}: the line {OUTPUT_SEPARATOR!r} (line {at}) lies inside a string or comment "
                f"that the code opens at line {first} and never closes, so it is read as code and the cell states "
                "no output; close the string before it, or, when the code is meant to end unclosed (a cell that "
                f"shows a SyntaxError), name the separator with the option separator (:separator: {OUTPUT_SEPARATOR}), "
                "which is then taken as written"
            )
        else:
            return None
        return message

    def content_offset_line(self, index: int) -> int:
        """The 1-based source line of content line ``index``."""
        _source, line = self.get_source_info()
        if is_myst(self):
            return (line or self.lineno) + 1 + self.content_offset + index
        return self.content.items[index][1] + 1 if self.content else (line or self.lineno) + 1


def unplaced(app: Sphinx, env: Any) -> None:
    """Warn about code written in a page that no ``snippet`` directive places (``env-check-consistency``)."""
    placed = {(p.docname, p.snippet_id) for p in index.all_placements(env)}
    for docname in sorted(index.code_blocks(env)):
        for block in index.code_blocks(env)[docname]:
            if (docname, block.snippet_id) not in placed:
                warn(
                    "missing",
                    f"snippet {block.snippet_id!r}: its code is written here, but no snippet directive in this "
                    "page places its output, so it never runs; add one after the code",
                    (docname, block.line),
                )


def register(app: Sphinx) -> None:
    app.add_directive("snippet-code", SnippetCodeDirective)
    app.connect("env-check-consistency", unplaced)
