"""A Sphinx project as the command line sees it: settings, placements, safe rewrites.

:class:`Project` is what ``record``, ``verify``, ``accept``, the lint and the
pytest plugin share: the project's ``snipcheck_*`` settings, its placement
index read through Sphinx exactly as the build reads it
(:func:`snipcheck.app.index_reader.read_index`), and :meth:`Project.rewrite`,
which works out new stated outputs and reads them back through the page's own
parser before anything may be written.

This module imports Sphinx lazily: the settings alone need none.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snipcheck.files import ChangedOnDisk
from snipcheck.model import Snippet
from snipcheck.pending import notebook_write
from snipcheck.settings import ConfError, Settings
from snipcheck.sources.chains import Broken, attach
from snipcheck.sources.placement import Placement
from snipcheck.sources.rewrite import Edit, Unwritable, apply
from snipcheck.sources.snippets import SnippetError, find
from snipcheck.sources.sourcetext import SourceError, SourceText, content

if TYPE_CHECKING:
    from snipcheck.app.index_reader import Index


class ProjectError(Exception):
    """The project cannot be read, or holds no placement (the message says where it looked)."""


@dataclass
class Project:
    """One Sphinx project.

    :param settings: its resolved ``snipcheck_*`` settings.
    :param srcdir: the source directory the command line reads
        (``snipcheck_source_dir``, or ``--source-dir``).
    """

    settings: Settings
    srcdir: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    _index: Index | None = field(default=None, repr=False)
    _loaded: dict[Placement, Snippet] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, confdir: Path, srcdir: Path | None = None, **overrides: Any) -> tuple[Project, list[str]]:
        """Read ``confdir/conf.py``.

        :return: the project and the messages about invalid settings.
        :raises ProjectError: if there is no ``conf.py``, or running it raised.
        """
        try:
            settings, messages = Settings.from_conf(confdir, **overrides)
        except FileNotFoundError as exc:
            raise ProjectError(f"{exc}; give the directory that holds conf.py with --conf-dir") from None
        except ConfError as exc:
            raise ProjectError(str(exc)) from None
        source = (srcdir or settings.source_dir or settings.root).resolve()
        return cls(settings, source, dict(overrides)), messages

    @property
    def confdir(self) -> Path:
        return self.settings.root

    def index(self) -> Index:
        """The placement index (read once per :class:`Project`).

        :raises ProjectError: if Sphinx cannot read the project.
        """
        if self._index is None and not self.srcdir.is_dir():
            state = "is not a directory" if self.srcdir.exists() else "does not exist"
            raise ProjectError(f"the source directory {self.srcdir} {state}; give the pages' folder with --source-dir")
        if self._index is None:
            from sphinx.errors import SphinxError

            from snipcheck.app.index_reader import read_index

            try:
                self._index = read_index(
                    self.srcdir, self.confdir, self.settings.cache_dir / "index", self.overrides
                )
            except SphinxError as exc:
                raise ProjectError(f"Sphinx cannot read {self.srcdir} with {self.confdir / 'conf.py'}: {exc}") from None
        return self._index

    def placements(self) -> list[Placement]:
        """Every placement, by document, then in reading order.

        :raises ProjectError: if there is none (the message says where it looked).
        """
        index = self.index()
        if not index.placements and index.unreadable:
            raise ProjectError(
                f"no snippet found in {self.srcdir}: {len(index.unreadable)} of its {index.documents} document(s) "
                "could not be read (see above); fix them, then run this again"
            )
        if not index.placements and index.unplaced:
            raise ProjectError(
                f"no snippet placed in {self.srcdir}: {len(index.unplaced)} snippet-script block(s) there placed "
                "none of their cells (see above); fix them, then run this again"
            )
        if not index.placements:
            raise ProjectError(
                f"no snippet placed in {self.srcdir}: Sphinx read {index.documents} document(s) there with "
                f"{self.confdir / 'conf.py'} and found no snippet directive; give the pages' folder with "
                "--source-dir, or set snipcheck_source_dir in conf.py"
            )
        return index.placements

    def unreadable(self) -> list[tuple[str, int, str]]:
        """``(path, line, message)`` of each page Sphinx could not read (see
        :mod:`snipcheck.sphinxext.pages`), and of each ``snippet-script`` that
        placed none of its cells: what they place is unknown.

        :raises ProjectError: if Sphinx cannot read the project.
        """
        index = self.index()
        return [*index.unreadable, *index.unplaced]

    def problems(self) -> list[tuple[str, int, str]]:
        """``(path, line, message)`` of each problem of the pages' snippet
        markup that fails the build (a snippet placed more than once, its code
        written twice): a command that passed over it would pass where the
        build fails.

        :raises ProjectError: if Sphinx cannot read the project.
        """
        return list(self.index().problems)

    def snippet(self, placement: Placement) -> Snippet:
        """The snippet ``placement`` runs: its code written in the page, else
        its file; for a cell of a chain, with the cells before it
        (:func:`snipcheck.sources.chains.attach`) and the ids of those after it
        (``Snippet.later``).

        :raises snipcheck.sources.snippets.SnippetError: if it cannot be loaded, or
            an earlier cell of its chain cannot.
        """
        if not placement.chain:
            return self._plain(placement)
        same = [p for p in self.index().placements if p.docname == placement.docname and p.chain == placement.chain]
        at = same.index(placement)
        items: list[tuple[str, str, Snippet | None]] = []
        for p in same[: at + 1]:
            try:
                items.append((p.docname, p.chain, self._plain(p)))
            except SnippetError:
                if p is placement:
                    raise
                items.append((p.docname, p.chain, None))
        linked = attach(items)[-1]
        if isinstance(linked, Broken):
            raise SnippetError(linked.message)
        assert linked is not None
        # A run of this cell alone still checks that it lets the process go on (snipcheck.engine.chain_job).
        return dataclasses.replace(linked, later=tuple(p.snippet_id for p in same[at + 1 :]))

    def _plain(self, placement: Placement) -> Snippet:
        found = self._loaded.get(placement)
        if found is None:
            refused = self.index().load_errors.get(placement)
            if refused is not None:  # the build could not load it there: neither does the command line
                raise SnippetError(refused)
            code = next(
                (c for c in self.index().code if c.docname == placement.docname and c.snippet_id == placement.snippet_id),
                None,
            )
            found = self._loaded[placement] = find(placement.snippet_id, code, self.settings.snippets_dir, self.settings.root)
        return found

    def rewrite(self, edits: Sequence[Edit]) -> dict[Path, tuple[bytes, bytes]]:
        """New bytes for every file ``edits`` touch, read back through the build's parser.

        Nothing is written here.  Each new text changes only the edited bodies
        (see :mod:`snipcheck.sources.rewrite`); it is then parsed again as the build
        would parse it, and must yield the same placements with exactly the
        new stated outputs, and every cell of the rewritten pages the same
        code lines, byte for byte (the author's code is never written over,
        whatever a bug upstream would make of it).

        :return: file → ``(old bytes, new bytes)``; write them with
            ``write_all(new, expected=old)`` (:func:`snipcheck.files.write_all`).
        :raises snipcheck.files.ChangedOnDisk: if a file holds other bytes
            than when the index read it (another process wrote it since).
        :raises Unwritable: naming the file, the snippet and why, if a body
            cannot be written where it sits, a file is a snippet file or lies
            outside the source directory, or the page would read back
            differently.

        A notebook cell's edit replaces that cell's outputs in its ``.ipynb``
        and nothing else, read back through nbformat
        (:func:`snipcheck.pending.notebook_write.rewrite`).
        """
        by_file: dict[Path, list[Edit]] = defaultdict(list)
        notebooks: dict[Path, list[Edit]] = defaultdict(list)
        read_as: dict[Path, set[str]] = defaultdict(set)  # each file itself -> the paths Sphinx read it by
        for edit in edits:
            notebook = edit.placement.markup == notebook_write.MARKUP
            # The file itself: a page that is a link is rewritten through it, and the link stays.
            real = Path(edit.placement.source).resolve()
            (notebooks if notebook else by_file)[real].append(edit)
            read_as[real].add(edit.placement.source)
        for real, paths in sorted(read_as.items()):
            if len(paths) > 1:
                shown = " and ".join(sorted(paths))
                raise Unwritable(
                    f"{shown} are one file, {real} (a link to it): Sphinx reads it as {len(paths)} pages, so each of its "
                    "snippets is placed more than once; leave all but one out of the build (exclude_patterns in conf.py)"
                )
        snippets_dir = self.settings.snippets_dir.resolve()
        out: dict[Path, tuple[bytes, bytes]] = {}
        for path, cells in sorted(notebooks.items()):
            if not path.resolve().is_relative_to(self.srcdir):
                raise Unwritable(f"{path}: lies outside the source directory {self.srcdir}; nothing is written there")
            out[path] = notebook_write.rewrite(path, cells)
        if not by_file:
            return out
        texts: dict[str, str] = {}
        lines: dict[str, tuple[SourceText, SourceText]] = {}  # file -> its lines before and after
        for path, file_edits in sorted(by_file.items()):
            real = path.resolve()
            if real.is_relative_to(snippets_dir):
                raise Unwritable(f"{path}: a snippet file is never rewritten; a stated output lives in a page")
            if not real.is_relative_to(self.srcdir):
                raise Unwritable(f"{path}: lies outside the source directory {self.srcdir}; nothing is written there")
            markups = {e.placement.markup for e in file_edits}
            try:
                raw = path.read_bytes()
                text = SourceText.from_bytes(path, raw, markups.pop() if len(markups) == 1 else "rst")
            except (OSError, SourceError) as exc:
                raise Unwritable(f"{path}: {exc}") from None
            digest = hashlib.sha256(raw).hexdigest()
            if any(e.placement.digest not in ("", digest) for e in file_edits):
                raise ChangedOnDisk(path)  # the edits' line numbers are of bytes no longer there
            if len({e.placement.markup for e in file_edits}) > 1 and text.text != text.as_parsed():
                raise Unwritable(f"{path}: holds reStructuredText and MyST placements and line breaks they count differently")
            before = dataclasses.replace(text, lines=list(text.lines))
            apply(text, file_edits)
            out[path] = (raw, text.to_bytes())
            texts[str(real)] = text.as_parsed()
            lines[str(real)] = (before, text)
        self._read_back([e for page in by_file.values() for e in page], texts, lines)
        return out

    def _read_back(
        self, edits: Sequence[Edit], texts: dict[str, str], lines: dict[str, tuple[SourceText, SourceText]]
    ) -> None:
        from snipcheck.app.index_reader import read_back_cells

        changed = set(texts)
        docnames = sorted({p.docname for p in self.index().placements if str(Path(p.source).resolve()) in changed})
        wanted = {(e.placement.docname, e.placement.line, e.placement.source): e.body for e in edits}
        before: dict[str, list[Placement]] = defaultdict(list)
        for p in self.index().placements:
            before[p.docname].append(p)
        after, code = read_back_cells(self.srcdir, self.confdir, docnames, texts, self.overrides)
        for docname in docnames:
            old, new = before[docname], after.get(docname, [])
            if [(p.snippet_id, p.directive) for p in old] != [(p.snippet_id, p.directive) for p in new]:
                raise Unwritable(
                    f"{docname}: the rewritten page would place other snippets "
                    f"({[p.snippet_id for p in new]} instead of {[p.snippet_id for p in old]}); nothing was written"
                )
            for o, n in zip(old, new, strict=True):
                block = next((c for c in code.get(docname, []) if c.snippet_id == n.snippet_id), None)
                _same_code(o, n, block.body_line if block is not None else None, lines.get(str(Path(o.source).resolve())))
                body = wanted.get((o.docname, o.line, o.source), o.stated)
                if n.stated not in (body, body + "\n"):
                    raise Unwritable(
                        f"{o.location}: snippet {o.snippet_id!r}: written into the page, its stated output would read "
                        f"back as {_excerpt(n.stated)} instead of {_excerpt(body)}, so it would never match"
                        + _fence_hint(body) + "; nothing was written"
                    )


def _same_code(
    old: Placement, new: Placement, first: int | None, texts: tuple[SourceText, SourceText] | None
) -> None:
    """Refuse a rewrite that would change a line of a cell's code (its code
    and separator lines, ``options_end`` to ``head_end``), as the page reads
    before and after it: each the same text with the same line end (the
    separator's own line end aside, which a rewrite adds where it ended the
    file without one).

    :param first: the 1-based line where the cell's code begins in the new
        text, as its parser read it (``CodeBlock.body_line``), ``None`` when
        it found no code there.
    :raises Unwritable: naming the cell and the first line that would change.
    """
    if not old.code_lines or texts is None:
        return
    before, after = texts
    was = before.lines[old.options_end : old.head_end]
    now = after.lines[first - 1 : first - 1 + new.code_lines] if first is not None and new.code_lines else []
    if len(was) == len(now) and was[:-1] == now[:-1] and (not was or content(was[-1]) == content(now[-1])):
        return
    at = next((k for k, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), min(len(was), len(now)))
    first_was = content(was[at]) if at < len(was) else "(no line)"
    first_now = content(now[at]) if at < len(now) else "(no line)"
    raise Unwritable(
        f"{old.location}: snippet {old.snippet_id!r}: the rewrite would change the cell's code at line "
        f"{old.options_end + at + 1} ({_excerpt(first_was)} would read {_excerpt(first_now)}); a stated output is "
        "written after the separator only and the code is never touched, so nothing was written (a bug: please "
        "report it with the page)"
    )


def _fence_hint(body: str) -> str:
    """What to do when an output line looks like a fence that closes an enclosing directive."""
    fences = re.findall(r"^ {0,3}(`{3,}|~{3,}|:{3,})", body, re.MULTILINE)
    if not fences:
        return ""
    longest = max(fences, key=len)
    return (
        f" (a line of its output, {longest!r}, closes a directive around it fenced with {longest[0]!r}: "
        "fence that directive with another character or longer fences)"
    )


def _excerpt(text: str, width: int = 80) -> str:
    return repr(text if len(text) <= width else text[:width] + "…")
