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

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from snipcheck.sources import scripts
from snipcheck.sources.placement import CodeBlock
from snipcheck.sources.snippets import SnippetError, check_id, from_page
from snipcheck.sphinxext import index, render
from snipcheck.sphinxext import state as state_mod
from snipcheck.sphinxext.collector import SnippetRecord, add
from snipcheck.sphinxext.directive import is_myst, missing_id
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx

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
            cells = scripts.parse(text)
        except FileNotFoundError:
            return self._fail("missing", f"snippet-script {script_id!r}: no script {shown}; create it, or fix the id")
        except (OSError, UnicodeDecodeError) as exc:
            return self._fail("missing", f"snippet-script {script_id!r}: cannot read {shown}: {exc}")
        except scripts.ScriptError as exc:
            return self._fail("tag", f"snippet-script {script_id!r} ({shown}:{exc.line}): {exc.message}")
        code = [c for c in cells if c.kind == "code"]
        if not code:
            return self._fail("tag", f"snippet-script {script_id!r}: {shown} holds no code cell")
        ids = [f"{script_id}/{c.name}" for c in code]
        problem = self._body_problem(ids, shown)
        if problem:
            return self._fail("tag", f"snippet-script {script_id!r}: {problem}")
        docname = self.env.docname
        line = self.get_source_info()[1] or self.lineno
        loaded = {}
        for cell, cell_id in zip(code, ids, strict=True):
            if index.code_in(self.env, docname, cell_id) is not None:
                return self._fail("missing", f"snippet-script {script_id!r} is placed twice in this page; keep one")
            block = CodeBlock(cell_id, docname, str(path.resolve()), line, cell.line, "python", cell.text)
            try:
                loaded[cell_id] = from_page(block, state.root)
            except SnippetError as exc:
                return self._fail("tag", f"snippet-script {script_id!r}, cell {cell.name!r} ({shown}): {exc.message}")
            index.code_blocks(self.env).setdefault(docname, []).append(block)
        outputs = self._parse_body(script_id, ids)
        made: dict[str, list[nodes.Node]] = {}
        for cell_id in ids:
            code_node = nodes.container(classes=["snipcheck-snippet", "snipcheck-inline-code"])
            code_node["ids"].append(nodes.make_id(f"snippet-code-{cell_id}"))
            code_node += render.code_block(loaded[cell_id])
            made[cell_id] = [code_node, *outputs.get(cell_id, [])]
        return self._render(cells, script_id, path, made)

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

    def _body_problem(self, ids: list[str], shown: str) -> str:
        """What is wrong with the body's ``snippet`` directives, ``""`` if nothing."""
        pattern = _MYST_SNIPPET if is_myst(self) else _RST_SNIPPET
        stated = [m.group(1) for line in self.content if (m := pattern.match(line))]
        if stated == ids:
            return ""
        if not stated:
            if is_myst(self):  # the outer fence must be longer than the inner ones
                paste = "\n".join([f"````{{snippet-script}} {ids[0].rpartition('/')[0]}",
                                    *(_opening(i, True) for i in ids), "````"])  # fmt: skip
            else:
                paste = "\n\n".join([f".. snippet-script:: {ids[0].rpartition('/')[0]}",
                                      *("   " + _opening(i, False) for i in ids)])  # fmt: skip
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

    def _render(
        self, cells: list[scripts.Cell], script_id: str, path: Path, made: dict[str, list[nodes.Node]]
    ) -> list[nodes.Node]:
        """The script as the page shows it: its prose parsed in the page's
        markup as one text (so its headings nest), each code cell a comment
        line in it, then replaced by the cell's code and output nodes."""
        myst = is_myst(self)
        lines = StringList()
        source = str(path)
        for cell in cells:
            if cell.kind == "prose":
                for k, text in enumerate(cell.text.split("\n")):
                    lines.append(text, source, cell.line - 1 + k)
            else:
                lines.append(f"{'%' if myst else '..'} {_MARK} {script_id}/{cell.name}", source, cell.line - 1)
            lines.append("", source, cell.line - 1)
        if myst:
            parsed = self._parse_myst(lines)
        else:
            from sphinx.util.parsing import nested_parse_to_nodes

            parsed = nested_parse_to_nodes(self.state, lines, allow_section_headings=True)
        out: list[nodes.Node] = []
        for top in parsed:
            if isinstance(top, nodes.comment) and _cell_of(top) in made:
                out += made[_cell_of(top)]
                continue
            if isinstance(top, nodes.Element):
                for comment in list(top.findall(nodes.comment, include_self=False)):
                    if _cell_of(comment) in made:
                        comment.replace_self(made[_cell_of(comment)])
            out.append(top)
        return out


    def _parse_myst(self, lines: StringList) -> list[nodes.Node]:
        """Parse ``lines`` as MyST, headings included, into the nodes to return.

        myst-parser attaches a heading's section to the page's section tree
        itself (the section of the level above it), not to the node being
        parsed into: those sections are taken back from where it put them, so
        they follow the prose before them, in order.  Without a section tree
        to read (another myst-parser), headings are rubrics.
        """
        holder = nodes.container()
        levels = getattr(getattr(self.state, "_renderer", None), "_level_to_section", None)
        if not isinstance(levels, dict):
            self.state.nested_parse(lines, 0, holder)
            return list(holder.children)
        parents = {id(n): (n, len(n.children)) for n in levels.values()}
        self.state.nested_parse(lines, 0, holder, match_titles=True)
        attached: list[nodes.Node] = []
        for parent, count in parents.values():
            for child in parent.children[count:]:
                if isinstance(child, nodes.section):
                    attached.append(child)
            parent.children[count:] = [c for c in parent.children[count:] if not isinstance(c, nodes.section)]
        return [*holder.children, *attached]


#: The comment that stands for a code cell in the prose text :meth:`ScriptDirective._render` parses.
_MARK = "snipcheck-script-cell"


def _cell_of(comment: nodes.comment) -> str:
    text = comment.astext().strip()
    return text[len(_MARK) :].strip() if text.startswith(_MARK + " ") else ""


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
