"""Keep the build's own output folders out of the pages Sphinx reads.

A project whose build folder lies inside its source folder and whose
``exclude_patterns`` does not name it (a ``conf.py`` written by hand, not by
``sphinx-quickstart``) gets copies of its notebooks there: myst-nb writes each
notebook page to ``<outdir>/../jupyter_execute/``, and the HTML builder copies
downloads into ``<outdir>/_downloads/``.  The next build would read each copy
as a second page (myst-nb's own "not included in any toctree" warning) and
snipcheck would take its cells for snippets (a failed build).

The same goes for the output folders of earlier builds found beside the
pages (:func:`earlier_outputs`: a folder holding Sphinx's ``.buildinfo``, or
a pickled environment beside doctrees): ``snipcheck verify`` builds elsewhere, and must not
read the copies of the project's own ``make html``.

The folders are added to the patterns only while Sphinx looks for pages
(from ``builder-inited`` to the first ``env-get-outdated`` handler), so the
configuration the environment pickles and compares is the project's own: a
build for another builder (another output folder) sees no configuration
change, and re-reads nothing.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from snipcheck.sphinxext import state as state_mod

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

#: The folders myst-nb writes notebook copies to, beside the output folder:
#: its executed notebooks, and jupyter-cache's store (``nb_execution_mode = "cache"``).
MYST_NB_FOLDERS = ("jupyter_execute", ".jupyter_cache")


#: The first line of the ``.buildinfo`` file an HTML builder writes into its output folder.
BUILDINFO = b"# Sphinx build info version"
#: How deep below the source folder earlier builds' output folders are looked
#: for (``_build/html``: 2; ``docs/site/_build/html``: 4).
MARKER_DEPTH = 5


def is_output(folder: str) -> bool:
    """Whether ``folder`` is one that only Sphinx writes: an HTML builder's
    output (a ``.buildinfo`` file that begins as Sphinx writes it) or a
    doctree folder (a pickled ``environment.pickle`` beside ``.doctree``
    files).  A folder of pages that merely holds a file of either name is not."""
    try:
        with open(os.path.join(folder, ".buildinfo"), "rb") as f:
            if f.read(len(BUILDINFO)) == BUILDINFO:
                return True
    except OSError:
        pass
    if not os.path.isfile(os.path.join(folder, "environment.pickle")):
        return False
    try:
        with os.scandir(folder) as entries:
            return any(e.name.endswith(".doctree") for e in entries)
    except OSError:
        return False


def earlier_outputs(srcdir: str | Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """The output folders of earlier builds inside ``srcdir``, at most
    :data:`MARKER_DEPTH` folders down: each folder :func:`is_output` tells
    (a build into another folder than this one's, or the one ``snipcheck
    verify`` finds beside the pages).  Folder names in ``skip`` (virtual
    environments, say) are not entered, nor are links."""
    found: list[Path] = []
    level = [Path(srcdir)]
    for _ in range(MARKER_DEPTH):
        below = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name in skip or not entry.is_dir(follow_symlinks=False):
                    continue
                path = Path(entry.path)
                if is_output(entry.path):
                    found.append(path)  # nothing below an output folder is a page
                else:
                    below.append(path)
        level = below
    return found


def output_patterns(
    srcdir: str | Path, outdir: str | Path, doctreedir: str | Path, earlier: Sequence[Path] = (),
    others: Sequence[Path] = (),
) -> list[str]:
    """``exclude_patterns`` entries for the build's output folders that lie
    inside ``srcdir`` (the output and doctree folders, and myst-nb's
    :data:`MYST_NB_FOLDERS` beside the output folder; the same for each of
    ``earlier``, see :func:`earlier_outputs`; each of ``others``, such as
    snipcheck's cache and report folders): each a POSIX path relative to
    ``srcdir``, its glob characters escaped.  A folder that is ``srcdir``
    itself, or holds it, or lies outside it gives none."""
    source = Path(srcdir).resolve()
    outputs = [Path(outdir).resolve(), *(Path(folder).resolve() for folder in earlier)]
    folders = [*outputs, Path(doctreedir).resolve(), *(Path(folder).resolve() for folder in others)]
    folders += [out.parent / name for out in outputs for name in MYST_NB_FOLDERS]
    patterns: list[str] = []
    for folder in folders:
        if folder == source or source not in folder.parents:
            continue
        pattern = glob.escape(folder.relative_to(source).as_posix())
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns


def build_patterns(app: Sphinx) -> list[str]:
    """:func:`output_patterns` of this build (with snipcheck's result cache
    and report folders, which ``snipcheck verify`` fills with notebook copies
    of its own reading) and of the earlier builds found in its source folder
    (the search skips what ``exclude_patterns`` names by a plain folder name,
    ``.nox`` and ``node_modules`` say).  Needs the build state (set up at
    ``builder-inited``, priority 400)."""
    skip = frozenset(p for p in app.config.exclude_patterns if not any(c in p for c in "/*?["))
    earlier = earlier_outputs(app.srcdir, skip)
    settings = state_mod.get(app).settings
    others = (settings.cache_dir, settings.report_dir)
    return output_patterns(app.srcdir, app.outdir, app.doctreedir, earlier, others)


def exclude_outputs(app: Sphinx) -> None:
    """Add :func:`output_patterns` to ``exclude_patterns`` for the search for
    pages (``builder-inited``); :func:`restore` takes them out again."""
    added = [p for p in build_patterns(app) if p not in app.config.exclude_patterns]
    if added:
        app._snipcheck_patterns = list(app.config.exclude_patterns)  # type: ignore[attr-defined]
        app.config.exclude_patterns = [*app.config.exclude_patterns, *added]


def restore(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """Give ``exclude_patterns`` back its own value once the pages are found
    (``env-get-outdated``, before every other handler)."""
    saved = getattr(app, "_snipcheck_patterns", None)
    if saved is not None:
        app.config.exclude_patterns = saved
        del app._snipcheck_patterns  # type: ignore[attr-defined]
    return []


def register(app: Sphinx) -> None:
    app.connect("builder-inited", exclude_outputs)
    app.connect("env-get-outdated", restore, priority=1)
