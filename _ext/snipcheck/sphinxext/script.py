"""The ``snippet-script`` directive: a tutorial script, placed whole, run as a chain.

MyST::

    ````{snippet-script} tutorials/tensors
    ```{snippet} tutorials/tensors/1
    ```
    ```{snippet} tutorials/tensors/create
    tensor([1., 1.])
    ```
    ````

reStructuredText::

    .. snippet-script:: tutorials/tensors

       .. snippet:: tutorials/tensors/1

       .. snippet:: tutorials/tensors/create

          tensor([1., 1.])

The argument names ``<snippets dir>/<id>.py``, a script in jupytext's percent
format or sphinx-gallery's (see :mod:`snipcheck.sources.scripts`).  Its prose is
rendered in the page's own markup (MyST or reStructuredText, headings
included); its code cells run one after the other in one process, as the
cells of chain ``<id>`` (:mod:`snipcheck.sources.chains`), each captured, stated and
compared on its own.

A cell's stated output is the body of a ``snippet`` directive in this
directive's body, with id ``<script id>/<cell name>``: one per code cell, in
the script's order, so that the outputs sit in the page, where ``record``,
``accept`` and ``review`` write them and a diff shows them.  A body that does
not hold exactly those directives runs nothing and warns once, saying what to
add or remove; ``snipcheck record`` then fills empty bodies from real runs.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from snipcheck.sources import gallery_comments, scripts
from snipcheck.sources.placement import CodeBlock
from snipcheck.sources.snippets import SnippetError, check_id, from_page
from snipcheck.sphinxext import index, render, script_check, script_links, script_prose
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import SnippetRecord, add
from snipcheck.sphinxext.directive import is_myst, missing_id
from snipcheck.sphinxext.i18n import _
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: jupytext cell tags that change how a cell runs (as nbclient and myst-nb read them).
SKIP, RAISES = "skip-execution", "raises-exception"
#: myst-nb's cell tags that leave a part of a cell off the page (``_`` spelled too):
#: the cell still runs and its output is still compared.
REMOVE_CELL, REMOVE_INPUT, REMOVE_OUTPUT = ("remove-cell", "remove_cell"), ("remove-input", "remove_input"), (
    "remove-output", "remove_output")  # fmt: skip

_RST_SNIPPET = re.compile(r"^\s*\.\.\s+snippet::\s+(\S+)")
_MYST_SNIPPET = re.compile(r"^\s*(?:>\s*)*(?:`{3,}|~{3,}|:{3,})\{snippet\}\s+(\S+)")


class ScriptDirective(SphinxDirective):
    """Place the tutorial script ``<id>``; the body holds its cells' stated outputs."""

    required_arguments = 0
    optional_arguments = 1
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        if not self.arguments:
            warn("tag", missing_id(self), self.get_location())
            return []
        script_id = self.arguments[0]
        try:
            check_id(script_id)
        except SnippetError as exc:
            warn("tag", exc.message, self.get_location())
            return []
        state = state_mod.for_env(self.env)
        path = state.settings.snippets_dir / f"{script_id}.py"
        shown = _shown(path, state.root)
        self.env.note_dependency(str(path))
        try:
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
            script = scripts.read(text)
        except FileNotFoundError:
            return self._fail("missing", f"snippet-script {script_id!r}: no script {shown}; create it, or fix the id")
        except (OSError, UnicodeDecodeError) as exc:
            return self._fail("missing", f"snippet-script {script_id!r}: cannot read {shown}: {exc}")
        except scripts.ScriptError as exc:
            return self._fail("tag", f"snippet-script {script_id!r} ({shown}:{exc.line}): {exc.message}")
        for line, note in script.notes:
            warn("tag", f"snippet-script {script_id!r}: {note}", f"{path}:{line}")
        cells = list(script.cells)
        code = [c for c in cells if c.kind == "code"]
        if not code:
            return self._fail("tag", f"snippet-script {script_id!r}: {shown} holds no code cell")
        runnable = [c for c in code if SKIP not in c.tags]
        ids = [f"{script_id}/{c.name}" for c in runnable]
        problem = self._body_problem(ids, shown, script_id) if ids or self.content else ""
        if problem:
            return self._fail("tag", f"snippet-script {script_id!r}: {problem}")
        docname = self.env.docname
        line = self.get_source_info()[1] or self.lineno
        loaded = {}
        for cell in code:
            cell_id = f"{script_id}/{cell.name}"
            if index.code_in(self.env, docname, cell_id) is not None:
                return self._fail("missing", f"snippet-script {script_id!r} is placed twice in this page; keep one")
            block = CodeBlock(
                cell_id, docname, str(path.resolve()), line, cell.line, "python", cell.text, script_cell=(*cell.display, "folder"),
                expect="exception" if RAISES in cell.tags else "", modules=True,
            )  # fmt: skip
            try:
                loaded[cell_id] = from_page(block, state.root)
            except SnippetError as exc:
                return self._fail("tag", f"snippet-script {script_id!r}, cell {cell.name!r} ({shown}): {exc.message}")
            if SKIP not in cell.tags:
                index.code_blocks(self.env).setdefault(docname, []).append(block)
        outputs = self._parse_body(script_id, ids) if ids else {}
        made: dict[int, list[nodes.Node]] = {}
        for at, cell in enumerate(cells):
            if cell.kind != "code":
                continue
            cell_id = f"{script_id}/{cell.name}"
            snippet = loaded[cell_id]
            if script.flavor == "gallery":
                snippet = dataclasses.replace(snippet, code=gallery_comments.hide_in_code(snippet.code)[0])
            code_node = nodes.container(classes=["snipcheck-snippet", "snipcheck-inline-code"])
            code_node["ids"].append(nodes.make_id(f"snippet-code-{cell_id}"))
            code_node["snipcheck_cell"] = cell_id
            code_node += render.code_block(snippet)
            if SKIP in cell.tags:
                code_node += nodes.paragraph("", _("not run: its skip-execution tag says so"),
                                             classes=["snipcheck-stamp", "no-search"])  # fmt: skip
            shown_code = [] if _tagged(cell, REMOVE_CELL + REMOVE_INPUT) else [code_node]
            shown_outputs = [] if _tagged(cell, REMOVE_CELL + REMOVE_OUTPUT) else outputs.get(cell_id, [])
            made[at] = [*shown_code, *shown_outputs]
        try:
            rendered = script_prose.render(self, cells, str(path), made)
        except script_prose.ProseError as exc:
            return self._fail("tag", f"snippet-script {script_id!r} ({shown}:{exc.line}): {exc.message}")
        script_links.rebase(rendered, path, Path(self.env.doc2path(docname)))
        rendered = [script_links.target(self.state.document, script_id), *rendered]
        where = f"{_shown(Path(self.get_source_info()[0] or ''), Path(self.env.srcdir))}:{line}"
        cells_shown = tuple(
            (f"{script_id}/{c.name}", c.line, not _tagged(c, REMOVE_CELL + REMOVE_INPUT),
             SKIP not in c.tags and not _tagged(c, REMOVE_CELL + REMOVE_OUTPUT))
            for c in code
        )  # fmt: skip
        script_check.expect(self.env, script_check.Placed(script_id, str(path), where, line, cells_shown))
        return rendered

    def _fail(self, subtype: str, message: str) -> list[nodes.Node]:
        """Warn, and record the script as an ``error`` (which fails the
        build: none of its cells was verified), under its id."""
        warn(subtype, message, self.get_location())
        source, line = self.get_source_info()
        try:
            shown = Path(source).resolve().relative_to(Path(self.env.srcdir).resolve()).as_posix()
        except ValueError:
            shown = source
        line = line or self.lineno
        record = SnippetRecord(self.env.docname, line, self.arguments[0], "error", "none", problems=(message,),
                               where=f"{shown}:{line}")  # fmt: skip
        add(self.env, record)
        page = str(Path(source).resolve()) if source else str(self.env.doc2path(self.env.docname))
        index.script_failures(self.env).setdefault(self.env.docname, []).append((page, line, message))
        return [render.error_box(message)]

    def _body_problem(self, ids: list[str], shown: str, script_id: str) -> str:
        """What is wrong with the body's ``snippet`` directives, ``""`` if nothing."""
        pattern = _MYST_SNIPPET if is_myst(self) else _RST_SNIPPET
        stated = [m.group(1) for line in self.content if (m := pattern.match(line))]
        if stated == ids:
            return ""
        if not ids:
            return f"every code cell of {shown} has the skip-execution tag: its body must place none; empty it"
        if not stated:
            if is_myst(self):  # the outer fence must be longer than the inner ones
                paste = "\n".join([f"````{{snippet-script}} {script_id}", *(_opening(i, True) for i in ids), "````"])
            else:
                paste = "\n\n".join([f".. snippet-script:: {script_id}", *("   " + _opening(i, False) for i in ids)])
            return (
                f"its body must place each code cell of {shown} with a snippet directive, in order; write it "
                f"as:\n{paste}\nthen run `snipcheck record` to fill their stated outputs"
            )
        parts = []
        missing = [i for i in ids if i not in stated]
        extra = [i for i in stated if i not in ids]
        twice = sorted({i for i in stated if stated.count(i) > 1})
        parts += [f"add {_opening(i, is_myst(self))!r} (after {_before(i, ids)})" for i in missing]
        if extra:
            parts.append(f"remove {', '.join(map(repr, extra))} ({shown} has no such cell)")
        if twice:
            parts.append(f"keep one directive of {', '.join(map(repr, twice))}")
        if not parts:
            parts.append(f"put the directives in the script's order: {', '.join(ids)}")
        return (
            "its body's snippet directives are not the cells of "
            f"{shown}, one each in order; {'; '.join(parts)}; then run `snipcheck record` for new cells"
        )

    def _parse_body(self, script_id: str, ids: list[str]) -> dict[str, list[nodes.Node]]:
        """Parse the body's ``snippet`` directives as the cells of chain ``script_id``.

        :return: cell id → the nodes its directive made (a message the parse
            gave between two directives goes with the cell before it).
        """
        held = self.env.temp_data.get(index.CHAIN, "")
        self.env.temp_data[index.CHAIN] = script_id
        holder = nodes.container()
        try:
            self.state.nested_parse(self.content, self.content_offset, holder)
        finally:
            self.env.temp_data[index.CHAIN] = held
        keys = {nodes.make_id(f"snippet-{i}"): i for i in ids}
        found: dict[str, list[nodes.Node]] = {}
        current = ids[0]
        for child in holder.children:
            anchors: list[str] = child.get("ids", []) if isinstance(child, nodes.Element) else []
            named = [keys[a] for a in anchors if a in keys]
            if named:
                current = named[0]
            found.setdefault(current, []).append(child)
        return found


def _opening(snippet_id: str, myst: bool) -> str:
    return f"```{{snippet}} {snippet_id}\n```" if myst else f".. snippet:: {snippet_id}"


def _before(snippet_id: str, ids: list[str]) -> str:
    at = ids.index(snippet_id)
    return repr(ids[at - 1]) if at else "the directive's options, first"


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def register(app: Sphinx) -> None:
    app.add_directive("snippet-script", ScriptDirective)
    script_check.register(app)
    script_links.register(app)


def _tagged(cell: scripts.Cell, names: tuple[str, ...]) -> bool:
    """Whether ``cell`` carries one of the tags ``names``."""
    return any(name in cell.tags for name in names)
