"""A script's prose, parsed in the markup it was written in, whatever the page's.

A sphinx-gallery script's text blocks are reStructuredText and a jupytext
script's ``[markdown]`` cells are Markdown (:mod:`snipcheck.sources.scripts`);
the page that places the script may be either.  Each is parsed by its own
parser, into the page's document (so its section ids, labels and targets are
the page's, and Sphinx resolves references to them), with the script's file
and lines as the source of every node and message:

* reStructuredText: all text blocks of the script as one text, parsed by a
  fresh docutils state machine (title styles shared by the whole script, as
  sphinx-gallery's one page shares them), each code cell a comment line in
  it (:data:`MARK`), then replaced by the cell's nodes.  A comment that does
  not come back as a comment of its own (a construct of the text before it
  swallowed it) is an error naming the cell: the page would lack it.
* Markdown: each cell parsed on its own by myst-parser's renderer, as
  Jupyter renders each cell (a fence left open in one cell ends with it),
  its headings then nested by their level across cells.

The headings of a script nest under the section that holds the directive.

May import Sphinx, docutils and (for Markdown) myst-parser (Sphinx layer).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.parsers.rst import states
from docutils.statemachine import StringList

from snipcheck.sources.scripts import Cell

if TYPE_CHECKING:
    from docutils.parsers.rst import Directive

#: The comment that stands for a code cell in the reStructuredText text parsed;
#: it never reaches a page.
MARK = "snipcheck-script-cell"


class ProseError(Exception):
    """Prose that cannot be placed: the message names the script's cell and what to do.

    :param line: the script's line at fault.
    """

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def render(directive: Directive, cells: Sequence[Cell], path: str, made: dict[int, list[nodes.Node]]) -> list[nodes.Node]:
    """The script's nodes: its prose parsed, each code cell's nodes in its place.

    :param cells: the script's cells, in order.
    :param path: the script file (the source of every node and message).
    :param made: cell index (in ``cells``) → the nodes that stand for it
        (code cells; a raw cell not shown has none).
    :raises ProseError: where a code cell would not reach the page.
    """
    markups = {c.markup for c in cells if c.kind in ("prose", "raw") and c.markup}
    if markups <= {"rst"}:
        return _render_rst(directive, cells, path, made)
    return _render_cells(directive, cells, path, made)


# --- reStructuredText: one text ---------------------------------------------------------


def _render_rst(directive: Directive, cells: Sequence[Cell], path: str, made: dict[int, list[nodes.Node]]) -> list[nodes.Node]:
    lines = StringList()
    for index, cell in enumerate(cells):
        if cell.kind in ("prose", "raw") and cell.markup == "rst":
            for k, text in enumerate(cell.text.split("\n")):
                lines.append(text, path, cell.line - 1 + k)
        elif index in made:
            lines.append(f".. {MARK} {index}", path, cell.line - 1)
        else:
            continue
        lines.append("", path, cell.line - 1)
    parsed = parse_rst(directive.state.document, lines)
    found: set[int] = set()
    out: list[nodes.Node] = []
    for top in parsed:
        if isinstance(top, nodes.comment) and _cell_of(top) in made:
            found.add(_cell_of(top))
            out += made[_cell_of(top)]
            continue
        if isinstance(top, nodes.Element):
            for comment in list(top.findall(nodes.comment, include_self=False)):
                index = _cell_of(comment)
                if index in made and isinstance(comment.parent, nodes.section | nodes.document):
                    found.add(index)
                    comment.replace_self(made[index])
        out.append(top)
    _check_found(cells, made, found)
    return out


def parse_rst(document: nodes.document, lines: StringList) -> list[nodes.Node]:
    """Parse ``lines`` as reStructuredText, titles allowed, with a state
    machine of its own: titles nest by this text's own styles, and every
    message names the source and line its lines carry."""
    machine = states.RSTStateMachine(state_classes=states.state_classes, initial_state="Body")
    with _into(document) as new:
        reporter = document.reporter
        kept = reporter.__dict__.get("get_source_and_line", _ABSENT)
        reporter.get_source_and_line = machine.get_source_and_line
        try:
            machine.run(lines, document, match_titles=True)
        finally:
            if kept is _ABSENT:
                del reporter.get_source_and_line
            else:
                reporter.get_source_and_line = kept
    return new


_ABSENT = object()


@contextlib.contextmanager
def _into(document: nodes.document, source: str | None = None) -> Iterator[list[nodes.Node]]:
    """Let a parser append to ``document``, then take what it appended back
    out (into the yielded list); ``source``: the document's source meanwhile."""
    count = len(document.children)
    taken: list[nodes.Node] = []
    held = document.get("source")
    current = document.current_source, document.current_line
    if source is not None:
        document["source"] = source
    try:
        yield taken
    finally:
        if source is not None:
            document["source"] = held
        document.current_source, document.current_line = current
        taken += document.children[count:]
        del document.children[count:]
        for node in taken:
            node.parent = None


def _cell_of(comment: nodes.Node) -> int:
    text = comment.astext().strip()
    if text.startswith(MARK + " "):
        rest = text[len(MARK) + 1 :].strip()
        if rest.isdigit():
            return int(rest)
    return -1


def _check_found(cells: Sequence[Cell], made: dict[int, list[nodes.Node]], found: set[int]) -> None:
    for index in sorted(set(made) - found):
        before = next((c for c in reversed(cells[:index]) if c.kind in ("prose", "raw")), None)
        culprit = f" (the prose at line {before.line} before it holds a construct left open)" if before else ""
        raise ProseError(
            f"the code cell at line {cells[index].line} would not reach the page: the text before it swallowed "
            f"it{culprit}; close that construct (a literal block, a directive's indented body) before the code",
            cells[index].line,
        )


# --- Markdown: cell by cell ---------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def _render_cells(directive: Directive, cells: Sequence[Cell], path: str, made: dict[int, list[nodes.Node]]) -> list[nodes.Node]:
    """Each prose cell parsed on its own in its markup, then the sections of
    all cells nested by heading level."""
    document = directive.state.document
    items: list[tuple[int | None, nodes.Node]] = []
    for index, cell in enumerate(cells):
        if index in made:
            items += [(None, node) for node in made[index]]
            continue
        if cell.kind not in ("prose", "raw") or not cell.markup:
            continue
        if cell.markup == "md":
            parsed = parse_markdown(document, cell.text, path, cell.line)
            level = _markdown_level(cell)
        else:
            lines = StringList()
            for k, text in enumerate(cell.text.split("\n")):
                lines.append(text, path, cell.line - 1 + k)
            parsed = parse_rst(document, lines)
            level = None
        for node in parsed:
            items += _flatten(node, level, 0)
    return _nest(items)


def parse_markdown(document: nodes.document, text: str, path: str, line: int) -> list[nodes.Node]:
    """Parse ``text`` (lines ``line``… of ``path``) as MyST Markdown, with
    myst-parser's renderer and the project's MyST configuration.

    :raises ProseError: when myst-parser is not installed.
    """
    try:
        from myst_parser.config.main import MdParserConfig
        from myst_parser.mdit_to_docutils.sphinx_ import SphinxRenderer
        from myst_parser.parsers.mdit import create_md_parser
    except ImportError:
        raise ProseError(
            "its Markdown cells need myst-parser to be read: install it (pip install 'snipcheck[myst]'); a Markdown "
            "cell is never read as reStructuredText",
            line,
        ) from None
    env = getattr(document.settings, "env", None)
    config = getattr(env, "myst_config", None)
    if not isinstance(config, MdParserConfig):
        config = MdParserConfig()
    parser = create_md_parser(config, _cell_renderer(SphinxRenderer))
    parser.options["document"] = document
    with _into(document, source=path) as new, _page_kept(document, env), _located(env, path):
        parser.render("\n" * (line - 1) + text)
    return new


#: The logger myst-parser's warnings go through (``myst_parser.warnings_``), in Sphinx's tree.
_MYST_LOGGER = "sphinx.myst_parser.warnings_"


class _AtScript(logging.Filter):
    """Name the script, not the page, in a warning myst-parser locates by the
    page's docname and a line of the text it parses (the script's line)."""

    def __init__(self, docname: str, path: str) -> None:
        super().__init__()
        self.docname, self.path = docname, path

    def filter(self, record: logging.LogRecord) -> bool:
        location = getattr(record, "location", None)
        if isinstance(location, tuple) and len(location) == 2 and location[0] == self.docname and location[1]:
            record.location = f"{self.path}:{location[1]}"
        return True


@contextlib.contextmanager
def _located(env: Any, path: str) -> Iterator[None]:
    if env is None:
        yield
        return
    logger = logging.getLogger(_MYST_LOGGER)
    at = _AtScript(env.docname, path)
    logger.addFilter(at)
    try:
        yield
    finally:
        logger.removeFilter(at)


def _cell_renderer(base: Any) -> Any:
    """myst-parser's renderer for one cell: a cell is not a document, so its
    first heading may be of any level (its headings nest by level across
    cells, see :func:`_nest`), with no warning that the document's headings
    do not start at H1."""

    class CellRenderer(base):  # type: ignore[misc]
        def update_section_level_state(self, section: nodes.section, level: int) -> None:
            levels = getattr(self, "_level_to_section", None)
            if isinstance(levels, dict):
                for missing in range(1, level):
                    if missing not in levels:
                        levels[missing] = levels[max(k for k in levels if k < missing)]
            super().update_section_level_state(section, level)

    return CellRenderer


#: What myst-parser's renderer sets for a whole document at the end of each
#: render: the page's own, kept.
_WORDCOUNT = ("wordcount-words", "wordcount-minutes")


@contextlib.contextmanager
def _page_kept(document: nodes.document, env: Any) -> Iterator[None]:
    """Keep what a render of one cell would change for the whole page: the
    word count myst-parser defines as substitutions and metadata."""
    defs = {name: document.substitution_defs.pop(name, None) for name in _WORDCOUNT}
    names = {name: document.substitution_names.pop(name, None) for name in _WORDCOUNT}
    metadata = env.metadata.get(env.docname, {}) if env is not None else {}
    count = metadata.get("wordcount")
    try:
        yield
    finally:
        for name in _WORDCOUNT:
            document.substitution_defs.pop(name, None)
            document.substitution_names.pop(name, None)
            kept_def, kept_name = defs[name], names[name]
            if kept_def is not None:
                document.substitution_defs[name] = kept_def
            if kept_name is not None:
                document.substitution_names[name] = kept_name
        if count is not None:
            metadata["wordcount"] = count
        elif env is not None:
            env.metadata.get(env.docname, {}).pop("wordcount", None)


def _markdown_level(cell: Cell) -> Any:
    """A function: section → its heading level, read from the cell's lines."""
    lines = cell.text.split("\n")

    def level(section: nodes.section) -> int:
        title = next(iter(section.findall(nodes.title)), None)
        at = getattr(title, "line", None) or getattr(section, "line", None)
        if isinstance(at, int):
            k = at - cell.line
            for i in (k, k - 1):
                if 0 <= i < len(lines):
                    m = _ATX.match(lines[i])
                    if m:
                        return len(m.group(1))
                    if i + 1 < len(lines) and lines[i].strip() and (s := _SETEXT.match(lines[i + 1])):
                        return 1 if s.group(1)[0] == "=" else 2
        return 1

    return level


def _flatten(node: nodes.Node, level: Any, depth: int) -> list[tuple[int | None, nodes.Node]]:
    """``node`` as ``(level, node)`` items: a section becomes a shell of its
    title and body (level from ``level``, or its depth), then its subsections."""
    if not isinstance(node, nodes.section):
        return [(None, node)]
    subsections = [c for c in node.children if isinstance(c, nodes.section)]
    for child in subsections:
        node.remove(child)
    own = level(node) if callable(level) else depth + 1
    out: list[tuple[int | None, nodes.Node]] = [(own, node)]
    for child in subsections:
        out += _flatten(child, level, depth + 1)
    return out


def _nest(items: list[tuple[int | None, nodes.Node]]) -> list[nodes.Node]:
    """Items in order, each section put under the last section of a lower level."""
    out: list[nodes.Node] = []
    stack: list[tuple[int, nodes.Element]] = []
    for level, node in items:
        if level is None:
            (stack[-1][1].append(node) if stack else out.append(node))
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        (stack[-1][1].append(node) if stack else out.append(node))
        stack.append((level, node))  # type: ignore[arg-type]
    return out
