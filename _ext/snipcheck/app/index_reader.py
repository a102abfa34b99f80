"""Reading a project's placement index without a build, for the command line.

"Where are the snippets, and what does each page state?" has one answer, the
one the build's own parse gives (see :mod:`snipcheck.sphinxext.index`).  The
command line, the lint and the pytest plugin get it from :func:`read_index`:
a Sphinx read with execution off, through the ``snipcheck-index`` builder
(:mod:`snipcheck.sphinxext.index_builder`), which writes nothing and keeps
its own environment (so a second read only re-reads changed pages).
:func:`read_back` parses rewritten sources the same way before ``record``
or ``accept`` writes them.

Front end (app layer): runs Sphinx.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from sphinx.errors import SphinxError

from snipcheck.sources.placement import CodeBlock, Placement
from snipcheck.sphinxext.collector import duplicates, records
from snipcheck.sphinxext.index import (
    PlacementCollector,
    all_placements,
    code_blocks,
    page_problems,
    placements,
    script_failures,
)
from snipcheck.sphinxext.index_builder import IndexBuilder
from snipcheck.sphinxext.pages import unreadable

if TYPE_CHECKING:
    from sphinx.application import Sphinx


@dataclass
class Index:
    """What :func:`read_index` found.

    :param placements: every placement, by document, then in reading order.
    :param code: the snippet code written in pages, likewise.
    :param srcdir: the source directory that was read.
    :param confdir: the directory holding ``conf.py``.
    :param documents: how many documents the project has.
    :param warnings: the warnings the read printed (parse errors, bad tags).
    :param unreadable: ``(path, line, message)`` of each page Sphinx could
        not read (not UTF-8, say: see :mod:`.pages`), whose snippets are
        therefore unknown.
    :param unplaced: ``(path, line, message)`` of each ``snippet-script``
        that placed none of its cells (its script is missing or its body is
        not its cells), whose snippets are likewise unknown.
    :param problems: ``(path, line, message)`` of each problem of the pages'
        snippet markup that fails the build (a snippet placed more than once,
        its code written twice), so that the command line fails on it too.
    :param load_errors: placement → message, for each placement whose
        snippet the build could not load there (no file, and no code for it
        earlier in the page, say): the command line refuses it with the same
        message rather than decide otherwise.
    """

    placements: list[Placement]
    code: list[CodeBlock]
    srcdir: Path
    confdir: Path
    documents: int
    warnings: str
    unreadable: tuple[tuple[str, int, str], ...] = ()
    unplaced: tuple[tuple[str, int, str], ...] = ()
    problems: tuple[tuple[str, int, str], ...] = ()
    load_errors: Mapping[Placement, str] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def _app(
    srcdir: Path, confdir: Path, doctreedir: Path, overrides: Mapping[str, Any], warning: io.StringIO
) -> Iterator[Sphinx]:
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    settings = {**overrides, "snipcheck_execute": False}
    # The output folder holds nothing the index needs, but myst-nb writes a
    # copy of each notebook beside it (jupyter_execute/): a throwaway folder
    # outside the project, so that no later build reads those copies as pages.
    with patch_docutils(confdir), docutils_namespace(), _pristine_source_suffix(), \
            tempfile.TemporaryDirectory(prefix="snipcheck-index-") as scratch:
        app = Sphinx(
            str(srcdir),
            str(confdir),
            str(Path(scratch) / "out"),
            str(doctreedir),
            IndexBuilder.name,
            confoverrides=settings,
            status=None,
            warning=warning,
            freshenv=False,
            keep_going=True,
        )
        yield app


@contextlib.contextmanager
def _pristine_source_suffix() -> Iterator[None]:
    """Give an application created in this process the default ``source_suffix``.

    Sphinx merges the suffixes extensions register into the *shared* default
    dict of ``source_suffix`` when a project leaves it unset
    (sphinx-doc/sphinx#11795), so a second application in the same process
    (a test run, the pytest plugin, ``record`` after a build) would inherit,
    say, myst-nb's ``.md`` parser without loading myst-nb.
    """
    from sphinx.config import Config

    default = Config.config_values["source_suffix"].default
    if not isinstance(default, dict):
        yield
        return
    saved = dict(default)
    default.clear()
    default[".rst"] = "restructuredtext"
    try:
        yield
    finally:
        default.clear()
        default.update(saved)


class ReadError(SphinxError):
    """Reading the pages failed on an error Sphinx did not report itself (an
    extension's directive that raised, say); the message names the page."""

    category = "Reading error"


def _build(app: Sphinx) -> None:
    """``app.build()``, with an error that is not Sphinx's own told as one
    that names the page it came from.

    :raises ReadError: for such an error; a :class:`SphinxError` as it is.
    """
    try:
        app.build()
    except SphinxError:
        raise
    except Exception as exc:  # an extension's bug: told with its page, not as a traceback
        try:
            docname = app.env.docname
        except (AttributeError, KeyError):
            docname = None
        where = f" while reading {app.env.doc2path(docname)}" if docname else ""
        raise ReadError(f"{type(exc).__name__}: {exc}{where} (raised by an extension or a directive)") from exc


def read_index(srcdir: Path, confdir: Path, doctreedir: Path, overrides: Mapping[str, Any] | None = None) -> Index:
    """Read every page of the project as the build does, with execution off.

    :param doctreedir: where the index keeps its environment between reads
        (inside the build directory, never the sources).
    :raises sphinx.errors.SphinxError: if the project cannot be read at all
        (no ``conf.py``, a broken configuration).
    """
    warning = io.StringIO()
    with _app(srcdir, confdir, doctreedir, overrides or {}, warning) as app:
        _build(app)
        env = app.env
        code = [c for docname in sorted(code_blocks(env)) for c in code_blocks(env)[docname]]
        left_out = tuple(entry for _, entry in sorted(unreadable(env).items()))
        unplaced = tuple(entry for docname in sorted(script_failures(env)) for entry in script_failures(env)[docname])
        problems = [entry for docname in sorted(page_problems(env)) for entry in page_problems(env)[docname]]
        problems += [(str(env.doc2path(rec.docname)), rec.line, message) for rec, message in duplicates(env)]
        placed = placements(env)  # a record's serial is its placement's place in its document's list
        load_errors = {
            placed[docname][rec.serial]: "; ".join(rec.problems)
            for docname in sorted(records(env)) for rec in records(env)[docname]
            if rec.status == "error" and 0 <= rec.serial < len(placed.get(docname, ()))
        }  # fmt: skip
        return Index(
            all_placements(env), code, Path(app.srcdir), Path(app.confdir), len(env.found_docs) + len(left_out),
            warning.getvalue(), left_out, unplaced, tuple(problems), load_errors,
        )  # fmt: skip


class Reader:
    """Parses pages on demand as the build would, in a throwaway environment.

    One Sphinx application is created (execution off, a temporary doctree
    directory) and reused: :meth:`read` re-reads the given pages, with any
    file in ``texts`` parsed from the given text instead of the file on disk
    (for pages and for files they include).  Use as a context manager.
    """

    def __init__(self, srcdir: Path, confdir: Path, overrides: Mapping[str, Any] | None = None) -> None:
        self._stack = contextlib.ExitStack()
        tmp = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="snipcheck-read-")))
        self.warnings = io.StringIO()
        self.app = self._stack.enter_context(_app(srcdir, confdir, tmp, overrides or {}, self.warnings))
        self._texts: dict[str, str] = {}
        self.app.connect("source-read", self._substitute, priority=100)
        self.app.connect("include-read", self._substitute_include, priority=100)
        self.app.env.find_files(self.app.config, self.app.builder)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _substitute(self, app: Sphinx, docname: str, source: list[str]) -> None:
        path = str(Path(app.env.doc2path(docname)).resolve())
        if path in self._texts:
            source[0] = self._texts[path]

    def _substitute_include(self, app: Sphinx, relative_path: Path, parent: str, content: list[str]) -> None:
        path = str((Path(app.srcdir) / relative_path).resolve())
        if path in self._texts:
            content[0] = self._texts[path]

    def read(self, docnames: Sequence[str], texts: Mapping[str, str] | None = None) -> dict[str, list[Placement]]:
        """Parse ``docnames``; ``texts`` maps absolute paths to the text to parse instead.

        :return: docname → its placements.
        """
        self._texts = {str(Path(p).resolve()): t for p, t in (texts or {}).items()}
        env = self.app.env
        for docname in docnames:
            PlacementCollector().clear_doc(self.app, env, docname)  # a page read again: its code blocks too
            self.app.builder.read_doc(docname, _cache=False)
        return {d: list(placements(env).get(d, [])) for d in docnames}


def read_back(
    srcdir: Path, confdir: Path, docnames: Sequence[str], texts: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> dict[str, list[Placement]]:
    """Parse ``docnames`` again with the files in ``texts`` (absolute path →
    new text) in place of what is on disk, in a throwaway environment.

    :return: docname → its placements as the parser reads the new texts.
    """
    return read_back_cells(srcdir, confdir, docnames, texts, overrides)[0]


def read_back_cells(
    srcdir: Path, confdir: Path, docnames: Sequence[str], texts: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> tuple[dict[str, list[Placement]], dict[str, list[CodeBlock]]]:
    """:func:`read_back`, and the code written in the pages as the parser reads
    the new texts (a cell's code and where it begins: its lines are where
    the new text has them, which a read-back placement cannot say).

    :return: ``(docname → placements, docname → code blocks)``.
    """
    with Reader(srcdir, confdir, overrides) as reader:
        found = reader.read(docnames, texts)
        code = code_blocks(reader.app.env)
        return found, {d: list(code.get(d, [])) for d in docnames}
