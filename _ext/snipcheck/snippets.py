"""Find and load snippet files by snippet id.

A snippet id is the file's path under the snippets directory without its
suffix (``inplace/leaf-add`` for ``snippets/inplace/leaf-add.py``).  Ids are
checked before any file is touched, so an id cannot name a file outside the
snippets directory.

Pure core: standard library and :mod:`snipcheck.model`, :mod:`snipcheck.tags`.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import tags as tags_mod
from .model import Snippet

#: File suffix → language.
SUFFIXES = {".py": "python", ".rs": "rust"}
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*$")


class SnippetError(Exception):
    """A snippet that cannot be loaded.

    :param message: what is wrong and what to do.
    :param path: the file concerned, if any.
    :param line: 1-based line in ``path``, if known.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line


def check_id(snippet_id: str) -> None:
    """Reject ids that are not plain relative paths.

    :raises SnippetError: for an empty id, an absolute path, ``..`` segments,
        a suffix, or characters outside ``A-Z a-z 0-9 _ - . /``.
    """
    if not _ID_RE.match(snippet_id) or any(part in ("", ".", "..") for part in snippet_id.split("/")):
        raise SnippetError(
            f"invalid snippet id {snippet_id!r}: an id is a path under the snippets "
            "directory without suffix, made of letters, digits, '-', '_' and '/', "
            "e.g. 'inplace/leaf-add'"
        )
    if Path(snippet_id).suffix in SUFFIXES:
        raise SnippetError(
            f"invalid snippet id {snippet_id!r}: leave out the suffix "
            f"(write {snippet_id[: -len(Path(snippet_id).suffix)]!r})"
        )


def locate(snippet_id: str, snippets_dir: Path) -> Path:
    """Return the file of ``snippet_id``.

    :raises SnippetError: if the id is invalid, resolves outside
        ``snippets_dir`` (through a symbolic link, say), matches no file, or
        matches more than one (``x.py`` and ``x.rs``).
    """
    check_id(snippet_id)
    root = snippets_dir.resolve()
    found = [snippets_dir / f"{snippet_id}{suffix}" for suffix in SUFFIXES]
    found = [p for p in found if p.is_file()]
    if not found:
        tried = " or ".join(f"{snippets_dir.name}/{snippet_id}{s}" for s in SUFFIXES)
        raise SnippetError(
            f"snippet {snippet_id!r} not found: no file {tried}; create it "
            f"(nox -s new -- {snippet_id}) or fix the id"
        )
    if len(found) > 1:
        raise SnippetError(
            f"snippet id {snippet_id!r} is ambiguous: "
            + " and ".join(str(p) for p in found)
            + " both exist; rename one"
        )
    path = found[0]
    if not path.resolve().is_relative_to(root):
        raise SnippetError(
            f"snippet {snippet_id!r} resolves to {path.resolve()}, outside "
            f"{root}; snippets must live under the snippets directory"
        )
    return path


def load(snippet_id: str, snippets_dir: Path, project_root: Path) -> Snippet:
    """Load and parse one snippet.

    :param snippets_dir: the snippets directory.
    :param project_root: the directory paths are shown relative to (the
        directory holding ``conf.py``).
    :raises SnippetError: if the file cannot be found or read, is not UTF-8,
        or its tag block is malformed (then ``path`` and ``line`` are set).
    """
    path = locate(snippet_id, snippets_dir)
    shown = _shown_path(path, project_root)
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SnippetError(f"{shown} is not valid UTF-8 ({exc.reason}); save it as UTF-8", shown) from None
    except OSError as exc:
        raise SnippetError(f"cannot read {shown}: {exc.strerror}", shown) from None
    language = SUFFIXES[path.suffix]
    try:
        block = tags_mod.parse(source, language)
    except tags_mod.TagError as exc:
        raise SnippetError(exc.message, shown, exc.line) from None
    return Snippet(
        id=snippet_id,
        path=shown,
        abspath=str(path.resolve()),
        language=language,
        source=source,
        code=block.code,
        code_lineno=block.code_lineno,
        tags=block.tags,
        helpers=_helpers(path, project_root),
    )


def _helpers(path: Path, project_root: Path) -> tuple[tuple[str, str], ...]:
    """Helper modules beside ``path`` (``_name.py``): what a plain run could import."""
    if path.suffix != ".py":
        return ()
    found = []
    for helper in sorted(path.parent.glob("_*.py")):
        try:
            found.append((_shown_path(helper, project_root), helper.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue  # an unreadable helper fails the snippet's import, visibly
    return tuple(found)


def discover(snippets_dir: Path) -> list[str]:
    """All snippet ids under ``snippets_dir``, sorted.

    Files whose names start with ``_`` or ``.`` are helpers, not snippets.
    """
    ids = set()
    for path in snippets_dir.rglob("*"):
        if path.suffix in SUFFIXES and path.is_file():
            rel = path.relative_to(snippets_dir)
            if any(part.startswith(("_", ".")) for part in rel.parts):
                continue
            ids.add(rel.with_suffix("").as_posix())
    return sorted(ids)


def _shown_path(path: Path, project_root: Path) -> str:
    try:
        return path.resolve().relative_to(project_root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
