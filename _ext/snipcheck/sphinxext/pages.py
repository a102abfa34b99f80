"""Pages Sphinx cannot read: one located warning each, and the build goes on.

Sphinx reads a page with ``Path.read_text`` and stops the whole build on the
first page that is not text in ``source_encoding`` (a ``UnicodeDecodeError``
traceback) or cannot be opened.  Before the pages are read
(``env-before-read-docs``), :func:`check_pages` reads each one to be read;
one that fails gets a ``snipcheck.missing`` warning at the line and column
of the first bad byte (or naming the error), saying what to do, and is left
out of this build as if it did not exist: the rest is read and built, and
since its snippets were never compared the build fails at its end
(:mod:`.summary`).

Sphinx itself leaves out, with only a warning of its own ("Ignored
unreadable document"), a page it may not open (``os.access``): a symbolic
link to nothing, a loop of links, a file without read permission.  Such a
page would be as silent as a removed one, so :func:`check_pages` looks for
the source files Sphinx found but did not take, and treats each as a page
that cannot be read.  A page's type is looked at (``lstat``/``stat``) before
it is read: a named pipe would block the read, and the build, for good.

The problems are kept in ``env.snipcheck_unreadable`` (docname →
``(path, line, message)``) for the placement index: the command line and the
pytest plugin report each such page in the same words.  A left-out page is
found again by the next build, so it is checked again until it reads.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import TYPE_CHECKING

from snipcheck.sources.snippets import decode_error, unusable
from snipcheck.sphinxext.build_folders import build_patterns
from snipcheck.sphinxext.log import warn

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment


def unreadable(env: BuildEnvironment) -> dict[str, tuple[str, int, str]]:
    """``env.snipcheck_unreadable``: docname → ``(path, line, what is wrong and what to do)``."""
    if not hasattr(env, "snipcheck_unreadable"):
        env.snipcheck_unreadable = {}  # type: ignore[attr-defined]
    return env.snipcheck_unreadable  # type: ignore[attr-defined,no-any-return]


def problem(path: Path, encoding: str) -> tuple[int, str] | None:
    """Why Sphinx could not read the page at ``path``: ``(line, message)``
    (what is wrong and what to do), or ``None``.

    :param encoding: the project's ``source_encoding`` (Sphinx reads pages in it).
    """
    why = unusable(path, "this page", "page")
    if why:
        return 1, why
    try:
        raw = path.read_bytes()
    except OSError as exc:
        advice = "make it readable (chmod u+r)" if isinstance(exc, PermissionError) else "fix or remove the file"
        return 1, f"cannot read this page: {exc.strerror or exc}; {advice}"
    try:
        codecs.decode(raw, encoding)
    except UnicodeDecodeError as exc:
        name = codecs.lookup(encoding).name
        shown = "UTF-8" if name.startswith("utf-8") else encoding
        where = decode_error(raw, exc)
        line = raw.count(b"\n", 0, exc.start) + 1
        return line, (
            f"this page is not valid {shown} ({where}); save it as {shown} (or set source_encoding in conf.py)"
        )
    return None


def _not_taken(app: Sphinx, env: BuildEnvironment) -> list[tuple[str, Path]]:
    """``(docname, path)`` of each source file Sphinx found but did not take
    as a page (its ``os.access`` check failed), as Sphinx looks for pages."""
    from sphinx.project import EXCLUDE_PATHS
    from sphinx.util.matching import get_matching_files

    project = env.project
    excluded = [*app.config.exclude_patterns, *app.config.templates_path, *app.builder.get_asset_paths(),
                *build_patterns(app)]  # fmt: skip
    out = []
    for filename in get_matching_files(project.srcdir, app.config.include_patterns, [*excluded, *EXCLUDE_PATHS]):
        docname = project.path2doc(filename)
        if docname and docname not in env.found_docs:
            out.append((docname, Path(project.srcdir) / filename))
    return out


def check_pages(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: leave out, with a warning each, the pages in
    ``docnames`` that cannot be read, and report the source files Sphinx
    left out as unreadable (see the module docstring)."""
    found = unreadable(env)
    for docname in [d for d in found if d not in env.found_docs or d in docnames]:
        del found[docname]
    encoding = env.settings.get("input_encoding") or app.config.source_encoding
    for docname, path in _not_taken(app, env):
        why = problem(path, encoding)
        if why is None and not os.access(path, os.R_OK):  # e.g. an ACL refuses it
            why = 1, "cannot read this page: Permission denied; make it readable (chmod u+r)"
        if why is not None:
            line, message = why
            warn("missing", f"{message}; it is left out of this build, and its snippets are not checked", f"{path}:{line}")
            found[docname] = (str(path), line, message)
    for docname in list(docnames):
        path = Path(env.doc2path(docname))
        why = problem(path, encoding)
        if why is None:
            continue
        line, message = why
        warn("missing", f"{message}; it is left out of this build, and its snippets are not checked", f"{path}:{line}")
        found[docname] = (str(path), line, message)
        docnames.remove(docname)
        # What an earlier build read from it is gone too (as for a removed page).
        app.events.emit("env-purge-doc", env, docname)
        env.clear_doc(docname)
        env.project.docnames.discard(docname)


def register(app: Sphinx) -> None:
    app.connect("env-before-read-docs", check_pages)
