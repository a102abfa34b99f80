"""The placement index: every snippet directive, recorded as the build reads it.

"Where are the snippets, and what does each page state?" has one answer, the
one the build's own parse gives.  The ``snippet`` and ``refuted-claim``
directives call :func:`capture` while Sphinx reads a page, with whatever
parser Sphinx uses for it (docutils for reStructuredText, myst-parser for
MyST, directives nested in tab sets and dropdowns, included files); the
:class:`PlacementCollector` keeps the result per document in
``env.snipcheck_placements`` across incremental and parallel builds.

Where the directive sits in its file (the geometry a rewrite needs) is
worked out by the sources layer, one module a markup
(:mod:`snipcheck.sources.myst_geometry`, :mod:`snipcheck.sources.rst_geometry`);
this module checks that the file is what the parser read and keeps the
result.  The command line, the lint and the pytest plugin get the same set
from :func:`snipcheck.app.index_reader.read_index`, a Sphinx read through
the ``snipcheck-index`` builder (:mod:`snipcheck.sphinxext.index_builder`).

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.environment.collectors import EnvironmentCollector

from snipcheck.sources import escapes
from snipcheck.sources.geometry import NotWritable, Parsed, check_body
from snipcheck.sources.myst_geometry import myst_geometry
from snipcheck.sources.placement import CodeBlock, Placement
from snipcheck.sources.rst_geometry import rst_geometry
from snipcheck.sources.sourcetext import SourceError, SourceText

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.util.docutils import SphinxDirective

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


def page_problems(env: BuildEnvironment) -> dict[str, list[tuple[str, int, str]]]:
    """``env.snipcheck_page_problems``: docname → ``(path, line, message)`` of
    each problem a page's snippet markup has that fails the build but leaves
    no placement to tell it by (the code of a snippet written twice, see
    :mod:`.code`), kept with the page so that the command line, which reads
    the pages as the build does, fails on it too."""
    if not hasattr(env, "snipcheck_page_problems"):
        env.snipcheck_page_problems = {}  # type: ignore[attr-defined]
    return env.snipcheck_page_problems  # type: ignore[attr-defined,no-any-return]


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
    except NotWritable as exc:
        geometry = {"kind": "", "fence": "", "head_end": 0, "body_end": 0, "closed": False, "prefix": ""}
        geometry["writable"] = str(exc)
    geometry["digest"] = _digest(env, path, markup)
    base["line"] = geometry.pop("line", base["line"])
    placement = Placement(**base, **geometry)  # type: ignore[arg-type]
    placements(env).setdefault(env.docname, []).append(placement)
    return placement


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
        raise NotWritable(f"cannot read its source: {found}")
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
        raise NotWritable("it sits in a notebook cell; edit the notebook's stated output by hand, from a real run")
    srcdir, real = _resolved(env, Path(env.srcdir)), _resolved(env, path)
    if not real.is_relative_to(srcdir):
        raise NotWritable(f"its file {real} lies outside the source directory {srcdir}")
    text = _source_text(env, path, markup)
    resolved = str(real)
    read = _temp(env, "snipcheck_read").get(resolved)
    if (
        read is not None
        and not _agrees(env, "read", resolved, read, text)
        and real != _resolved(env, Path(env.doc2path(env.docname)))  # only an included file is read in part
        and _is_part(read, text)
    ):
        raise NotWritable(PART_INCLUDED.format(path=path))
    if read is not None and not _agrees(env, "read", resolved, read, text):
        # What Sphinx read (before any handler) is not the file now: it was
        # written in between.  Read the page again next time (its mtime may
        # lie before the time Sphinx stamps the read with).
        _temp(env, "snipcheck_changed")[resolved] = True
        env.note_reread()
        raise NotWritable(CHANGED_WHILE_READ.format(path=path))
    seen = _temp(env, "snipcheck_parsed").get(resolved)
    if seen is not None and not _agrees(env, "parsed", resolved, seen, text):
        raise NotWritable(
            "the text Sphinx parsed differs from the file (a source-read or include-read handler changed "
            "it), so line numbers do not point into the file"
        )
    parsed = Parsed(
        name=directive.name,
        argument=directive.arguments[0],
        block_text=directive.block_text or "",
        content=tuple(directive.content),
        content_offset=directive.content_offset,
        items=tuple(directive.content.items),
    )
    opening = line - 1
    geometry = myst_geometry(parsed, text, opening) if markup == "myst" else rst_geometry(parsed, text, opening)
    check_body(text, geometry, parsed.content)
    if code_lines:  # a cell: the body region a rewrite replaces is the stated output after the separator
        geometry["head_end"] += code_lines
    return geometry


#: What a placement says when it sits in part of a file that a page includes.
PART_INCLUDED = (
    "it sits in a part of {path} that a page includes (:start-line:, :end-line:, :start-after: or "
    ":end-before:), where line numbers need not point into the file; include the whole file, "
    "or place the snippet in the page itself"
)


def _is_part(seen: str, text: SourceText) -> bool:
    """Whether ``seen`` (what an include handed over) is a run of the lines of
    ``text`` (the file now) short of all of them (``:start-after:`` may cut
    its first line short)."""
    part, whole = _lines(seen), _lines(text.as_parsed())
    while part and not part[0]:
        part.pop(0)
    if not part or len(part) >= len(whole):
        return False
    return "\n".join(part) + "\n" in "\n".join(whole) + "\n"


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
        page_problems(env).pop(docname, None)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: AbstractSet[str], other: BuildEnvironment) -> None:
        tables: list[tuple[dict[str, Any], dict[str, Any]]] = [
            (placements(env), placements(other)),
            (code_blocks(env), code_blocks(other)),
            (script_failures(env), script_failures(other)),
            (page_problems(env), page_problems(other)),
        ]
        for mine, theirs in tables:
            for docname in docnames:
                if docname in theirs:
                    mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        pass  # placements are recorded by the directives while the page is read


def register(app: Sphinx) -> None:
    app.add_env_collector(PlacementCollector)
    # Lower priorities run first: before any handler that may change the text.
    app.connect("source-read", note_read, priority=-1000)
    app.connect("include-read", note_read_include, priority=-1000)
    app.connect("source-read", note_parsed, priority=900)
    app.connect("include-read", note_included, priority=900)
    app.connect("env-get-outdated", changed_since_read)
