"""``snipcheck record [ID...]``: write actual outputs into the pages as stated outputs.

The snippets run here (or their results come from a shard's folder,
``--from-shard``); :func:`snipcheck.pending.rules.record_change` decides what
becomes of each output, this module says it, and
:func:`snipcheck.pending.commit.commit` writes the accepted changes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from snipcheck.app.cli import session
from snipcheck.app.cli.output import USAGE_ERROR, changed, fail, origin, rel, where
from snipcheck.app.project import Project
from snipcheck.app.shard_command import FromShard, shard_results
from snipcheck.engine.execute import Executor
from snipcheck.files import ChangedOnDisk, WriteError
from snipcheck.model import Outcome, Snippet, Stamp
from snipcheck.pending import change, commit
from snipcheck.pending.change import Change, Decision
from snipcheck.pending.rules import may_change, record_change
from snipcheck.pending.variation import Rerun
from snipcheck.shard.files import MergeError
from snipcheck.sources.placement import Placement
from snipcheck.sources.rewrite import Unwritable
from snipcheck.sources.snippets import SnippetError


def command(project: Project, args: argparse.Namespace) -> int:
    """``snipcheck record`` with the command line's options."""
    if args.from_shard and args.shard_key_problem:
        return fail(args.shard_key_problem, USAGE_ERROR)
    return record(
        project, args.ids, dry_run=args.dry_run, use_cache=not args.no_cache, quiet=args.quiet, verbose=args.verbose,
        from_shards=args.from_shard, key=args.shard_key,
    )  # fmt: skip


def record(
    project: Project, ids: Sequence[str], dry_run: bool, use_cache: bool, quiet: int = 0, verbose: int = 0,
    from_shards: Sequence[Path] = (), key: bytes | None = None,
) -> int:  # fmt: skip
    """``snipcheck record``; with ``from_shards``, the results a shard left in
    its folder are recorded instead of runs made here (see
    :func:`snipcheck.app.shard_command.shard_results`; with ``key``, only from a
    folder whose manifest is signed with it).

    :return: the exit status: 1 when something was not recorded.
    """
    settings = project.settings
    left_out = session.left_out(project, "its snippets were not recorded")
    placements = _chosen(project, ids)
    if placements is None:
        return 1
    stamp = session.interpreter(settings, verbose, use_cache)
    if stamp is None:
        return 1
    executor = session.executor(settings, stamp, use_cache=use_cache)
    taken: dict[str, FromShard] = {}
    if from_shards:
        found = _from_shards(project, stamp, from_shards, executor, key, ids)
        if found is None:
            executor.close()
            return 1
        taken = found
        placements = [p for p in placements if p.snippet_id in taken]
    loaded, failed = _load(project, placements)
    status = 1 if left_out or failed else 0
    if not taken:
        executor.plan(s for _, s in loaded)
        for _, snippet in loaded:
            executor.submit(snippet)
    # Every output about to be recorded is produced a second time, afresh and
    # under another hash seed: an output that changes from run to run (a time,
    # an address, unseeded randomness) would drift on the next build, and one
    # that changes with the seed (a set's order) varies under plain python.
    rerun = Rerun(lambda hash_seed: session.executor(settings, stamp, False, hash_seed), settings.normalizers)
    # What may be written is run again all at once: the cells of a chain (a
    # tutorial script's) then run again in one process per hash seed, not one
    # process per cell, each repeating the cells before it.
    rerun.submit([s for p, s in loaded if p.snippet_id not in taken and may_change(executor.outcome(s), p, s, settings.normalizers)])
    changes: list[Change] = []
    for p, snippet in loaded:
        place = f"{where(p)}: {p.snippet_id}"
        shard_run = taken.get(p.snippet_id)
        outcome = Outcome(shard_run.result, "shard") if shard_run else executor.outcome(snippet)
        if verbose and outcome.result is not None:
            origin(place, outcome.origin, outcome.result.duration)
        # (a shard's result cannot run again here: the next merged build compares it)
        decided = record_change(p, snippet, outcome, settings.normalizers, project.srcdir, None if shard_run else rerun)
        if decided is not None:
            status = _say(place, decided, dry_run, quiet) or status
            changes.append(decided)
    rerun.close()
    executor.close()
    return _commit(project, changes, taken, status, len(loaded), dry_run, quiet)


def _chosen(project: Project, ids: Sequence[str]) -> list[Placement] | None:
    """The placements of ``ids`` (every one when none is given); ``None`` after
    saying which id no page places."""
    placements = project.placements()
    if not ids:
        return placements
    placed = {p.snippet_id for p in placements}
    unknown = [i for i in ids if i not in placed]
    for i in unknown:
        print(f"error: snippet {i!r} is not placed in any page under {project.srcdir}", file=sys.stderr)
    return None if unknown else [p for p in placements if p.snippet_id in set(ids)]


def _from_shards(
    project: Project, stamp: Stamp, folders: Sequence[Path], executor: Executor, key: bytes | None, ids: Sequence[str]
) -> dict[str, FromShard] | None:
    """The results the shards left in ``folders``, by snippet id; ``None``
    after saying why they cannot be recorded (or which of ``ids`` none ran)."""
    try:
        taken = shard_results(project, stamp, folders, executor, key)
    except MergeError as exc:
        fail(f"cannot record from the shard: {exc}")
        return None
    absent = [i for i in ids if i not in taken]
    for i in absent:
        print(f"error: {i}: no result in {', '.join(map(str, folders))}: no shard there ran it, or it "
              "failed there; give the folder of the shard that ran it", file=sys.stderr)  # fmt: skip
    return None if absent else taken


def _load(project: Project, placements: Sequence[Placement]) -> tuple[list[tuple[Placement, Snippet]], bool]:
    """Each placement with its snippet, and whether one could not be loaded (said on stderr)."""
    loaded = []
    failed = False
    for p in placements:
        try:
            loaded.append((p, project.snippet(p)))
        except SnippetError as exc:
            print(f"{where(p)}: {exc.message}", file=sys.stderr)
            failed = True
    return loaded, failed


def _say(place: str, decided: Change, dry_run: bool, quiet: int) -> int:
    """Say what becomes of one change; return 1 when it is refused, else 0."""
    if decided.decision is Decision.REFUSED:
        print(f"{place}: {decided.reason}", file=sys.stderr)
        return 1
    if quiet >= 1:
        return 0
    if decided.decision is Decision.SKIP:
        print(f"{place}: {decided.reason}")
    elif dry_run and decided.new is None:
        print(f"{place}: would record its figures")
    elif dry_run:
        print(f"{place}: would record")
        print(decided.diff)
    return 0


def _commit(
    project: Project, changes: list[Change], taken: dict[str, FromShard], status: int, loaded: int, dry_run: bool,
    quiet: int,
) -> int:  # fmt: skip
    """Write the accepted changes (:func:`snipcheck.pending.commit.commit`), say what was written."""
    try:
        done = commit.commit(
            changes, rewrite=project.rewrite, srcdir=project.srcdir, dry_run=dry_run, written=session.written
        )
    except ChangedOnDisk as exc:
        return fail(changed(exc, "record"))
    except Unwritable as exc:
        return fail(f"{exc}; nothing was recorded")
    except WriteError as exc:
        return fail(str(exc))
    except commit.FigureError as exc:
        return fail(f"cannot write a stated figure: {exc}")
    edits = change.edits(changes)
    if quiet < 1 and not dry_run:
        for edit in edits:
            shard = taken.get(edit.placement.snippet_id)
            whence = f" from {shard.label} (run once there, not again here: the next merged build compares it)" if shard else ""
            print(f"{where(edit.placement)}: {edit.placement.snippet_id}: recorded{whence}")
        for path in done.figures:
            print(f"{rel(path)}: {'written' if path.exists() else 'removed'}")
    if quiet < 2:
        verb = "would change" if dry_run else "recorded"
        print(f"{len(edits)} stated output(s) {verb}; {loaded - len(edits)} unchanged or skipped")
    return status
