"""The placement index: every snippet directive, recorded as the build reads it.

"Where are the snippets, and what does each page state?" has one answer, the
one the build's own parse gives.  The ``snippet`` and ``refuted-claim``
directives call :func:`capture` while Sphinx reads a page, with whatever
parser Sphinx uses for it (docutils for reStructuredText, myst-parser for
MyST, directives nested in tab sets and dropdowns, included files); the
:class:`PlacementCollector` keeps the result per document in
``env.snipcheck_placements`` across incremental and parallel builds.

The command line, the lint and the pytest plugin get the same set from
:func:`read_index`: a Sphinx read with execution off, through the
``snipcheck-index`` builder, which writes nothing and keeps its own
environment (so a second read only re-reads changed pages).
:func:`read_back` parses rewritten sources the same way before ``record``
or ``accept`` writes them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.environment.collectors import EnvironmentCollector

from snipcheck.sources import escapes
from snipcheck.sources.placement import CodeBlock, Placement
from snipcheck.sources.sourcetext import SourceError, SourceText

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.util.docutils import SphinxDirective

_FENCE = re.compile(r"(`{3,}|~{3,}|:{3,})")
_KIND = {"`": "backtick", "~": "tilde", ":": "colon"}


def placements(env: BuildEnvironment) -> dict[str, list[Placement]]:
    """``env.snipcheck_placements``: docname → placements in reading order."""
    if not hasattr(env, "snipcheck_placements"):
        env.snipcheck_placements = {}  # type: ignore[attr-defined]
    return env.snipcheck_placements  # type: ignore[attr-defined,no-any-return]


def code_blocks(env: BuildEnvironment) -> dict[str, list[CodeBlock]]:
    """``env.snipcheck_code``: docname → the snippet code written in the page."""
    if not hasattr(env, "snipcheck_code"):
        env.snipcheck_code = {}  # type: ignore[attr-defined]
    return env.snipcheck_code  # type: ignore[attr-defined,no-any-return]


def script_failures(env: BuildEnvironment) -> dict[str, list[tuple[str, int, str]]]:
    """``env.snipcheck_script_failures``: docname → ``(path, line, message)`` of
    each ``snippet-script`` that placed none of its cells (see :mod:`.script`)."""
    if not hasattr(env, "snipcheck_script_failures"):
        env.snipcheck_script_failures = {}  # type: ignore[attr-defined]
    return env.snipcheck_script_failures  # type: ignore[attr-defined,no-any-return]


def code_in(env: BuildEnvironment, docname: str, snippet_id: str) -> CodeBlock | None:
    """The code of ``snippet_id`` written in ``docname`` (read so far), if any."""
    return next((c for c in code_blocks(env).get(docname, []) if c.snippet_id == snippet_id), None)


def all_placements(env: BuildEnvironment) -> list[Placement]:
    """Every placement of the project, by document name, then in reading order."""
    found = placements(env)
    return [p for docname in sorted(found) for p in found[docname]]


# --- capture ------------------------------------------------------------------------


#: ``env.temp_data`` key: the chain the next snippets of the page join (``snippet-chain``).
CHAIN = "snipcheck_chain"


def chain_of(directive: SphinxDirective) -> str:
    """The chain a snippet directive places its snippet in: its ``chain``
    option, else the page's current ``snippet-chain`` (see :mod:`.chain`)."""
    option = directive.options.get("chain")
    if option is not None:
        return str(option).strip()
    return str(directive.env.temp_data.get(CHAIN, ""))


def capture(directive: SphinxDirective, snippet_id: str, code_lines: int = 0) -> Placement:
    """Record the placement of ``snippet_id`` by ``directive`` in the index.

    Called from the directive's ``run`` (while Sphinx reads the page).  The
    geometry comes from the parser: the directive's source and line
    (``get_source_info``, which follows includes), and its content offset and
    lines.  A placement whose body cannot be located in its file, or whose file
    is not what the parser read, is recorded with ``writable`` saying why.

    :param code_lines: for a cell (``snippet-code`` with an output
        separator), the content lines before its stated output (code and
        separator); the stated output is the rest of the content.
    :return: the placement, also appended to :func:`placements`.
    """
    env = directive.env
    source, line = directive.get_source_info()
    markup = "myst" if type(directive.state).__module__.startswith("myst_parser") else "rst"
    stated = "\n".join(list(directive.content)[code_lines:])
    if escapes.OPTION in directive.options:
        stated = escapes.decode(stated)  # a body in the escaped form states the text it stands for
    options = tuple((str(k), "" if v is None else str(v)) for k, v in directive.options.items())
    if source and not os.path.isabs(source) and os.path.exists(source):
        # docutils names an included file relative to the working directory
        # when the two share a folder (utils.relative_path): name it as the
        # page is named, absolutely, so that no consumer depends on the cwd.
        source = os.path.abspath(source)
    path = Path(source) if source else Path(env.doc2path(env.docname))
    base = {
        "snippet_id": snippet_id,
        "directive": directive.name,
        "docname": env.docname,
        "source": str(path),
        "line": line or directive.lineno,
        "markup": markup,
        "options": options,
        "stated": stated,
        "chain": chain_of(directive),
        "code_lines": code_lines,
    }
    try:
        geometry = _geometry(directive, path, markup, line or directive.lineno, code_lines)
    except _NotWritable as exc:
        geometry = {"kind": "", "fence": "", "head_end": 0, "body_end": 0, "closed": False, "prefix": ""}
        geometry["writable"] = str(exc)
    geometry["digest"] = _digest(env, path, markup)
    base["line"] = geometry.pop("line", base["line"])
    placement = Placement(**base, **geometry)  # type: ignore[arg-type]
    placements(env).setdefault(env.docname, []).append(placement)
    return placement


class _NotWritable(Exception):
    pass


def _temp(env: BuildEnvironment, key: str) -> dict[Any, Any]:
    """A dict kept in ``env.temp_data`` (data of the page being read) under ``key``."""
    data = env.temp_data.get(key)
    if not isinstance(data, dict):
        data = {}
        env.temp_data[key] = data
    return data


def _source_text(env: BuildEnvironment, path: Path, markup: str) -> SourceText:
    """The file as bytes split in ``markup``'s line model (once per page read)."""
    cache = _temp(env, "snipcheck_sources")
    key = (str(path), markup)
    if key not in cache:
        try:
            raw = path.read_bytes()
            cache[key] = (SourceText.from_bytes(path, raw, markup), hashlib.sha256(raw).hexdigest())
        except (OSError, SourceError) as exc:
            cache[key] = str(exc)
    found = cache[key]
    if isinstance(found, str):
        raise _NotWritable(f"cannot read its source: {found}")
    return found[0]  # type: ignore[no-any-return]


def _resolved(env: BuildEnvironment, path: Path) -> Path:
    """``path.resolve()``, once per page read (a page's snippets share a few files)."""
    cache = _temp(env, "snipcheck_resolved")
    key = str(path)
    if key not in cache:
        cache[key] = path.resolve()
    return cache[key]  # type: ignore[no-any-return]


def _digest(env: BuildEnvironment, path: Path, markup: str) -> str:
    """SHA-256 of the bytes :func:`_source_text` read, ``""`` when they are not
    the bytes the parser read (the file changed in between) or were not read."""
    if str(_resolved(env, path)) in _temp(env, "snipcheck_changed"):
        return ""
    found = _temp(env, "snipcheck_sources").get((str(path), markup))
    return found[1] if isinstance(found, tuple) else ""


#: What a placement says when its file changed on disk while Sphinx read it.
CHANGED_WHILE_READ = (
    "{path} changed on disk while it was read (another process wrote it meanwhile: another record or accept, "
    "or an editor), so line numbers do not point into the file; run the command again"
)


def _geometry(directive: SphinxDirective, path: Path, markup: str, line: int, code_lines: int) -> dict[str, Any]:
    env = directive.env
    if path.suffix == ".ipynb":
        raise _NotWritable("it sits in a notebook cell; edit the notebook's stated output by hand, from a real run")
    srcdir, real = _resolved(env, Path(env.srcdir)), _resolved(env, path)
    if not real.is_relative_to(srcdir):
        raise _NotWritable(f"its file {real} lies outside the source directory {srcdir}")
    text = _source_text(env, path, markup)
    resolved = str(real)
    read = _temp(env, "snipcheck_read").get(resolved)
    if read is not None and not _agrees(env, "read", resolved, read, text):
        # What Sphinx read (before any handler) is not the file now: it was
        # written in between.  Read the page again next time (its mtime may
        # lie before the time Sphinx stamps the read with).
        _temp(env, "snipcheck_changed")[resolved] = True
        env.note_reread()
        raise _NotWritable(CHANGED_WHILE_READ.format(path=path))
    parsed = _temp(env, "snipcheck_parsed").get(resolved)
    if parsed is not None and not _agrees(env, "parsed", resolved, parsed, text):
        raise _NotWritable(
            "the text Sphinx parsed differs from the file (a source-read or include-read handler changed "
            "it), so line numbers do not point into the file"
        )
    opening = line - 1
    content = list(directive.content)
    if markup == "myst":
        geometry = _myst_geometry(directive, text, opening, content)
    else:
        geometry = _rst_geometry(directive, text, opening, content)
    _check_body(text, geometry, content)
    if code_lines:  # a cell: the body region a rewrite replaces is the stated output after the separator
        geometry["head_end"] += code_lines
    return geometry


def _agrees(env: BuildEnvironment, kind: str, resolved: str, seen: str, text: SourceText) -> bool:
    """Whether ``seen`` (the file's text as Sphinx read or parsed it) has the
    lines of ``text`` (the file's bytes now), worked out once per page read
    and kept in ``env.temp_data``: each of a page's N snippets asked anew
    compared the whole page N times (a 8,000-snippet page read in minutes).
    The memo holds ``seen`` and ``text`` themselves, so another read of the
    file (an include read twice) is compared anew."""
    memo = _temp(env, "snipcheck_agrees")
    hit = memo.get((kind, resolved, text.markup))
    if hit is not None and hit[0] is seen and hit[1] is text:
        return bool(hit[2])
    same = _lines(seen) == _lines(text.as_parsed())
    memo[(kind, resolved, text.markup)] = (seen, text, same)
    return same


def _lines(text: str) -> list[str]:
    """Lines as the parsers compare them: tabs expanded, trailing whitespace
    and trailing blank lines dropped (docutils' include hands over the text
    that way)."""
    lines = [line.expandtabs(8).rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _ends_with(line: str, words: Sequence[str]) -> bool:
    """Whether ``line`` ends with ``words``, whitespace between them, and
    perhaps whitespace after: the search of ``w1\\s+w2\\s+…\\s*$``, without
    compiling an expression for each directive (a snippet id in each: half
    a millisecond a snippet, on a page of 50,000)."""
    rest = line.rstrip()
    for k, word in enumerate(reversed(words)):
        if not rest.endswith(word):
            return False
        rest = rest[: len(rest) - len(word)]
        if k < len(words) - 1:
            if not rest[-1:].isspace():
                return False
            rest = rest.rstrip()
    return True


def _myst_geometry(
    directive: SphinxDirective, text: SourceText, opening: int, content: list[str]
) -> dict[str, Any]:
    first, _, rest = (directive.block_text or "").partition("\n")
    m = _FENCE.match(first)
    if m is None:
        raise _NotWritable("its fence could not be located (an unexpected myst-parser version?)")
    fence = m.group(1)
    inner = rest[: -len(fence) - 1] if rest.endswith(fence + "\n") else rest
    # myst-parser can report a line one off inside a colon-fenced directive
    # whose content starts with another colon fence: find the opening line
    opening_words = (f"{fence}{{{directive.name}}}", directive.arguments[0])
    for shift in (0, -1, 1, -2, 2):
        if _ends_with(text.line(opening + shift), opening_words):
            opening += shift
            break
    else:
        raise _NotWritable(f"line {opening + 1} of its file does not hold its opening fence {fence}")
    head_end = opening + 1 + directive.content_offset
    body_end = opening + 1 + inner.count("\n")
    src = text.line(opening)
    at = src.find(fence)
    prefix = re.sub(r"[^\s>]", " ", src[:at])
    for k, stated in enumerate(content):
        if stated.strip():
            line = text.line(head_end + k)
            if not line.endswith(stated):
                raise _NotWritable(f"its body was not found at line {head_end + k + 1} of its file")
            prefix = line[: len(line) - len(stated)]
            break
    closing = text.line(body_end) if body_end < len(text) else ""
    closed = bool(re.fullmatch(rf"[ \t>]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", closing))
    return {
        "line": opening + 1,
        "kind": _KIND[fence[0]],
        "fence": fence,
        "head_end": head_end,
        "body_end": body_end,
        "closed": closed,
        "prefix": prefix,
    }


def _rst_geometry(directive: SphinxDirective, text: SourceText, opening: int, content: list[str]) -> dict[str, Any]:
    items = list(directive.content.items)
    src = text.line(opening)
    if not _ends_with(src, ("..", f"{directive.name}::", directive.arguments[0])):
        raise _NotWritable(f"line {opening + 1} of its file does not hold its directive")
    if items:
        sources = {s for s, _ in items}
        offsets = [o for _, o in items]
        if len(sources) != 1 or offsets != list(range(offsets[0], offsets[0] + len(offsets))):
            raise _NotWritable("its body is not one run of lines of one file")
        head_end, body_end = offsets[0], offsets[-1] + 1
        k, stated = next((k, s) for k, s in enumerate(content) if s.strip())
        line = text.line(head_end + k).rstrip()
        if not line.endswith(stated) or "\t" in line[: len(line) - len(stated)]:
            raise _NotWritable(f"its body was not found at line {head_end + k + 1} of its file")
        prefix = line[: len(line) - len(stated)]
    else:
        block = (directive.block_text or "").rstrip("\n")
        head_end = opening + block.count("\n") + 1
        prefix = src[: len(src) - len(src.lstrip())] + "   "
        body_end = head_end
    return {"kind": "rst", "fence": "", "head_end": head_end, "body_end": body_end, "closed": False, "prefix": prefix}


def _check_body(text: SourceText, geometry: dict[str, Any], content: list[str]) -> None:
    """The lines between ``head_end`` and ``body_end`` must be the body, with
    the prefix, as the parser read it (trailing blank lines aside)."""
    prefix = geometry["prefix"]
    region = []
    for i in range(geometry["head_end"], geometry["body_end"]):
        line = text.line(i)
        if line.startswith(prefix):
            region.append(line[len(prefix) :])
        elif not line.strip() or line == prefix.rstrip():
            region.append("")
        else:
            raise _NotWritable(f"line {i + 1} of its file is not part of its body as the parser read it")
    if geometry["kind"] == "rst":
        region = [line.rstrip() for line in region]
    if region[: len(content)] != content or any(line.strip() for line in region[len(content) :]):
        raise _NotWritable(
            f"lines {geometry['head_end'] + 1}-{geometry['body_end']} of its file do not hold its body as the parser read it"
        )


def note_read(app: Sphinx, docname: str, source: list[str]) -> None:
    """Keep the text of a page as Sphinx read it from disk (``source-read``, run first)."""
    path = Path(app.env.doc2path(docname)).resolve()
    _temp(app.env, "snipcheck_read")[str(path)] = source[0]


def note_read_include(app: Sphinx, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    """Keep the text of an included file as read from disk (``include-read``, run first)."""
    path = (Path(app.srcdir) / relative_path).resolve()
    _temp(app.env, "snipcheck_read")[str(path)] = content[0]


def changed_since_read(app: Sphinx, env: BuildEnvironment, added: AbstractSet[str], changed: AbstractSet[str],
                       removed: AbstractSet[str]) -> list[str]:  # fmt: skip
    """``env-get-outdated``: the documents to read again because a file of
    theirs holds other bytes than when their placements were read.

    Sphinx re-reads a page whose modification time is later than its last
    read's; a write that lands while a page is being read (another
    ``record``, say) can bear an earlier time, and the page would keep
    placements of bytes no longer on disk.
    """
    stale = []
    known: dict[str, str] = {}
    for docname, found in placements(env).items():
        if docname in added or docname in changed or docname in removed:
            continue
        for p in found:
            if not p.digest:
                continue
            if p.source not in known:
                try:
                    known[p.source] = hashlib.sha256(Path(p.source).read_bytes()).hexdigest()
                except OSError:
                    known[p.source] = ""
            if known[p.source] != p.digest:
                stale.append(docname)
                break
    return stale


def note_parsed(app: Sphinx, docname: str, source: list[str]) -> None:
    """Keep the text a page is parsed from (``source-read``, run last)."""
    path = Path(app.env.doc2path(docname)).resolve()
    _temp(app.env, "snipcheck_parsed")[str(path)] = source[0]


def note_included(app: Sphinx, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    """Keep the text an included file is parsed from (``include-read``, run last)."""
    path = (Path(app.srcdir) / relative_path).resolve()
    _temp(app.env, "snipcheck_parsed")[str(path)] = content[0]


class PlacementCollector(EnvironmentCollector):
    """Keeps :func:`placements` right across incremental and parallel builds."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        placements(env).pop(docname, None)
        code_blocks(env).pop(docname, None)
        script_failures(env).pop(docname, None)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str], other: BuildEnvironment) -> None:
        tables: list[tuple[dict[str, Any], dict[str, Any]]] = [
            (placements(env), placements(other)),
            (code_blocks(env), code_blocks(other)),
            (script_failures(env), script_failures(other)),
        ]
        for mine, theirs in tables:
            for docname in docnames:
                if docname in theirs:
                    mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        pass  # placements are recorded by the directives while the page is read


# --- reading the index without a build ---------------------------------------------


class IndexBuilder(StandaloneHTMLBuilder):
    """``snipcheck-index``: reads every page (execution off) and writes nothing.

    An HTML builder that never writes: the project's extensions and theme see
    the builder they see in a real build (furo, for one, refuses any other),
    so the pages are read exactly as the build reads them.
    """

    name = "snipcheck-index"
    epilog = ""
    allow_parallel = True

    def get_outdated_docs(self) -> Iterator[str]:
        yield from ()

    def get_target_uri(self, docname: str, typ: str | None = None) -> str:
        return ""

    def write_documents(self, docnames: AbstractSet[str]) -> None:
        pass

    def write_doc(self, docname: str, doctree: nodes.document) -> None:
        pass

    def finish(self) -> None:
        pass


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
    """

    placements: list[Placement]
    code: list[CodeBlock]
    srcdir: Path
    confdir: Path
    documents: int
    warnings: str
    unreadable: tuple[tuple[str, int, str], ...] = ()
    unplaced: tuple[tuple[str, int, str], ...] = ()


@contextlib.contextmanager
def _app(
    srcdir: Path, confdir: Path, doctreedir: Path, overrides: Mapping[str, Any], warning: io.StringIO
) -> Iterator[Sphinx]:
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    settings = {**overrides, "snipcheck_execute": False}
    with patch_docutils(confdir), docutils_namespace(), _pristine_source_suffix():
        app = Sphinx(
            str(srcdir),
            str(confdir),
            str(doctreedir / "out"),
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


def read_index(srcdir: Path, confdir: Path, doctreedir: Path, overrides: Mapping[str, Any] | None = None) -> Index:
    """Read every page of the project as the build does, with execution off.

    :param doctreedir: where the index keeps its environment between reads
        (inside the build directory, never the sources).
    :raises sphinx.errors.SphinxError: if the project cannot be read at all
        (no ``conf.py``, a broken configuration).
    """
    warning = io.StringIO()
    with _app(srcdir, confdir, doctreedir, overrides or {}, warning) as app:
        app.build()
        env = app.env
        code = [c for docname in sorted(code_blocks(env)) for c in code_blocks(env)[docname]]
        from snipcheck.sphinxext.pages import unreadable

        left_out = tuple(entry for _, entry in sorted(unreadable(env).items()))
        unplaced = tuple(entry for docname in sorted(script_failures(env)) for entry in script_failures(env)[docname])
        return Index(
            all_placements(env), code, Path(app.srcdir), Path(app.confdir), len(env.found_docs) + len(left_out),
            warning.getvalue(), left_out, unplaced,
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


def register(app: Sphinx) -> None:
    app.add_env_collector(PlacementCollector)
    app.add_builder(IndexBuilder)
    # Lower priorities run first: before any handler that may change the text.
    app.connect("source-read", note_read, priority=-1000)
    app.connect("include-read", note_read_include, priority=-1000)
    app.connect("source-read", note_parsed, priority=900)
    app.connect("include-read", note_included, priority=900)
    app.connect("env-get-outdated", changed_since_read)
