"""Find and load snippet files by snippet id.

A snippet id is the file's path under the snippets directory without its
suffix (``inplace/leaf-add`` for ``snippets/inplace/leaf-add.py``).  Ids are
checked before any file is touched, so an id cannot name a file outside the
snippets directory, nor one longer than file systems allow
(:data:`MAX_ID_LENGTH`).

A snippet is shown, and run, at a relative path: ``snippets/inplace/x.py``,
the snippets directory's path from the project root followed by the id, or,
for a snippets directory outside the project
(``snipcheck_snippets_dir = "../shared-snippets"``), its own name followed by
the id (``shared-snippets/x.py``).  Runs copy the snippet and its helper
modules (``_*.py`` beside it, which must lie inside the snippets directory) to
these paths inside a run directory; nothing is run in place.

Pure core: standard library and :mod:`snipcheck.model`, :mod:`snipcheck.sources.tags`,
:mod:`snipcheck.sources.inputs`, :mod:`snipcheck.sources.script_imports`.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import threading
import time
from pathlib import Path

from snipcheck.model import Snippet
from snipcheck.sources import inputs, script_imports
from snipcheck.sources import tags as tags_mod
from snipcheck.sources.placement import CodeBlock

#: The longest snippet id, in characters: an id becomes file names (the
#: snippet's, its diff's) that must stay well under the usual 255-byte limit.
MAX_ID_LENGTH = 100

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
        a suffix, characters outside ``A-Z a-z 0-9 _ - . /``, or more than
        :data:`MAX_ID_LENGTH` characters.
    """
    if len(snippet_id) > MAX_ID_LENGTH:
        raise SnippetError(
            f"snippet id {snippet_id[:40]!r}... is {len(snippet_id)} characters long; an id names files, "
            f"so it may have at most {MAX_ID_LENGTH}: shorten it (and rename its file)"
        )
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
    return _locate(snippet_id, snippets_dir)[0]


def _locate(snippet_id: str, snippets_dir: Path) -> tuple[Path, Path]:
    """:func:`locate`, and the file resolved (its links followed), which a
    caller would otherwise resolve again (a ``lstat`` per component)."""
    check_id(snippet_id)
    try:
        root = _resolved_dir(snippets_dir)
    except OSError as exc:  # e.g. ENAMETOOLONG under a deep snippets directory
        raise SnippetError(f"cannot look up snippet {snippet_id!r} in {snippets_dir}: {exc.strerror or exc}") from None
    found = []
    for suffix in SUFFIXES:
        candidate = snippets_dir / f"{snippet_id}{suffix}"
        why = unusable(candidate, f"{snippets_dir.name}/{snippet_id}{suffix}")
        if why:
            raise SnippetError(f"snippet {snippet_id!r}: {why}")
        if why is not None:
            found.append(candidate)
    if not found:
        tried = " or ".join(f"{snippets_dir.name}/{snippet_id}{s}" for s in SUFFIXES)
        raise SnippetError(
            f"snippet {snippet_id!r} not found: no file {tried}, and no snippet-code block with this id "
            f"earlier in the page; create the file (snipcheck new {snippet_id}), write the code in the page, "
            "or fix the id"
        )
    if len(found) > 1:
        raise SnippetError(
            f"snippet id {snippet_id!r} is ambiguous: "
            + " and ".join(str(p) for p in found)
            + " both exist; rename one"
        )
    path = found[0]
    real = path.resolve()
    if not real.is_relative_to(root):
        raise SnippetError(
            f"snippet {snippet_id!r} resolves to {real}, outside "
            f"{root}; snippets must live under the snippets directory"
        )
    return path, real


def _resolved_dir(snippets_dir: Path) -> Path:
    """``snippets_dir.resolve()``, worked out once a second at most for a
    folder (a build looks up every snippet in it, a ``lstat`` per component
    each time): a folder that became a link since is resolved anew then."""
    key = (str(snippets_dir), int(time.monotonic()))
    with _resolved_lock:
        found = _resolved_dirs.get(key)
    if found is None:
        found = snippets_dir.resolve()
        with _resolved_lock:
            for old in [k for k in _resolved_dirs if k[1] != key[1]]:
                del _resolved_dirs[old]  # of an earlier second
            _resolved_dirs[key] = found
    return found


_resolved_dirs: dict[tuple[str, int], Path] = {}
_resolved_lock = threading.Lock()


_KINDS = {stat.S_IFIFO: "a named pipe", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device"}  # fmt: skip


def unusable(path: Path, shown: str, what: str = "snippet") -> str | None:
    """Why ``path`` cannot be a snippet's file (or a page): ``None`` when
    nothing is there, ``""`` for a regular file (or a link to one), else what
    is there instead and what to do (a loop of symbolic links, a link to
    nothing, a folder, a pipe, a folder that cannot be searched).  Only
    ``lstat``/``stat``: a pipe is never opened (a read would block).

    :param shown: the path as messages show it.
    :param what: what the file is to be, as messages name it (``"page"``).
    """
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"cannot look up {shown}: {exc.strerror}{_read_advice(exc, 'its folder searchable (chmod u+x)')}"
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return f"{shown} is a loop of symbolic links ({_chain(path)}); point the link at a file"
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return (
                    f"{shown} is a symbolic link to {os.readlink(path)}, which does not exist; "
                    "fix the link or remove it"
                )
            return f"cannot follow the symbolic link {shown}: {exc.strerror}"
    if stat.S_ISDIR(st.st_mode):
        return f"{shown} is a folder, not a file; a snippet is one file: rename the folder, or fix the id"
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        return f"{shown} is {kind}, not a file; a {what} is a plain file"
    return ""


def _chain(path: Path, limit: int = 8) -> str:
    """``a.py → b.py → a.py``: the links from ``path`` until one repeats (names
    as the links hold them)."""
    names = [path.name]
    seen = {os.path.abspath(path)}
    current = path
    for _ in range(limit):
        try:
            target = os.readlink(current)
        except OSError:
            break
        names.append(target)
        current = Path(os.path.join(os.path.dirname(current), target))
        key = os.path.abspath(current)
        if key in seen:
            return " → ".join(names)
        seen.add(key)
    return " → ".join(names) + " → …"


def load(snippet_id: str, snippets_dir: Path, project_root: Path) -> Snippet:
    """Load and parse one snippet.

    :param snippets_dir: the snippets directory.
    :param project_root: the directory paths are shown relative to (the
        directory holding ``conf.py``).
    :raises SnippetError: if the file cannot be found or read, is not UTF-8,
        or its tag block is malformed (then ``path`` and ``line`` are set).
    """
    path, real = _locate(snippet_id, snippets_dir)
    shown = shown_path(snippet_id + path.suffix, snippets_dir, project_root)
    try:
        raw = path.read_bytes()
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnippetError(f"{shown} is not valid UTF-8 ({decode_error(raw, exc)}); save it as UTF-8", shown) from None
    except OSError as exc:
        raise SnippetError(f"cannot read {shown}: {exc.strerror}{_read_advice(exc)}", shown) from None
    snippet = from_text(snippet_id, source, SUFFIXES[path.suffix], shown, real, project_root)
    return dataclasses.replace(snippet, helpers=_helpers(path, shown, snippets_dir))


def decode_error(raw: bytes, exc: UnicodeDecodeError) -> str:
    """Where ``raw`` stops being UTF-8, in words: ``byte 0xe9 at line 3, column 5: invalid continuation byte``."""
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return f"byte 0x{raw[exc.start]:02x} at line {line}, column {column}: {exc.reason}"


def _read_advice(exc: OSError, make: str = "it readable (chmod u+r)") -> str:
    """What to do about ``exc``, after a ``"; "``, when it is a permission error."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"; make {make}, or run as a user who may read it"
    return ""


def from_text(
    snippet_id: str, source: str, language: str, shown: str, abspath: Path, project_root: Path, line: int = 1
) -> Snippet:
    """A snippet from its text: a file's, or the body of a ``snippet-code`` block in a page.

    :param shown: the path it runs under and tracebacks show (relative).
    :param abspath: the file that holds it (a page, for code in a page).
    :param line: the line of ``abspath`` where ``source`` starts: tag errors
        name that file's lines.
    :raises SnippetError: if its tag block is malformed or names a missing data file.
    """
    where = shown if line == 1 else str(abspath)
    try:
        block = tags_mod.parse(source, language)
    except tags_mod.TagError as exc:
        raise SnippetError(exc.message, where, exc.line + line - 1) from None
    try:
        files = inputs.resolve(block.tags.depends, project_root)
    except inputs.InputError as exc:
        at = block.key_lines.get("depends")
        raise SnippetError(f"bad value for 'depends': {exc}", where, at + line - 1 if at else None) from None
    return Snippet(
        id=snippet_id,
        path=shown,
        abspath=str(abspath),
        language=language,
        source=source,
        code=block.code,
        code_lineno=block.code_lineno,
        tags=block.tags,
        env=block.tags.env,
        files=files,
    )


def _helpers(path: Path, shown: str, snippets_dir: Path) -> tuple[tuple[str, str], ...]:
    """Helper modules beside ``path`` (``_name.py``): what a plain run could import.

    Each is shown beside the snippet (``shown``'s folder), where the run
    directory gets its copy.

    :raises SnippetError: for a helper that resolves outside the snippets
        directory (a symbolic link out of it): it is never read.
    """
    if path.suffix != ".py":
        return ()
    root = _resolved_dir(snippets_dir)
    folder = shown.rpartition("/")[0]
    found = []
    for helper in helper_files(path.parent):
        helper_shown = f"{folder}/{helper.name}" if folder else helper.name
        real = helper.resolve()
        if not real.is_relative_to(root):
            raise SnippetError(
                f"helper module {helper_shown} resolves to {real}, outside the snippets directory "
                f"{root}; helper modules must live in the snippets directory: copy it there "
                "instead of linking to it",
                helper_shown,
            )
        try:
            found.append((helper_shown, helper.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue  # an unreadable helper fails the snippet's import, visibly
    return tuple(found)


#: Folder → (its ``st_mtime_ns``, ``st_ino``, the helper files in it).
_listings: dict[Path, tuple[int, int, tuple[Path, ...]]] = {}
_listings_lock = threading.Lock()
#: A listing is reused only when the folder last changed this long ago
#: (nanoseconds): a file system stamps a change with its clock tick (a few
#: milliseconds), so an entry added within the tick of an earlier listing
#: leaves the folder's stamp as it was.
_SETTLED_NS = 2_000_000_000


def helper_files(folder: Path) -> tuple[Path, ...]:
    """The helper modules (``_*.py``) in ``folder``, sorted by name.

    A folder of many snippets is listed once, not once a snippet: a page
    that loads every snippet of a folder of *n* files would otherwise read
    *n* directory entries *n* times (a 10,000-snippet site spent most of its
    reading there).  The listing is kept while the folder's modification time
    and inode stay as they were (adding, removing or renaming a file changes
    them), and only once that time lies :data:`_SETTLED_NS` in the past.

    :return: ``()`` for a folder that cannot be listed.
    """
    try:
        st = folder.stat()
    except OSError:
        return ()
    with _listings_lock:
        kept = _listings.get(folder)
    if kept is not None and kept[:2] == (st.st_mtime_ns, st.st_ino):
        return kept[2]
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.name.startswith("_") and e.name.endswith(".py"))
    except OSError:
        return ()
    found = tuple(folder / name for name in names)
    if time.time_ns() - st.st_mtime_ns > _SETTLED_NS:
        with _listings_lock:
            _listings[folder] = (st.st_mtime_ns, st.st_ino, found)
    return found


def shown_prefix(snippets_dir: Path, project_root: Path) -> str:
    """The snippets directory as shown in snippet paths: its path from the
    project root (``snippets``), or its own name when it lies outside the
    project (``shared-snippets``); ``""`` when it is the project root."""
    rel = os.path.relpath(os.path.abspath(snippets_dir), os.path.abspath(project_root))
    if rel == os.curdir:
        return ""
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return os.path.basename(os.path.abspath(snippets_dir))
    return Path(rel).as_posix()


def shown_path(rel: str, snippets_dir: Path, project_root: Path) -> str:
    """The shown path of file ``rel`` (POSIX, relative to the snippets directory);
    always relative, without ``..`` (see the module docstring)."""
    prefix = shown_prefix(snippets_dir, project_root)
    return f"{prefix}/{rel}" if prefix else rel


def source_of(shown: str, snippets_dir: Path, project_root: Path) -> Path:
    """The file under ``snippets_dir`` that a shown path (a snippet's or a
    helper's) stands for: the inverse of :func:`shown_path`."""
    prefix = shown_prefix(snippets_dir, project_root)
    rel = shown[len(prefix) + 1 :] if prefix and shown.startswith(prefix + "/") else shown
    return snippets_dir / rel


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


def from_page(block: CodeBlock, project_root: Path) -> Snippet:
    """The snippet whose code a page holds (see :class:`~snipcheck.sources.placement.CodeBlock`).

    It runs as ``<id>.py`` (or ``.rs``), the file it would be in the snippets
    directory, so its tracebacks number its lines as the page shows them.

    :raises SnippetError: naming the page's line, for a bad id or tag block.
    """
    check_id(block.snippet_id)
    suffix = next(s for s, lang in SUFFIXES.items() if lang == block.language)
    snippet = from_text(
        block.snippet_id, block.text + "\n", block.language, block.snippet_id + suffix, Path(block.source),
        project_root, line=block.body_line,
    )  # fmt: skip
    if block.script_cell or block.expect:
        expect = block.expect if block.expect and snippet.tags.expect == "ok" else snippet.tags.expect
        tags = dataclasses.replace(snippet.tags, script_cell=block.script_cell, expect=expect)
        snippet = dataclasses.replace(snippet, tags=tags)
    if "folder" in block.script_cell:
        snippet = dataclasses.replace(snippet, helpers=_beside_script(block))
    return snippet


def _beside_script(block: CodeBlock) -> tuple[tuple[str, str], ...]:
    """The modules beside a script (``block.source``) that its cell imports,
    at their places relative to the cell's run file ``<script id>/<name>.py``
    (see :mod:`snipcheck.sources.script_imports`)."""
    script = Path(block.source)
    folder = block.snippet_id.rpartition("/")[0].rpartition("/")[0]
    found = []
    for path in script_imports.local_modules(block.text, script.parent, script.resolve()):
        rel = path.relative_to(script.parent.resolve()).as_posix()
        try:
            found.append((f"{folder}/{rel}" if folder else rel, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue  # an unreadable module fails the cell's import, visibly
    return tuple(found)


def find(snippet_id: str, code: CodeBlock | None, snippets_dir: Path, project_root: Path) -> Snippet:
    """The snippet a placement runs: its code in the page when ``code`` is
    given, else its file (see :func:`load`).

    :raises SnippetError: as :func:`load` and :func:`from_page` do, and when a
        snippet has both a file and code in the page (which one runs?).
    """
    if code is None:
        return load(snippet_id, snippets_dir, project_root)
    files = [snippets_dir / f"{snippet_id}{suffix}" for suffix in SUFFIXES]
    clash = next((p for p in files if p.is_file()), None)
    if clash is not None:
        raise SnippetError(
            f"snippet {snippet_id!r} has its code both in the page (line {code.body_line}) and in "
            f"{shown_path(snippet_id + clash.suffix, snippets_dir, project_root)}; keep one of them"
        )
    return from_page(code, project_root)
