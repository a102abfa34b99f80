"""Never a green build on a broken page: every cell of a placed script is on it.

The ``snippet-script`` directive notes, for the page being read, each script
it placed and the code cells it must show (:func:`expect`).  When the page's
doctree is complete (``doctree-read``, after every transform of the read),
:func:`check` counts them: each code cell's code exactly once, each cell
that runs with its output, in the script's order, and no internal marker of
the directive anywhere in the page.  A page that shows fewer cells, or a
cell without its output, fails the build (a record with status ``error``,
which keeps the page outdated until it is fixed), naming the script and the
cell.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from docutils import nodes

from snipcheck.sphinxext.collector import SnippetRecord, add
from snipcheck.sphinxext.log import warn
from snipcheck.sphinxext.script_prose import MARK

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

_KEY = "snipcheck_scripts"


@dataclass(frozen=True)
class Placed:
    """A script placed on the page being read.

    :param script_id: its id; :param path: its file; :param where: ``path:line`` of the directive.
    :param line: the directive's line; :param cells: ``(cell id, script line, code shown, output shown)``
        of its code cells, in order: a cell that does not run shows no output, and its tags may leave
        either off the page (``remove-input``, ``remove-output``, ``remove-cell``).
    """

    script_id: str
    path: str
    where: str
    line: int
    cells: tuple[tuple[str, int, bool, bool], ...]


def expect(env: BuildEnvironment, placed: Placed) -> None:
    """Note that the page being read must show ``placed``'s cells."""
    found = env.temp_data.setdefault(_KEY, [])
    assert isinstance(found, list)
    found.append(placed)


def problems(doctree: nodes.document, placed: Placed) -> list[tuple[int, str]]:
    """``(script line, sentence)`` for each cell of ``placed`` the page lacks."""
    prefix = placed.script_id + "/"
    shown: list[str] = []
    ids: set[str] = set()
    for element in doctree.findall(nodes.Element):
        cell = str(element.get("snipcheck_cell", ""))
        if cell.startswith(prefix):
            shown.append(cell)
        anchors: list[str] = element.get("ids", [])
        ids.update(anchors)
    found: list[tuple[int, str]] = []
    for cell_id, line, code, output in placed.cells:
        count, wanted = shown.count(cell_id), int(code)
        if count != wanted:
            found.append((line, f"cell {cell_id!r} (line {line}) is shown {count} times on the page, not {'once' if code else 0}"))
        elif output and nodes.make_id(f"snippet-{cell_id}") not in ids:
            found.append((line, f"the output of cell {cell_id!r} (line {line}) is missing from the page"))
    order = [c for c, _, code, _ in placed.cells if code]
    if not found and shown != order:
        found.append((placed.cells[0][1], f"the page shows the cells in another order than the script: {', '.join(shown)}"))
    return found


def check(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: fail the page's scripts whose cells it does not all show."""
    env = app.env
    placed_here: list[Placed] = list(env.temp_data.pop(_KEY, None) or [])
    marked = [t for t in doctree.findall(nodes.Text) if MARK in t.astext()]
    for placed in placed_here:
        faults = problems(doctree, placed)
        if marked and not faults:
            faults = [(placed.line, f"an internal marker of snippet-script reached the page: {marked[0].astext()[:80]!r}")]
        for line, sentence in faults:
            message = (
                f"snippet-script {placed.script_id!r}: {sentence}; the page would show a broken tutorial, so the "
                "build fails (please report this with the script)"
            )
            warn("missing", message, f"{placed.path}:{line}")
            add(env, SnippetRecord(env.docname, placed.line, placed.script_id, "error", "none", problems=(message,),
                                   where=placed.where))  # fmt: skip


def register(app: Sphinx) -> None:
    app.connect("doctree-read", check)
