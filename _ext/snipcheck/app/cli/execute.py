"""``snipcheck execute``: run one shard of a build's snippets here, or merge the shards into the build's cache.

``--shard K/N --out DIR`` (or ``--provides NAME --out DIR``) runs a shard
(:func:`snipcheck.app.shard_command.run_shard`); ``--merge DIR...`` checks
and merges the shards' folders (:func:`snipcheck.app.shard_command.merge_shards`).
"""

from __future__ import annotations

import argparse

from snipcheck.app.cli import session
from snipcheck.app.cli.output import USAGE_ERROR, fail
from snipcheck.app.project import Project
from snipcheck.app.shard_command import merge_shards, run_shard
from snipcheck.engine.execute import Executor, executor_for
from snipcheck.model import Stamp
from snipcheck.report.verify import parse_shard
from snipcheck.run import requirements
from snipcheck.settings import Settings
from snipcheck.shard import check as shard_check
from snipcheck.shard.files import MergeError

#: ``--check``'s default, told apart from every value it takes.
NOT_GIVEN = -1


def check_count(text: str) -> int | None:
    """``--check``'s value: a whole number of units, or ``all`` (``None``)."""
    if text == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of units or 'all', not {text!r}")
    return value


def command(project: Project, args: argparse.Namespace) -> int:
    """``snipcheck execute``: one shard (``--shard K/N --out DIR``) or the merge (``--merge DIR...``)."""
    settings = project.settings
    running = bool(args.shard or args.provides) and not args.merge
    if running == bool(args.merge):
        return fail(
            "give --shard K/N --out DIR (run one shard), --provides NAME --out DIR (run what needs NAME) "
            "or --merge DIR... (merge the shards)",
            USAGE_ERROR,
        )
    if running and (args.out is None or args.not_run):
        return fail("--shard needs --out DIR, and takes no --not-run (that is the merge's)", USAGE_ERROR)
    if args.merge and (args.out is not None or args.provides):
        return fail("--merge takes no --out or --provides (those are a shard's)", USAGE_ERROR)
    if running and (args.check != NOT_GIVEN or args.check_seed is not None):
        return fail("--check and --check-seed are the merge's: give them with --merge DIR...", USAGE_ERROR)
    if args.shard_key_problem:
        return fail(args.shard_key_problem, USAGE_ERROR)
    for name in (*args.provides, *args.not_run):
        try:
            requirements.check(name, settings.provides, settings.requirements)
        except requirements.RequirementError as exc:
            return fail(str(exc), USAGE_ERROR)
    if session.left_out(project, "execute reads every page, so it did nothing"):
        return USAGE_ERROR
    if args.shard:
        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            return fail(str(exc), USAGE_ERROR)
    stamp = session.interpreter(settings, args.verbose)
    if stamp is None:
        return 1

    def make(chosen: Settings, at: Stamp, provides: tuple[str, ...]) -> Executor:
        executor = executor_for(chosen, at, provides=provides)
        session.executors.append(executor)
        return executor

    if running and "cuda" in args.provides and not stamp.cuda:
        return fail(
            f"--provides cuda, but the snippet interpreter's torch sees no CUDA device here ({stamp.label()}): "
            "start this shard on a machine with a GPU, or route a feature of your own (snipcheck_requirements)",
            USAGE_ERROR,
        )
    if running and args.ci_cache is not None and not args.shard:
        return fail("--ci-cache is for --shard K/N and --merge: a shard outside the N runs what it provides every time", USAGE_ERROR)
    if running:
        return run_shard(project, stamp, shard if args.shard else None, args.out, args.provides, make, args.shard_key, args.ci_cache)
    check = shard_check.DEFAULT if args.check == NOT_GIVEN else args.check
    try:
        return merge_shards(project, stamp, args.merge, args.not_run, make, args.shard_key, check, args.check_seed, args.ci_cache)
    except MergeError as exc:
        return fail(f"cannot merge: {exc}")
    except OSError as exc:
        return fail(f"cannot merge: {exc}")
