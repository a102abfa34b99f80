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
(:data:`snipcheck.placement.OUTPUT_SEPARATOR`), then the stated output::

    ```{snippet-code} tutorial/first-tensor
    import torch
    print(torch.ones(2))
    --- output ---
    tensor([1., 1.])
    ```

The page shows the code, then the output panel, exactly as for the pair;
``record`` and ``accept`` rewrite the lines after the separator and never
the code.  A cell takes the ``snippet`` directive's options too
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

from ..placement import OUTPUT_SEPARATOR, CodeBlock, split_cell
from ..snippets import SUFFIXES, SnippetError, check_id, from_page
from . import index, render
from . import state as state_mod
from .directive import SnippetDirective, is_myst, missing_id, place
from .log import warn

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
            warn("missing", f"snippet {snippet_id!r} has its code written twice in this page; keep one", self.get_location())
            return []
        content = list(self.content)
        separator = split_cell(content)
        code = content if separator is None else content[:separator]
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
            self.options.get("language", "python"),
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
