"""The one write path of ``record``, ``accept`` and ``review``: :func:`commit`.

:func:`commit` takes the pending changes a command decided
(:mod:`snipcheck.pending.change`) and writes the accepted ones, all or
nothing:

1. the new bytes of every page an accepted change edits are worked out and
   read back through the build's parser (``rewrite``: the project reader's
   :meth:`snipcheck.app.project.Project.rewrite`, passed in); nothing is
   written if one cannot be (:class:`~snipcheck.sources.rewrite.Unwritable`);
2. a dry run stops there, with the new bytes to show;
3. ``guard`` may refuse the files (uncommitted changes, say): :class:`Refused`;
4. the pages (and any other file the command adds, the reference pin) are
   replaced together by :func:`snipcheck.files.write_all`, which refuses a
   file another process wrote since it was read, then the stated figures of
   the accepted changes are written, with signals held: a Ctrl-C before the
   first file is replaced leaves every file as it was, one after waits until
   all are written.

Pure core: :mod:`snipcheck.files`, :mod:`snipcheck.judge.figures`,
:mod:`snipcheck.pending.change`; the project reader comes in as ``rewrite``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from snipcheck.files import signals_held, write_all
from snipcheck.judge import figures as figure_files
from snipcheck.pending import change
from snipcheck.pending.change import Change
from snipcheck.sources.rewrite import Edit

#: Works out the new bytes of the pages ``edits`` touch and reads them back:
#: ``path → (old bytes, new bytes)`` (:meth:`snipcheck.app.project.Project.rewrite`).
Rewrite = Callable[[Sequence[Edit]], dict[Path, tuple[bytes, bytes]]]
#: Says why these files may not be written (``None``: they may).
Guard = Callable[[list[Path]], str | None]


class Refused(Exception):
    """The guard refused the files; nothing was written.  ``str()`` is its reason."""


class FigureError(Exception):
    """A stated figure could not be written or removed (the pages were written
    by then).  ``str()`` is the :class:`OSError`'s."""


@dataclass
class Committed:
    """What a commit wrote, or would write.

    :param files: every file it changes: ``path → (old bytes, new bytes)``.
    :param replaced: the files replaced (none in a dry run).
    :param figures: the stated figure files written or removed.
    """

    files: dict[Path, tuple[bytes, bytes]] = field(default_factory=dict)
    replaced: list[Path] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)


def stage(
    changes: Sequence[Change], rewrite: Rewrite, also: Mapping[Path, tuple[bytes, bytes]] | None = None
) -> dict[Path, tuple[bytes, bytes]]:
    """Every file the accepted ``changes`` change, with ``also``; nothing is written.

    :raises snipcheck.sources.rewrite.Unwritable: see ``rewrite``.
    :raises snipcheck.files.ChangedOnDisk: a page changed since the index read it.
    """
    edits = change.edits(changes)
    files = rewrite(edits) if edits else {}
    files.update(also or {})
    return files


def commit(
    changes: Sequence[Change],
    *,
    rewrite: Rewrite,
    srcdir: Path,
    also: Mapping[Path, tuple[bytes, bytes]] | None = None,
    guard: Guard | None = None,
    dry_run: bool = False,
    written: list[Path] | None = None,
) -> Committed:
    """Write every accepted change, all or nothing (see the module docstring).

    :param changes: the decided changes; only the accepted ones are written.
    :param rewrite: works out and reads back the pages' new bytes.
    :param srcdir: the pages' source directory (the stated figures live under it).
    :param also: other files to write with the pages: ``path → (old, new)``.
    :param guard: called with the files to write, sorted; a reason refuses them.
    :param dry_run: work out and read back the new bytes, write nothing.
    :param written: each file is added here once written, before a deferred
        Ctrl-C is raised (what the interrupt message names).
    :raises snipcheck.sources.rewrite.Unwritable: before anything is written.
    :raises snipcheck.files.ChangedOnDisk: a file changed since it was read; nothing written.
    :raises Refused: the guard refused; nothing written.
    :raises snipcheck.files.WriteError: a write failed; every file keeps its old bytes.
    :raises FigureError: a stated figure could not be written (the pages were).
    """
    sink = written if written is not None else []
    done = Committed(stage(changes, rewrite, also))
    if dry_run:
        return done
    why = guard(sorted(done.files)) if guard is not None else None
    if why:
        raise Refused(why)
    # Pages and figures as one: a Ctrl-C before the first file is replaced
    # leaves all as they were; after, it waits until all are written.
    with signals_held():
        if done.files:
            done.replaced = write_all(
                {path: new for path, (_, new) in done.files.items()},
                {path: old for path, (old, _) in done.files.items()},
            )
            sink.extend(done.replaced)
        for each in changes:
            if not each.accepted or each.figures is None:
                continue
            try:
                drawn = figure_files.write_recorded(srcdir, each.snippet_id, each.figures)
            except OSError as exc:
                raise FigureError(str(exc)) from exc
            done.figures += drawn
            sink.extend(drawn)
    return done
