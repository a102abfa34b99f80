"""``snipcheck accept``: rewrite drifted stated outputs, move the reference pin.

The plan (:func:`snipcheck.app.accept.plan`) decides a pending change per
drifted output; :func:`drop_varying` refuses those whose output varies, as
``record`` does; :func:`write_plan` writes the rest through the one commit
(:func:`snipcheck.pending.commit.commit`).  ``review`` ends in the same two.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from snipcheck.app import accept as accept_mod
from snipcheck.app.cli import session
from snipcheck.app.cli.output import USAGE_ERROR, changed, fail, rel, use_color, where
from snipcheck.app.cli.verify import run_verify
from snipcheck.app.project import Project
from snipcheck.files import ChangedOnDisk, WriteError
from snipcheck.model import Snippet
from snipcheck.pending import commit
from snipcheck.pending.change import Change
from snipcheck.pending.rules import recheck
from snipcheck.pending.variation import Rerun
from snipcheck.report import read as report_file
from snipcheck.report import show as report_format
from snipcheck.report.verify import Report
from snipcheck.run.environment import ProbeError, probe
from snipcheck.settings import absolute_command
from snipcheck.sources.rewrite import Unwritable
from snipcheck.sources.snippets import SnippetError

NOT_GIT = "not a git checkout, so uncommitted changes cannot be protected; use --force"


def command(project: Project, args: argparse.Namespace) -> int:
    """Accept the drifted outputs of a verify run here (or of ``args.report``)."""
    settings = project.settings
    if args.report:
        try:
            report = report_file.read(args.report)
        except ValueError as exc:
            return fail(str(exc), USAGE_ERROR)
    if not (args.force or args.dry_run) and accept_mod.uncommitted([], settings.root) is None:
        return fail(NOT_GIT)  # before a whole verify run, whose results could not be written
    if not args.report:
        found = run_verify(project, args.python, (1, 1), not args.no_cache)
        if found is None:
            return 1
        report = found
        print(report_format.terminal(report, color=use_color(sys.stdout)))
    if report.shard != (1, 1):
        return fail("this is one shard's report; merge the shards first (snipcheck merge)", USAGE_ERROR)
    failing = [s.id for s in report.snippets if s.status in ("failing", "error")]
    if failing and not args.force:
        return fail(
            "not accepting: these snippets fail on this version and need a person: "
            + ", ".join(failing) + " (fix them, or --force to accept the rest anyway)"
        )  # fmt: skip
    plan = accept_mod.plan(report, project.placements(), settings.root, args.only, settings.normalizers)
    drop_varying(project, plan, report, args.python)
    return write_plan(project, plan, report, dry_run=args.dry_run, force=args.force)


def drop_varying(project: Project, plan: accept_mod.Plan, report: Report, python: str | None) -> None:
    """Refuse in ``plan`` each output that varies (:func:`snipcheck.pending.rules.recheck`),
    as ``record`` refuses it, saying why: each output to be written is run
    again, on ``python`` (default: ``snipcheck_python``) when its stamp is the
    report's; otherwise this is said, and nothing is run."""
    settings = project.settings
    if python:
        settings = dataclasses.replace(settings, python=absolute_command(python))
    if not plan.edits:
        return
    try:
        stamp = probe(settings.python, settings.cache_dir)
    except ProbeError as exc:
        print(f"warning: not run again to find outputs that vary: {exc}", file=sys.stderr)
        return
    if stamp != report.stamp:
        print(
            f"warning: not run again to find outputs that vary: the report comes from {report.stamp.label()}, "
            f"and {settings.python} runs {stamp.label()} (accept without --report, or with --python, to check them)",
            file=sys.stderr,
        )
        return
    rerun = Rerun(lambda hash_seed: session.executor(settings, stamp, False, hash_seed), settings.normalizers)
    try:
        loaded: list[tuple[Change, Snippet | None]] = []
        for each in plan.changes:
            if each.edit() is None or each.placement is None:
                loaded.append((each, None))  # nothing to run again: no new output is written
                continue
            try:
                loaded.append((each, project.snippet(each.placement)))
            except SnippetError as exc:
                loaded.append((each, None))
                print(f"warning: {where(each.placement)}: not run again: {exc.message}", file=sys.stderr)
        rerun.submit([snippet for _, snippet in loaded if snippet is not None])
        plan.changes = recheck(loaded, rerun, where)
    finally:
        rerun.close()


def write_plan(
    project: Project, plan: accept_mod.Plan, report: Report, *, dry_run: bool, force: bool, reviewing: bool = False
) -> int:
    """Write an accept plan (pages and pin) through the one commit, all or
    nothing; the pin moves only when every drifted output of the report is
    accepted."""
    settings = project.settings
    drifted = {s.id for s in report.snippets if s.status == "drifted"}
    left = sorted(drifted - set(plan.accepted))
    if left:
        plan.pin = None
    for snippet_id, reason in plan.skipped:
        print(f"skipped {snippet_id}: {reason}", file=sys.stderr)
    name = "review" if reviewing else "accept"

    def guard(paths: list[Path]) -> str | None:
        """Refuse to write over uncommitted changes (unless ``--force``)."""
        if force:
            return None
        dirty = accept_mod.uncommitted(paths, settings.root)
        if dirty is None:
            return NOT_GIT
        return "uncommitted changes in " + ", ".join(dirty) + "; commit or stash them first (or --force)" if dirty else None

    try:
        done = commit.commit(
            plan.changes, rewrite=project.rewrite, srcdir=project.srcdir, also=accept_mod.pin_change(plan, project.confdir),
            guard=guard, dry_run=dry_run, written=session.written,
        )  # fmt: skip
    except ChangedOnDisk as exc:
        return fail(changed(exc, name))
    except Unwritable as exc:
        return fail(f"accept wrote nothing: {exc}")
    except commit.Refused as exc:
        return fail(str(exc))
    except WriteError as exc:
        return fail(f"accept: {exc}")
    except commit.FigureError as exc:
        return fail(f"accept: cannot write a stated figure: {exc}")
    note = _pin_note(plan, left, settings.root)
    if dry_run:
        print(accept_mod.preview(done.files, settings.root) or "(no stated output changes)")
        print(f"would accept {len(plan.accepted)} output(s); {note}")
        return 0
    for path in done.replaced:
        print(f"rewrote {rel(path)}")
    for path in done.figures:
        print(f"{'wrote' if path.exists() else 'removed'} {rel(path)}")
    print(f"accepted {len(plan.accepted)} output(s); {note}")
    return 0


def _pin_note(plan: accept_mod.Plan, left: list[str], root: Path) -> str:
    """What becomes of the reference pin, in words (and, where one exists and
    stays, why: the drifted outputs left)."""
    pinned = accept_mod.pin_file(root)
    not_accepted = f"{len(left)} drifted output(s) not accepted ({', '.join(left)})"
    if left and pinned is not None:
        return f"the reference pin stays: {not_accepted}"
    if pinned is not None and plan.pin:
        return f"reference {plan.pin!r} in {rel(pinned)}"
    none = "no reference pin to move (set snipcheck_reference = \"torch X\" in conf.py to keep one)"
    return f"{not_accepted}; {none}" if left else none
