"""The ``snipcheck`` command line (also ``python -m snipcheck``).

Commands::

    snipcheck run ID...            run snippets, print their output as a terminal shows it
    snipcheck record [ID...]       write actual outputs into the pages as stated outputs
    snipcheck verify               run every placed snippet, report drift
    snipcheck merge REPORT...      combine shard reports of one verify run
    snipcheck execute --shard K/N --out DIR     run one shard of a build's snippets
    snipcheck execute --merge DIR...            merge the shards into the build's cache
    snipcheck accept               rewrite drifted stated outputs, move the reference pin
    snipcheck review               go through drifted outputs one by one: accept, reject or skip
    snipcheck new ID               create a snippet file, print the directive to paste
    snipcheck cache ACTION         the result cache and the CI cache: key, show, plan, prune, save, restore
    snipcheck normalizers          list the normalizers

Every command reads the project through its ``conf.py`` (``--conf-dir``,
default ``.``) and finds snippets through the placement index: the pages read
by Sphinx, execution off, exactly as the build reads them.

Each command is a module of this package (``run``, ``record``, ``verify``,
``merge``, ``execute``, ``accept``, ``review``, ``new``, ``normalizers``),
with a ``command`` function; :mod:`~snipcheck.app.cli.output` and
:mod:`~snipcheck.app.cli.session` hold what they share.  This module holds
the argument parser and :func:`main`.

Exit status: 0 success; 1 drift, a failing snippet, or something not
recorded or accepted (a page another process wrote meanwhile, too); 2 bad
usage or input (an unknown option, an unreadable report, a project or, for
verify, accept and review, a page Sphinx cannot read, no placement found); 130 interrupted
(Ctrl-C): the runs in progress are stopped and one line on stderr says what
was written (nothing, unless the interrupt came after the first file of a
write was replaced: a write is all or nothing, so it is then finished).  A
``SIGTERM`` is handled as a Ctrl-C, its line saying "terminated", and the
process then ends by ``SIGTERM`` (143 in a shell).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeAlias

from snipcheck import __version__
from snipcheck.app.cli import (
    accept,
    cache,
    execute,
    merge,
    new,
    normalizers,
    record,
    review,
    run,
    session,
    verify,
)
from snipcheck.app.cli.output import USAGE_ERROR, fail
from snipcheck.app.cli.session import INTERRUPTED
from snipcheck.app.project import Project, ProjectError
from snipcheck.shard import check as shard_check
from snipcheck.shard import key as shard_key

__all__ = ["INTERRUPTED", "USAGE_ERROR", "main"]

#: The commands that read the project: name → its module's ``command``.
COMMANDS: dict[str, Callable[[Project, argparse.Namespace], int]] = {
    "run": run.command,
    "new": new.command,
    "verify": verify.command,
    "execute": execute.command,
    "accept": accept.command,
    "review": review.command,
    "record": record.command,
    "cache": cache.run,
}


def _common(defaults: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after the command's name.

    The main parser holds the defaults; each command's copy leaves a value
    alone unless given (``SUPPRESS``), so ``snipcheck -c docs record`` and
    ``snipcheck record -c docs`` mean the same.
    """

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-c", "--conf-dir", "--root", dest="root", type=Path, default=default(Path(".")),
        help="the directory holding conf.py (default: .)",
    )
    common.add_argument(
        "-s", "--source-dir", "--docs", dest="docs", type=Path, default=default(None),
        help="the pages' folder (default: snipcheck_source_dir, else the conf.py directory)",
    )
    common.add_argument(
        "--no-cache", action="store_true", default=default(False), help="run every snippet, ignoring cached results"
    )
    common.add_argument("-q", "--quiet", action="count", default=default(0), help="print less (errors only with -qq)")
    common.add_argument(
        "-v", "--verbose", action="count", default=default(0),
        help="print more: the interpreter and result cache used, and whether each snippet ran or came from the cache, "
        "with its run time (on stderr)",
    )  # fmt: skip
    return common


def _parser() -> argparse.ArgumentParser:
    """The command line: the common options, then one subparser per command."""
    common = _common(defaults=False)
    parser = argparse.ArgumentParser(
        prog="snipcheck",
        description="Run the snippets of a Sphinx project, record and verify their stated outputs.",
        epilog="Exit status: 0 success; 1 drift or something not recorded or accepted; 2 bad usage or input; "
        "130 interrupted (Ctrl-C: the runs are stopped, and one line says what was written); "
        "a SIGTERM is handled the same, then ends the process by SIGTERM (143).",
        parents=[_common(defaults=True)],
    )
    parser.add_argument("--version", action="version", version=f"snipcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("run", parents=[common], help="run snippets and print their output as a terminal shows it")
    p.add_argument("ids", nargs="+", metavar="ID")
    p = sub.add_parser("record", parents=[common], help="write actual outputs into the pages as stated outputs")
    p.add_argument("ids", nargs="*", metavar="ID", help="snippet ids (default: every empty or drifted one)")
    p.add_argument("--dry-run", action="store_true", help="show what would change, write nothing")
    p.add_argument(
        "--from-shard", action="append", default=[], type=Path, metavar="DIR",
        help="record the results a shard left in its --out folder (snipcheck execute --shard, run on a machine "
        "that has what this one lacks, a GPU say) instead of running here (repeatable)",
    )  # fmt: skip
    p = sub.add_parser("verify", parents=[common], help="run every placed snippet and report drift")
    p.add_argument("--python", help="interpreter to run the snippets (default: snipcheck_python)")
    p.add_argument("--shard", default="1/1", help="run the k-th of n deterministic slices, e.g. 2/8")
    p.add_argument("--json", type=Path, help="write the report as JSON here")
    p.add_argument("--html", type=Path, help="write the report as an HTML page here")
    p = sub.add_parser("merge", parents=[common], help="combine the shard reports of one verify run")
    p.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    p.add_argument("--json", type=Path, help="write the merged report as JSON here")
    p.add_argument("--html", type=Path, help="write the merged report as an HTML page here")
    _execute_parser(sub, common)
    _writing_parsers(sub, common)
    return parser


#: What ``add_subparsers`` returns (generic for the type checker only).
_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _execute_parser(sub: _Commands, common: argparse.ArgumentParser) -> None:
    """``execute``'s options: a shard's (``--shard``, ``--out``, ``--provides``), the merge's (``--merge``, ``--check``...)."""
    p = sub.add_parser(
        "execute", parents=[common],
        help="run one shard of the build's snippets here, or merge the shards' results into the build's cache",
    )  # fmt: skip
    p.add_argument("--shard", help="run the K-th of N shards, e.g. 2/4 (with --out)")
    p.add_argument("--out", type=Path, help="the folder a shard writes its results and manifest.json into")
    p.add_argument(
        "--provides", action="append", default=[], metavar="NAME",
        help="this shard provides a requirement (cuda, or a snipcheck_requirements name): the snippets that need it run here "
        "(repeatable); without --shard, a shard outside the N that runs only those, on a machine of its own (a GPU one)",
    )  # fmt: skip
    p.add_argument("--merge", nargs="+", type=Path, metavar="DIR", help="merge these shards' folders into the build's cache")
    p.add_argument(
        "--not-run", dest="not_run", action="append", default=[], metavar="NAME",
        help="merge even though no shard provided this requirement: its snippets are not run here (repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--check", type=execute.check_count, default=execute.NOT_GIVEN, metavar="N",
        help=f"before merging, run N of the shards' units again here, drawn from the faster half, and refuse on any "
        f"difference (default {shard_check.DEFAULT}; 0: none; all: every one this machine can run)",
    )  # fmt: skip
    p.add_argument("--check-seed", dest="check_seed", type=int, metavar="S", help="draw the --check units with this seed (the merge prints the one it used)")
    p.add_argument("--ci-cache", dest="ci_cache", type=Path, metavar="DIR", help="the CI cache restored here (snipcheck cache): --shard leaves out the units whose results it holds, --merge takes them from it")


def _writing_parsers(sub: _Commands, common: argparse.ArgumentParser) -> None:
    """The options of ``accept``, ``review``, ``new`` and ``normalizers``."""
    p = sub.add_parser("accept", parents=[common], help="rewrite drifted stated outputs, move the reference pin")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--python", help="verify on this interpreter first (default: snipcheck_python)")
    src.add_argument("--report", type=Path, help="accept from a verify JSON report instead of running")
    p.add_argument("--only", nargs="+", default=[], metavar="ID", help="accept only these snippets")
    p.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    p.add_argument("--force", action="store_true", help="write even over uncommitted changes or failing snippets")
    p = sub.add_parser("review", parents=[common], help="go through drifted outputs one by one: accept, reject or skip")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--python", help="verify on this interpreter to start a review (default: snipcheck_python)")
    src.add_argument("--report", type=Path, help="start a review of this verify JSON report")
    p.add_argument("--restart", action="store_true", help="forget a review in progress and start afresh")
    p.add_argument("--force", action="store_true", help="write even over uncommitted changes")
    p = sub.add_parser("new", parents=[common], help="create a snippet file and print the directive to paste")
    p.add_argument("id", help="snippet id, e.g. tutorial/first-step")
    p.add_argument("--rust", action="store_true", help="a Rust snippet (.rs) instead of Python")
    p.add_argument("--expect", default="ok", help='what it must end with, e.g. "RuntimeError"')
    p.add_argument("--requires", action="append", default=[], help="a requirement, e.g. cuda (repeatable)")
    p.add_argument("--cell", action="store_true", help="write no file: print a cell (code, then '--- output ---') to paste into a page")
    sub.add_parser("normalizers", parents=[common], help="list the normalizers and what each does")
    cache.register(sub, common)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (:data:`INTERRUPTED` after a Ctrl-C).

    The shards' key (:data:`snipcheck.shard.key.KEY_VARIABLE`) is taken out of
    the environment first, before anything is started: no process a command
    starts (a snippet's run above all) inherits it."""
    session.reset()
    installed = session.terminate_as_interrupt()
    try:
        try:
            key, key_problem = shard_key.take_key(), ""
        except shard_key.ShardKeyError as exc:
            key, key_problem = None, str(exc)
        args = _parser().parse_args(argv)
        args.shard_key, args.shard_key_problem = key, key_problem
        return _command(args)
    except session.Terminated:
        session.interrupted("terminated")
        session.end_by_sigterm()
        raise  # not reached: the process ends by SIGTERM
    except KeyboardInterrupt:
        return session.interrupted()
    finally:
        if installed:
            session.terminate_by_default()


def _command(args: argparse.Namespace) -> int:
    session.core_log(args.verbose, args.quiet)
    if args.command == "normalizers":
        return normalizers.command(args)
    if args.command == "merge":
        return merge.command(args)
    try:
        project, messages = Project.load(args.root, args.docs)
    except ProjectError as exc:
        return fail(str(exc), USAGE_ERROR)
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    try:
        if args.command in ("verify", "accept", "review") and session.left_out(
            project, f"{args.command} reads every page, so it did nothing"
        ):
            return USAGE_ERROR
        return COMMANDS[args.command](project, args)
    except ProjectError as exc:
        return fail(str(exc), USAGE_ERROR)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
