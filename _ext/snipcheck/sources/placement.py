"""Placements: where a page places a snippet, and what it states.

A :class:`Placement` is one ``snippet`` (or ``refuted-claim``) directive as
the page's own parser read it during a Sphinx read: docutils for
reStructuredText, myst-parser for MyST, whatever parser Sphinx is configured
with.  The directive records it (:mod:`snipcheck.sphinxext.index`), so the
build, ``record``, ``verify``, ``accept``, ``merge``, the lint and the pytest
plugin all see exactly the same set; nothing scans source text on its own.

Besides the stated output, a placement keeps the geometry a rewrite needs:
the lines of its source file that hold the directive's head (opening line and
options) and body, counted in the line model of its markup (see
:mod:`snipcheck.sources.sourcetext`).  :mod:`snipcheck.sources.rewrite` replaces bodies with
it, and the rewrite is read back through the same parser before anything is
written.

Pure core: standard library only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass

#: Fence kinds: how the directive is written.
KINDS = ("backtick", "tilde", "colon", "rst")

#: The line that ends a cell's code and begins its stated output, in a
#: ``snippet-code`` directive (whitespace around it is ignored).  Neither a
#: Python nor a Rust statement; inside a string or comment of the code it is
#: code (see :mod:`snipcheck.sources.cellsplit`).
OUTPUT_SEPARATOR = "--- output ---"


@dataclass(frozen=True)
class Placement:
    """One snippet directive, as the build reads it.

    :param snippet_id: the directive's argument.
    :param directive: the directive's name (``"snippet"``, ``"refuted-claim"``).
    :param docname: the Sphinx document it appears in (for an included file:
        the document that includes it).
    :param source: absolute path of the file that holds the directive (the
        included file, for an include).
    :param line: 1-based line of the directive's opening line in ``source``;
        for a notebook cell (``markup`` ``"notebook"``), its 1-based number
        among the notebook's cells.
    :param markup: ``"myst"``, ``"rst"`` or another parser's name.
    :param kind: one of :data:`KINDS`, or ``""`` when unknown.
    :param fence: the fence as written (````` ``` `````, ``~~~~``,
        ``:::``); ``""`` for reStructuredText.
    :param head_end: 0-based index of the first line of the body region (after
        the opening line, the options and the one blank line that may follow
        them).
    :param body_end: 0-based index one past the body region: the closing
        fence's line for MyST, the line after the last body line for
        reStructuredText (``== head_end`` for an empty body).
    :param closed: whether a closing fence line exists at ``body_end`` (MyST).
    :param prefix: what each body line carries in the source before its text
        (indentation, block-quote markers).
    :param options: the options as written, ``(name, raw value)``.
    :param stated: the stated output (the body lines joined with ``\\n``).
    :param writable: ``""`` when record and accept may rewrite this body;
        otherwise why not (an nbformat 3 notebook, text changed by a
        ``source-read`` handler, a file outside the source directory).
    :param chain: the name of the chain it is a cell of (``snippet-chain``
        before it on the page, or its ``chain`` option), ``""`` for none.
    :param digest: SHA-256 (hex) of ``source``'s bytes as the parser read
        them, ``""`` when unknown: a rewrite refuses a file whose bytes differ
        (another process wrote it since), and the index re-reads its page.
    :param code_lines: for a cell (a ``snippet-code`` directive that states
        its output after the :data:`OUTPUT_SEPARATOR` line), how many lines of
        its content come before the stated output: the code and the
        separator.  They lie between the option block and ``head_end``, and a
        rewrite never touches them.  0 for a ``snippet`` directive.
    :param figures_dir: where the stated images of its figures are, when not
        under the pages' source folder (``""``): a notebook cell's are its
        stored figures, copied into the build's own folder.
    """

    snippet_id: str
    directive: str
    docname: str
    source: str
    line: int
    markup: str
    kind: str
    fence: str
    head_end: int
    body_end: int
    closed: bool
    prefix: str
    options: tuple[tuple[str, str], ...]
    stated: str
    writable: str = ""
    chain: str = ""
    digest: str = ""
    code_lines: int = 0
    figures_dir: str = ""

    def option(self, name: str) -> str | None:
        """The raw value of option ``name``, or ``None`` when not given."""
        return dict(self.options).get(name)

    @property
    def location(self) -> str:
        """``path:line`` of the directive (the path as recorded); ``path, cell N`` for a notebook cell."""
        return f"{self.source}, cell {self.line}" if self.markup == "notebook" else f"{self.source}:{self.line}"

    @property
    def options_end(self) -> int:
        """0-based index one past the option block (and the blank line after
        it): ``head_end``, or for a cell the first line of its code."""
        return self.head_end - self.code_lines

    @property
    def body_line(self) -> int:
        """1-based line of the first body line (where a diff starts)."""
        return self.head_end + 1

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class CodeBlock:
    """A snippet's code written in a page (a ``snippet-code`` directive).

    :param snippet_id: the directive's argument; the ``snippet`` directive with
        the same id, later in the same document, places its output.
    :param docname: the document it appears in.
    :param source: absolute path of the file that holds it.
    :param line: 1-based line of the directive's opening line.
    :param body_line: 1-based line of the first line of the code.
    :param language: ``"python"`` or ``"rust"``.
    :param text: the code as written, tag block included (the same syntax
        as a snippet file).
    :param script_cell: for a cell of a tutorial script, how it runs
        (:attr:`snipcheck.model.Tags.script_cell`).
    :param expect: for a cell of a tutorial script, the ``expect`` its cell
        metadata gives (``"exception"`` for jupytext's ``raises-exception``
        tag) where its tag block gives none; ``""`` otherwise.
    :param modules: for a cell of a tutorial script, whether the modules
        beside the script that its code imports go with its run.
    """

    snippet_id: str
    docname: str
    source: str
    line: int
    body_line: int
    language: str
    text: str
    script_cell: tuple[str, ...] = ()
    expect: str = ""
    modules: bool = False


def fingerprint(placements: Iterable[Placement], sources: Iterable[tuple[str, str]] = ()) -> str:
    """A digest of a chapter's placements and the sources they run.

    Two shard reports describe the same chapter exactly when their
    fingerprints agree: same snippet ids placed in the same documents with
    the same stated outputs, and the same snippet sources.

    :param sources: ``(snippet id, source text)`` of the placed snippets
        (their helpers included, as the caller sees fit).
    :return: 16 hex digits.
    """
    h = hashlib.sha256()
    rows = sorted((p.snippet_id, p.docname, p.stated) for p in placements)
    h.update(json.dumps(rows, ensure_ascii=False).encode("utf-8"))
    h.update(json.dumps(sorted(sources), ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:16]
