"""``snipcheck review``: go through drifted outputs one by one: accept, reject or skip.

The decisions are kept in ``review.json`` in the cache directory
(:mod:`snipcheck.app.review`); once every drifted output is decided, the
accepted ones go through the same plan and commit as ``accept``
(:mod:`snipcheck.app.cli.accept`).
"""

from __future__ import annotations

import argparse

from snipcheck.app import accept as accept_mod
from snipcheck.app.cli import session
from snipcheck.app.cli.accept import NOT_GIT, drop_varying, write_plan
from snipcheck.app.cli.output import USAGE_ERROR, fail, rel
from snipcheck.app.cli.verify import run_verify
from snipcheck.app.project import Project
from snipcheck.app.review import Review, walk
from snipcheck.report import read as report_file
from snipcheck.report.verify import chapter_fingerprint


def command(project: Project, args: argparse.Namespace) -> int:
    """Start or resume a review; write what was accepted once every output is decided."""
    state = project.settings.cache_dir / "review.json"
    try:
        review = None if (args.restart or args.python or args.report) else Review.load(state)
    except ValueError as exc:
        return fail(str(exc), USAGE_ERROR)
    if review is None and args.report:
        try:
            report = report_file.read(args.report)
        except ValueError as exc:
            return fail(str(exc), USAGE_ERROR)
    if not args.force and accept_mod.uncommitted([], project.settings.root) is None:
        return fail(NOT_GIT)  # before a verify run and a review whose decisions could not be written
    if review is None:
        if not args.report:
            found = run_verify(project, args.python, (1, 1), not args.no_cache)
            if found is None:
                return 1
            report = found
        if report.shard != (1, 1):
            return fail("this is one shard's report; merge the shards first (snipcheck merge)", USAGE_ERROR)
        review = Review(report)
        if not review.drifted:
            print("nothing drifted: nothing to review")
            return 0
        review.save(state)
    else:
        if review.report.fingerprint and review.report.fingerprint != chapter_fingerprint(
            project.settings, project.placements(), project.snippet
        ):
            # Its diffs are of the code and pages as they were: accepting one
            # would write an output of code that is not there any more.
            return fail(
                f"the pages or snippets changed since this review began ({rel(state)}), so its diffs are out of "
                "date; nothing was written: start afresh with snipcheck review --restart"
            )
        done = len(review.drifted) - len(review.undecided)
        print(f"resuming the review of {review.report.stamp.label()}: {done} of {len(review.drifted)} decided")

    def ask(prompt: str) -> str:
        try:
            return input(prompt)
        except EOFError:
            return ""

    session.interrupt_note.append(f"the review's decisions so far are kept in {rel(state)}: snipcheck review resumes it")
    if not walk(review, state, ask, print):
        print(f"review paused, {len(review.undecided)} output(s) undecided; run snipcheck review again to resume")
        return 1
    accepted = review.accepted
    status = 0
    if accepted:
        settings = project.settings
        plan = accept_mod.plan(review.report, project.placements(), settings.root, accepted, settings.normalizers)
        drop_varying(project, plan, review.report, args.python)
        status = write_plan(project, plan, review.report, dry_run=False, force=args.force, reviewing=True)
    else:
        print("no output accepted; the pages are unchanged")
    if status == 0:
        state.unlink(missing_ok=True)
    return status
