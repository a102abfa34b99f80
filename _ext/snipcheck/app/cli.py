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
    snipcheck normalizers          list the normalizers

Every command reads the project through its ``conf.py`` (``--conf-dir``,
default ``.``) and finds snippets through the placement index: the pages read
by Sphinx, execution off, exactly as the build reads them.

Exit status: 0 success; 1 drift, a failing snippet, or something not
recorded or accepted (a page another process wrote meanwhile, too); 2 bad
usage or input (an unknown option, an unreadable report, a project or, for
verify, accept and review, a page Sphinx cannot read, no placement found); 130 interrupted
(Ctrl-C): the runs in progress are stopped and one line on stderr says what
was written (nothing, unless the interrupt came after the first file of a
write was replaced: a write is all or nothing, so it is then finished).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from snipcheck import __version__
from snipcheck.app import accept as accept_mod
from snipcheck.app import scaffold
from snipcheck.app.project import Project, ProjectError
from snipcheck.app.review import Review, walk
from snipcheck.app.shard_command import FromShard, shard_results
from snipcheck.engine.execute import Executor
from snipcheck.files import ChangedOnDisk, WriteError, signals_held, write_all, write_atomic
from snipcheck.judge import figures as figure_files
from snipcheck.judge import normalize
from snipcheck.judge.compare import judge, terminal_text, truncation_advice
from snipcheck.model import Figure, Outcome, RunResult, Snippet, Stamp
from snipcheck.pending.recording import Unrecordable, to_record
from snipcheck.pending.variation import VARIES, Rerun
from snipcheck.report import read as report_file
from snipcheck.report import show as report_format
from snipcheck.report.verify import Report, merge, parse_shard, verify
from snipcheck.run import sandbox
from snipcheck.run.environment import ProbeError, probe
from snipcheck.run.python import HASH_SEED
from snipcheck.settings import Settings, absolute_command
from snipcheck.shard import check as shard_check
from snipcheck.shard import key as shard_key
from snipcheck.shard.files import MergeError
from snipcheck.sources.placement import Placement
from snipcheck.sources.rewrite import Edit, Unwritable
from snipcheck.sources.snippets import SnippetError, load

USAGE_ERROR = 2
#: Exit status after a Ctrl-C: 128 + SIGINT, as a shell reports an interrupted command.
INTERRUPTED = 130

# What a Ctrl-C must know of the command it interrupts: the project's files
# it has written so far, the executors whose runs to stop, and a note to add
# (where a review's decisions are kept).  Reset by main().
_written: list[Path] = []
_executors: list[Executor] = []
_interrupt_note: list[str] = []


def use_color(stream: TextIO) -> bool:
    """Colour on a terminal; ``NO_COLOR`` turns it off, ``FORCE_COLOR`` on (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty()


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
    common = _common(defaults=False)
    parser = argparse.ArgumentParser(
        prog="snipcheck",
        description="Run the snippets of a Sphinx project, record and verify their stated outputs.",
        epilog="Exit status: 0 success; 1 drift or something not recorded or accepted; 2 bad usage or input.",
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
        "--check", type=_check_count, default=_NOT_GIVEN, metavar="N",
        help=f"before merging, run N of the shards' units again here, drawn from the faster half, and refuse on any "
        f"difference (default {shard_check.DEFAULT}; 0: none; all: every one this machine can run)",
    )  # fmt: skip
    p.add_argument("--check-seed", dest="check_seed", type=int, metavar="S", help="draw the --check units with this seed (the merge prints the one it used)")
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
    return parser


#: ``--check``'s default, told apart from every value it takes.
_NOT_GIVEN = -1


def _check_count(text: str) -> int | None:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (:data:`INTERRUPTED` after a Ctrl-C).

    The shards' key (:data:`snipcheck.shard.key.KEY_VARIABLE`) is taken out of
    the environment first, before anything is started: no process a command
    starts (a snippet's run above all) inherits it."""
    try:
        key, key_problem = shard_key.take_key(), ""
    except shard_key.ShardKeyError as exc:
        key, key_problem = None, str(exc)
    args = _parser().parse_args(argv)
    args.shard_key, args.shard_key_problem = key, key_problem
    _written.clear()
    _executors.clear()
    _interrupt_note.clear()
    try:
        return _command(args)
    except KeyboardInterrupt:
        return _interrupted()


def _interrupted() -> int:
    """Say in one line what a Ctrl-C left written, stop the runs, return :data:`INTERRUPTED`.

    The runs in progress are stopped now, while the interpreter is whole (the
    supervisors remove their run directories), not by the ``atexit`` handler
    alone; a second Ctrl-C meanwhile ends the process at once.
    """
    from snipcheck.run.capture import stop_live_runs

    written = list(dict.fromkeys(_written))
    if written:
        message = f"interrupted after writing {', '.join(_rel(p) for p in written)} in full; nothing else was written"
    else:
        message = "interrupted; nothing was written"
    print(message + "".join(f" ({note})" for note in _interrupt_note), file=sys.stderr)
    previous = signal.signal(signal.SIGINT, lambda signum, frame: os._exit(INTERRUPTED))
    try:
        for executor in _executors:
            executor.cancel_pending()
        stop_live_runs()
    finally:
        signal.signal(signal.SIGINT, previous)
    return INTERRUPTED


def _executor(settings: Settings, stamp: Stamp, use_cache: bool, hash_seed: int = HASH_SEED) -> Executor:
    """``settings.executor``, known to a Ctrl-C (its pending runs are cancelled)."""
    executor = settings.executor(stamp, use_cache=use_cache, hash_seed=hash_seed)
    _executors.append(executor)
    return executor


def _command(args: argparse.Namespace) -> int:
    _core_log(args.verbose, args.quiet)
    if args.command == "normalizers":
        for n in normalize.REGISTRY.values():
            kind = "display" if n.display else "compare-only"
            print(f"{n.name:28} {kind:13} {_plain(n.doc)}")
        return 0
    if args.command == "merge":
        return _merge(args.reports, args.json, args.html, quiet=args.quiet)
    try:
        project, messages = Project.load(args.root, args.docs)
    except ProjectError as exc:
        return _fail(str(exc), USAGE_ERROR)
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    use_cache = not args.no_cache
    try:
        if args.command == "run":
            return _run(project, args.ids, use_cache=use_cache, verbose=args.verbose)
        if args.command == "new":
            return scaffold.new(
                project.settings, args.id, rust=args.rust, expect=args.expect, requires=args.requires,
                srcdir=project.srcdir, written=_written, in_page=args.cell,
            )  # fmt: skip
        if args.command in ("verify", "accept", "review") and _left_out(
            project, f"{args.command} reads every page, so it did nothing"
        ):
            return USAGE_ERROR
        if args.command == "verify":
            try:
                shard = parse_shard(args.shard)
            except ValueError as exc:
                return _fail(str(exc), USAGE_ERROR)
            report = _verify(project, args.python, shard, use_cache=use_cache, quiet=args.quiet, verbose=args.verbose)
            if report is None:
                return 1
            return _emit(report, args.json, args.html, quiet=args.quiet)
        if args.command == "execute":
            return _execute(project, args)
        if args.command == "accept":
            return _accept(project, args, use_cache=use_cache)
        if args.command == "review":
            return _review(project, args, use_cache=use_cache)
        if args.from_shard and args.shard_key_problem:
            return _fail(args.shard_key_problem, USAGE_ERROR)
        return _record(
            project, args.ids, dry_run=args.dry_run, use_cache=use_cache, quiet=args.quiet, verbose=args.verbose,
            from_shards=args.from_shard, key=args.shard_key,
        )  # fmt: skip
    except ProjectError as exc:
        return _fail(str(exc), USAGE_ERROR)


def _left_out(project: Project, consequence: str) -> int:
    """Print an error for each page Sphinx could not read (not UTF-8, say), at
    its line, ending with ``consequence``; return how many there are."""
    found = project.unreadable()
    for path, line, message in found:
        print(f"error: {_rel_entry(Path(path))}:{line}: {message}; {consequence}", file=sys.stderr)
    return len(found)


def _core_log(verbose: int, quiet: int) -> None:
    """Show the core's log records (the runners': "fork runner ready", a fallback
    to subprocesses) on stderr: warnings, news too with ``-v``, errors only with
    ``-qq``; never through the root logger, which a conf.py or a theme may have
    configured for itself (``logging.basicConfig`` at INFO)."""
    core = logging.getLogger("snipcheck")
    core.handlers = [h for h in core.handlers if not getattr(h, "_snipcheck_cli", False)]
    handler = logging.StreamHandler(sys.stderr)
    handler._snipcheck_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(message)s"))
    core.addHandler(handler)
    core.setLevel(logging.INFO if verbose else logging.ERROR if quiet >= 2 else logging.WARNING)
    core.propagate = False


def _plain(rest: str) -> str:
    """A one-line reST docstring as terminal text: a ``literal`` is quoted, a :role:`text` is its text."""
    return re.sub(r"``(.+?)``", r'"\1"', re.sub(r":[\w:.-]+:`([^`]*)`", r"\1", rest))


def _fail(message: str, status: int = 1) -> int:
    print(f"error: {message}", file=sys.stderr)
    return status


def _stamp(settings: Settings, verbose: int = 0, use_cache: bool = True) -> Stamp | None:
    """The probe stamp of the snippet interpreter, or ``None`` after saying why there is none.

    :param verbose: with 1 or more, also say (on stderr) which interpreter
        runs the snippets, with which runner, and where the result cache is.
    :param use_cache: whether the command reads the result cache (only said).
    """
    try:
        stamp = probe(settings.python, settings.cache_dir)
    except ProbeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    why = settings.preload_problem(stamp) if settings.runner == "fork" else None
    if why:
        print(f"warning: {why}", file=sys.stderr)
    if verbose:
        cache = _rel(settings.cache_dir) if use_cache else "not used (--no-cache)"
        print(
            f"snippets run on {stamp.label()} ({settings.python}, {settings.runner} runner); result cache: {cache}",
            file=sys.stderr,
        )
    return stamp


def _origin(where: str, origin: str, duration: float) -> None:
    """Say (on stderr) whether a snippet ran or came from the cache, and its run time (``-v``).

    :param where: ``path:line: id`` of its placement.
    :param origin: ``"run"`` or ``"cache"`` (others say nothing: they are reported anyway).
    :param duration: seconds its run took (for a cache hit, the run that made the entry).
    """
    if origin == "run":
        print(f"{where}: ran in {duration:.2f} s", file=sys.stderr)
    elif origin == "cache":
        print(f"{where}: from the cache (its run took {duration:.2f} s)", file=sys.stderr)


def _run(project: Project, ids: list[str], use_cache: bool, verbose: int = 0) -> int:
    settings = project.settings
    stamp = _stamp(settings, verbose, use_cache)
    if stamp is None:
        return 1
    executor = _executor(settings, stamp, use_cache=use_cache)
    status = 0
    loaded = []
    for snippet_id in ids:
        try:
            loaded.append(_load_by_id(project, snippet_id))
        except SnippetError as exc:
            where = f"{exc.path}:{exc.line}: " if exc.path and exc.line else ""
            print(f"error: {where}{exc.message}", file=sys.stderr)
            status = 1
    for snippet in loaded:
        executor.submit(snippet)
    for snippet in loaded:
        outcome = executor.outcome(snippet)
        print(f"── {snippet.path}")
        if outcome.origin == "error":
            print("   " + "; ".join(outcome.notes))
            status = 1
            continue
        if outcome.result is None and outcome.stopped:
            print(f"   {outcome.stopped}")
            status = 1
            continue
        if outcome.result is None:
            print(f"   not run: this environment lacks {', '.join(outcome.missing)}")
            continue
        print(terminal_text(outcome.result, settings.normalizers))
        r = outcome.result
        ended, code = _ended(r)
        print(f"── {ended} · {r.stamp.label()} · {r.duration:.2f} s · {outcome.origin}")
        if r.ended_chain:  # even with status 0: the run of the chain did not get through
            print(f"   its chain's process ended with it: the cells after it did not run ({', '.join(r.ended_chain)})")
            code = code or 1
        if status == 0:
            status = code
    executor.close()
    return status


def _ended(result: RunResult) -> tuple[str, int]:
    """How a run ended, in words, and its status as a shell reports it."""
    if result.timed_out:
        return f"timed out after {result.duration:.1f} s, killed (status 124)", 124
    if result.stopped_by_output:
        return f"stopped: its output passed the output limit of {result.output_limit:,} bytes by {result.truncated_bytes:,} (status 1)", 1
    if result.signal:
        number = getattr(signal.Signals, result.signal, None) if result.signal.startswith("SIG") else None
        code = 128 + int(number) if number is not None else 1
        return f"killed by {result.signal} (status {code})", code
    code = result.exit_status if result.exit_status is not None else 1
    return f"exit status {code}", code


def _load_by_id(project: Project, snippet_id: str) -> Snippet:
    """A snippet by id: its file, or else its code written in a page (which needs the index)."""
    try:
        return load(snippet_id, project.settings.snippets_dir, project.settings.root)
    except SnippetError as exc:
        if "not found" not in exc.message:
            raise
        placed = [p for p in project.placements() if p.snippet_id == snippet_id]
        if not placed and project.unreadable():
            pages = ", ".join(f"{_rel_entry(Path(path))}:{line}: {why}" for path, line, why in project.unreadable())
            raise SnippetError(f"{exc.message}; a page that cannot be read may hold its code: {pages}") from None
        if not placed:
            raise
        return project.snippet(placed[0])


def _record(
    project: Project, ids: list[str], dry_run: bool, use_cache: bool, quiet: int = 0, verbose: int = 0,
    from_shards: Sequence[Path] = (), key: bytes | None = None,
) -> int:
    """``snipcheck record``; with ``from_shards``, the results a shard left in
    its folder are recorded instead of runs made here (see
    :func:`snipcheck.app.shard_command.shard_results`; with ``key``, only from a
    folder whose manifest is signed with it)."""
    settings = project.settings
    left_out = _left_out(project, "its snippets were not recorded")
    placements = project.placements()
    if ids:
        placed = {p.snippet_id for p in placements}
        unknown = [i for i in ids if i not in placed]
        if unknown:
            for i in unknown:
                print(f"error: snippet {i!r} is not placed in any page under {project.srcdir}", file=sys.stderr)
            return 1
        placements = [p for p in placements if p.snippet_id in set(ids)]
    stamp = _stamp(settings, verbose, use_cache)
    if stamp is None:
        return 1
    executor = _executor(settings, stamp, use_cache=use_cache)
    taken: dict[str, FromShard] = {}
    if from_shards:
        try:
            taken = shard_results(project, stamp, from_shards, executor, key)
        except MergeError as exc:
            executor.close()
            return _fail(f"cannot record from the shard: {exc}")
        absent = [i for i in ids if i not in taken]
        for i in absent:
            print(f"error: {i}: no result in {', '.join(map(str, from_shards))}: no shard there ran it, or it "
                  "failed there; give the folder of the shard that ran it", file=sys.stderr)  # fmt: skip
        if absent:
            executor.close()
            return 1
        placements = [p for p in placements if p.snippet_id in taken]
    loaded = []
    status = 1 if left_out else 0
    for p in placements:
        try:
            snippet = project.snippet(p)
        except SnippetError as exc:
            print(f"{_where(project, p)}: {exc.message}", file=sys.stderr)
            status = 1
            continue
        loaded.append((p, snippet))
    if not taken:
        executor.plan(s for _, s in loaded)
        for _, snippet in loaded:
            executor.submit(snippet)
    edits: list[Edit] = []
    drawn: list[tuple[Placement, tuple[Figure, ...]]] = []  # whose figures to write as stated files
    # Every output about to be recorded is produced a second time, afresh and
    # under another hash seed: an output that changes from run to run (a time,
    # an address, unseeded randomness) would drift on the next build, and one
    # that changes with the seed (a set's order) varies under plain python.
    rerun = Rerun(lambda hash_seed: _executor(settings, stamp, False, hash_seed), settings.normalizers)
    # What may be written is run again all at once: the cells of a chain (a
    # tutorial script's) then run again in one process per hash seed, not one
    # process per cell, each repeating the cells before it.
    rerun.submit([s for p, s in loaded if p.snippet_id not in taken and _may_change(executor.outcome(s), p, s, settings)])
    for p, snippet in loaded:
        where = f"{_where(project, p)}: {p.snippet_id}"
        shard_run = taken.get(p.snippet_id)
        outcome = Outcome(shard_run.result, "shard") if shard_run else executor.outcome(snippet)
        if verbose and outcome.result is not None:
            _origin(where, outcome.origin, outcome.result.duration)
        if outcome.origin == "error":
            print(f"{where}: " + "; ".join(outcome.notes), file=sys.stderr)
            status = 1
            continue
        if outcome.result is None and outcome.stopped:
            print(f"{where}: not recorded: {outcome.stopped}", file=sys.stderr)
            status = 1
            continue
        if outcome.result is None:
            if quiet < 1:
                print(f"{where}: not run here (lacks {', '.join(outcome.missing)}); left as is")
            continue
        verdict = judge(snippet.tags, outcome.result, p.stated, settings.normalizers)
        if verdict.ended_wrong:
            print(f"{where}: not recorded: " + "; ".join(verdict.problems), file=sys.stderr)
            status = 1
            continue
        if outcome.result.truncated_bytes:
            print(f"{where}: not recorded: {truncation_advice(outcome.result)}", file=sys.stderr)
            status = 1
            continue
        figures = outcome.result.figures
        if not verdict.diff and any(not c.ok for c in figure_files.check(p.snippet_id, figures, project.srcdir)):
            # only figures changed: their files are written, the page stays as it is
            again = None if shard_run else rerun.other(snippet)
            why = figure_files.stable(figures, again.figures if again else ())
            if why:
                print(f"{where}: not recorded: {why}", file=sys.stderr)
                status = 1
            else:
                drawn.append((p, figures))
                if dry_run and quiet < 1:
                    print(f"{where}: would record its figures")
            continue
        if not verdict.diff:
            continue
        try:
            body = to_record(p.stated, verdict.actual, settings.normalizers)
        except Unrecordable as exc:
            print(f"{where}: not recorded: {exc}", file=sys.stderr)
            status = 1
            continue
        why = p.writable  # any body can be stated: in the escaped form where the plain one cannot hold it
        if why:
            print(f"{where}: not recorded: {why}", file=sys.stderr)
            status = 1
            continue
        # What is written must hold on the second run too (its wildcards, if
        # the author wrote any, may cover what varies).
        # (a shard's result cannot run again here: the next merged build compares it)
        unstable = "" if shard_run else rerun.problem(snippet, body)
        again = None if shard_run else rerun.other(snippet)
        moved = figure_files.stable(figures, again.figures) if again else None
        unstable = unstable or (f"{VARIES}:\n{moved}" if moved else "")
        if unstable:
            print(f"{where}: not recorded: {unstable}", file=sys.stderr)
            status = 1
            continue
        ran_in = outcome.result.stamp
        options = {"stated-env": f"{ran_in.label()} · {ran_in.platform}"} if snippet.tags.requires else {}
        edits.append(Edit(p, body, options))
        drawn.append((p, figures))
        if dry_run and quiet < 1:
            print(f"{where}: would record")
            print(verdict.diff)
    rerun.close()
    executor.close()
    if edits:
        try:
            files = project.rewrite(edits)
        except ChangedOnDisk as exc:
            return _fail(_changed(exc, "record"))
        except Unwritable as exc:
            return _fail(f"{exc}; nothing was recorded")
    if dry_run:
        return _record_summary(status, len(edits), len(loaded), dry_run, quiet)
    # Pages and figures are written as one: a Ctrl-C before the first file is
    # replaced leaves all as they were; after, it waits until all are written.
    drawn_files: list[Path] = []
    with signals_held():
        if edits:
            try:
                _written.extend(write_all(*_new_and_old(files)))
            except ChangedOnDisk as exc:
                return _fail(_changed(exc, "record"))
            except WriteError as exc:
                return _fail(str(exc))
        try:
            for placement, figures in drawn:
                changed = figure_files.write_recorded(project.srcdir, placement.snippet_id, figures)
                drawn_files += changed
                _written.extend(changed)
        except OSError as exc:
            return _fail(f"cannot write a stated figure: {exc}")
    if quiet < 1:
        for edit in edits:
            origin = taken.get(edit.placement.snippet_id)
            whence = f" from {origin.label} (run once there, not again here: the next merged build compares it)" if origin else ""
            print(f"{_where(project, edit.placement)}: {edit.placement.snippet_id}: recorded{whence}")
        for path in drawn_files:
            print(f"{_rel(path)}: {'written' if path.exists() else 'removed'}")
    return _record_summary(status, len(edits), len(loaded), dry_run, quiet)


def _may_change(outcome: Outcome, p: Placement, snippet: Snippet, settings: Settings) -> bool:
    """Whether ``record`` may write ``p``'s stated output or figures (its run's output or figures differ)."""
    if outcome.result is None:
        return False
    return bool(outcome.result.figures) or bool(judge(snippet.tags, outcome.result, p.stated, settings.normalizers).diff)


def _record_summary(status: int, edits: int, loaded: int, dry_run: bool, quiet: int) -> int:
    """Print record's last line (unless ``-qq``); return ``status``."""
    if quiet < 2:
        verb = "would change" if dry_run else "recorded"
        print(f"{edits} stated output(s) {verb}; {loaded - edits} unchanged or skipped")
    return status


def _where(project: Project, p: Placement) -> str:
    return f"{_rel(Path(p.source))}:{p.line}"


def _verify(
    project: Project, python: str | None, shard: tuple[int, int], use_cache: bool, quiet: int = 0, verbose: int = 0
) -> Report | None:
    settings = project.settings
    if python:
        settings = dataclasses.replace(settings, python=absolute_command(python))
    placements = project.placements()
    stamp = _stamp(settings, verbose, use_cache)
    if stamp is None:
        return None
    executor = _executor(settings, stamp, use_cache=use_cache)
    try:
        report = verify(
            settings, placements, executor, stamp, shard, progress=_progress if quiet < 1 else None, loader=project.snippet,
            srcdir=project.srcdir,
        )
    finally:
        executor.close()
        if quiet < 1 and sys.stderr.isatty():
            print(file=sys.stderr)
    if verbose:
        for s in report.snippets:
            _origin(f"{s.doc}:{s.line}: {s.id}", s.origin, s.duration)
    lacking = sandbox.caveats() if any(s.origin == "run" for s in report.snippets) else None
    if lacking and quiet < 2:
        print(f"note: {lacking}", file=sys.stderr)  # once, as the build summary says it
    return report


def _execute(project: Project, args: argparse.Namespace) -> int:
    """``snipcheck execute``: one shard (``--shard K/N --out DIR``) or the merge (``--merge DIR...``)."""
    from snipcheck.app.shard_command import merge_shards, run_shard
    from snipcheck.run import requirements
    from snipcheck.shard.files import MergeError

    settings = project.settings
    running = bool(args.shard or args.provides) and not args.merge
    if running == bool(args.merge):
        return _fail(
            "give --shard K/N --out DIR (run one shard), --provides NAME --out DIR (run what needs NAME) "
            "or --merge DIR... (merge the shards)",
            USAGE_ERROR,
        )
    if running and (args.out is None or args.not_run):
        return _fail("--shard needs --out DIR, and takes no --not-run (that is the merge's)", USAGE_ERROR)
    if args.merge and (args.out is not None or args.provides):
        return _fail("--merge takes no --out or --provides (those are a shard's)", USAGE_ERROR)
    if running and (args.check != _NOT_GIVEN or args.check_seed is not None):
        return _fail("--check and --check-seed are the merge's: give them with --merge DIR...", USAGE_ERROR)
    if args.shard_key_problem:
        return _fail(args.shard_key_problem, USAGE_ERROR)
    for name in (*args.provides, *args.not_run):
        try:
            requirements.check(name, settings.provides, settings.requirements)
        except requirements.RequirementError as exc:
            return _fail(str(exc), USAGE_ERROR)
    if _left_out(project, "execute reads every page, so it did nothing"):
        return USAGE_ERROR
    if args.shard:
        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            return _fail(str(exc), USAGE_ERROR)
    stamp = _stamp(settings, args.verbose)
    if stamp is None:
        return 1

    def make(chosen: Settings, at: Stamp, provides: tuple[str, ...]) -> Executor:
        executor = chosen.executor(at, provides=provides)
        _executors.append(executor)
        return executor

    if running and "cuda" in args.provides and not stamp.cuda:
        return _fail(
            f"--provides cuda, but the snippet interpreter's torch sees no CUDA device here ({stamp.label()}): "
            "start this shard on a machine with a GPU, or route a feature of your own (snipcheck_requirements)",
            USAGE_ERROR,
        )
    if running:
        return run_shard(project, stamp, shard if args.shard else None, args.out, args.provides, make, args.shard_key)
    check = shard_check.DEFAULT if args.check == _NOT_GIVEN else args.check
    try:
        return merge_shards(project, stamp, args.merge, args.not_run, make, args.shard_key, check, args.check_seed)
    except MergeError as exc:
        return _fail(f"cannot merge: {exc}")
    except OSError as exc:
        return _fail(f"cannot merge: {exc}")


def _progress(done: int, total: int, snippet_id: str) -> None:
    """One progress line on stderr, rewritten in place on a terminal."""
    line = f"[{done}/{total}] {snippet_id}"
    if sys.stderr.isatty():
        print("\r\x1b[K" + line, end="", file=sys.stderr, flush=True)
    elif done == total or done % 25 == 0:
        print(line, file=sys.stderr, flush=True)


def _write_report(path: Path, report: Report) -> bool:
    """Write the JSON report only when it changed: a report holds nothing that
    varies from run to run (:mod:`snipcheck.report.steady`), so a committed one
    stays untouched by a run that found nothing new.

    :return: whether the file was written."""
    data = (json.dumps(report.to_json(), ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    write_atomic(path, data)
    return True


def _emit(
    report: Report,
    json_path: Path | None,
    html_path: Path | None,
    quiet: int = 0,
) -> int:
    """Print the report (with ``quiet`` 2 or more, only what does not hold, on
    stderr) and write the files asked for; return the exit status."""
    if quiet >= 2:
        problems = report_format.terminal(report, color=use_color(sys.stderr), problems_only=True)
        if problems:
            print(problems, file=sys.stderr)
    else:
        print(report_format.terminal(report, color=use_color(sys.stdout)))
    with signals_held():  # both reports, or (a Ctrl-C before the first) neither
        if json_path and _write_report(json_path, report):
            _written.append(json_path)
        if html_path:
            write_atomic(html_path, report_format.html(report).encode("utf-8"))
            _written.append(html_path)
    if json_path and quiet < 2:
        print(f"JSON report: {json_path}")
    if html_path and quiet < 2:
        print(f"HTML report: {html_path}")
    return 0 if report.holds else 1


def _read_report(path: Path) -> Report:
    """:raises ValueError: naming the file and what is wrong with it (see :mod:`snipcheck.report.read`)."""
    return report_file.read(path)


def _merge(paths: list[Path], json_path: Path | None, html_path: Path | None, quiet: int = 0) -> int:
    try:
        reports = [_read_report(path) for path in paths]
        merged = merge(reports)
    except ValueError as exc:
        return _fail(f"cannot merge: {exc}", USAGE_ERROR)
    return _emit(merged, json_path, html_path, quiet=quiet)


_NOT_GIT = "not a git checkout, so uncommitted changes cannot be protected; use --force"


def _accept(project: Project, args: argparse.Namespace, use_cache: bool) -> int:
    settings = project.settings
    if args.report:
        try:
            report = _read_report(args.report)
        except ValueError as exc:
            return _fail(str(exc), USAGE_ERROR)
    if not (args.force or args.dry_run) and accept_mod.uncommitted([], settings.root) is None:
        return _fail(_NOT_GIT)  # before a whole verify run, whose results could not be written
    if not args.report:
        found = _verify(project, args.python, (1, 1), use_cache)
        if found is None:
            return 1
        report = found
        print(report_format.terminal(report, color=use_color(sys.stdout)))
    if report.shard != (1, 1):
        return _fail("this is one shard's report; merge the shards first (snipcheck merge)", USAGE_ERROR)
    failing = [s.id for s in report.snippets if s.status in ("failing", "error")]
    if failing and not args.force:
        return _fail(
            "not accepting: these snippets fail on this version and need a person: "
            + ", ".join(failing) + " (fix them, or --force to accept the rest anyway)"
        )  # fmt: skip
    plan = accept_mod.plan(report, project.placements(), settings.root, args.only, settings.normalizers)
    _drop_varying(project, plan, report, args.python)
    return _write_plan(project, plan, report, dry_run=args.dry_run, force=args.force)


def _drop_varying(project: Project, plan: accept_mod.Plan, report: Report, python: str | None) -> None:
    """Take out of ``plan`` each output that varies (:mod:`snipcheck.pending.variation`),
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
    rerun = Rerun(lambda hash_seed: _executor(settings, stamp, False, hash_seed), settings.normalizers)
    try:
        loaded: list[tuple[Edit, Snippet | None]] = []
        for edit in plan.edits:
            try:
                loaded.append((edit, project.snippet(edit.placement)))
            except SnippetError as exc:
                loaded.append((edit, None))
                print(f"warning: {_where(project, edit.placement)}: not run again: {exc.message}", file=sys.stderr)
        rerun.submit([snippet for _, snippet in loaded if snippet is not None])
        kept = []
        for edit, snippet in loaded:
            why = rerun.problem(snippet, edit.body, "the report's run") if snippet is not None else ""
            if not why:
                kept.append(edit)
                continue
            snippet_id = edit.placement.snippet_id
            plan.skipped.append((snippet_id, f"{_where(project, edit.placement)}: not accepted: {why}"))
            plan.accepted = [i for i in plan.accepted if i != snippet_id]
            plan.figures = [(i, f) for i, f in plan.figures if i != snippet_id]
        plan.edits = kept
    finally:
        rerun.close()


def _new_and_old(files: dict[Path, tuple[bytes, bytes]]) -> tuple[dict[Path, bytes], dict[Path, bytes]]:
    """``write_all``'s arguments for ``file → (old, new)``: the new bytes, and
    the old ones each file must still hold (:func:`snipcheck.files.write_all`)."""
    return {path: new for path, (_, new) in files.items()}, {path: old for path, (old, _) in files.items()}


def _changed(exc: ChangedOnDisk, command: str) -> str:
    """What to say when another process wrote a file while ``command`` ran."""
    return (
        f"{_rel(exc.path)} changed on disk while snipcheck {command} ran (another record or accept, or an editor, "
        f"wrote it after {command} had read it); nothing was written: run snipcheck {command} again"
    )


def _write_plan(
    project: Project, plan: accept_mod.Plan, report: Report, *, dry_run: bool, force: bool, reviewing: bool = False
) -> int:
    """Write an accept plan (pages and pin), all or nothing; the pin moves only
    when every drifted output of the report is accepted."""
    settings = project.settings
    drifted = {s.id for s in report.snippets if s.status == "drifted"}
    left = sorted(drifted - set(plan.accepted))
    if left:
        plan.pin = None
    for snippet_id, reason in plan.skipped:
        print(f"skipped {snippet_id}: {reason}", file=sys.stderr)
    command = "review" if reviewing else "accept"
    try:
        files = accept_mod.new_files(plan, project)
    except ChangedOnDisk as exc:
        return _fail(_changed(exc, command))
    except Unwritable as exc:
        return _fail(f"accept wrote nothing: {exc}")
    pinned = accept_mod.pin_file(settings.root)
    if left:
        pin_note = f"the reference pin stays: {len(left)} drifted output(s) not accepted ({', '.join(left)})"
    elif pinned is not None and plan.pin:
        pin_note = f"reference {plan.pin!r} in {_rel(pinned)}"
    else:
        pin_note = "no reference pin to move (set snipcheck_reference = \"torch X\" in conf.py to keep one)"
    if dry_run:
        print(accept_mod.preview(files, settings.root) or "(no stated output changes)")
        print(f"would accept {len(plan.accepted)} output(s); {pin_note}")
        return 0
    if not force:
        dirty = accept_mod.uncommitted(sorted(files), settings.root)
        if dirty is None:
            return _fail(_NOT_GIT)
        if dirty:
            return _fail("uncommitted changes in " + ", ".join(dirty) + "; commit or stash them first (or --force)")
    drawn: list[Path] = []
    with signals_held():  # pages, pin and figures as one (see _record)
        try:
            changed = write_all(*_new_and_old(files))
        except ChangedOnDisk as exc:
            return _fail(_changed(exc, command))
        except WriteError as exc:
            return _fail(f"accept: {exc}")
        _written.extend(changed)
        try:
            for snippet_id, figures in plan.figures:
                done = figure_files.write_recorded(project.srcdir, snippet_id, figures)
                drawn += done
                _written.extend(done)
        except OSError as exc:
            return _fail(f"accept: cannot write a stated figure: {exc}")
    for path in changed:
        print(f"rewrote {_rel(path)}")
    for path in drawn:
        print(f"{'wrote' if path.exists() else 'removed'} {_rel(path)}")
    print(f"accepted {len(plan.accepted)} output(s); {pin_note}")
    return 0


def _review(project: Project, args: argparse.Namespace, use_cache: bool) -> int:
    state = project.settings.cache_dir / "review.json"
    try:
        review = None if (args.restart or args.python or args.report) else Review.load(state)
    except ValueError as exc:
        return _fail(str(exc), USAGE_ERROR)
    if review is None and args.report:
        try:
            report = _read_report(args.report)
        except ValueError as exc:
            return _fail(str(exc), USAGE_ERROR)
    if not args.force and accept_mod.uncommitted([], project.settings.root) is None:
        return _fail(_NOT_GIT)  # before a verify run and a review whose decisions could not be written
    if review is None:
        if not args.report:
            found = _verify(project, args.python, (1, 1), use_cache)
            if found is None:
                return 1
            report = found
        if report.shard != (1, 1):
            return _fail("this is one shard's report; merge the shards first (snipcheck merge)", USAGE_ERROR)
        review = Review(report)
        if not review.drifted:
            print("nothing drifted: nothing to review")
            return 0
        review.save(state)
    else:
        done = len(review.drifted) - len(review.undecided)
        print(f"resuming the review of {review.report.stamp.label()}: {done} of {len(review.drifted)} decided")

    def ask(prompt: str) -> str:
        try:
            return input(prompt)
        except EOFError:
            return ""

    _interrupt_note.append(f"the review's decisions so far are kept in {_rel(state)}: snipcheck review resumes it")
    if not walk(review, state, ask, print):
        print(f"review paused, {len(review.undecided)} output(s) undecided; run snipcheck review again to resume")
        return 1
    accepted = review.accepted
    status = 0
    if accepted:
        plan = accept_mod.plan(review.report, project.placements(), project.settings.root, accepted, project.settings.normalizers)
        _drop_varying(project, plan, review.report, args.python)
        status = _write_plan(project, plan, review.report, dry_run=False, force=args.force, reviewing=True)
    else:
        print("no output accepted; the pages are unchanged")
    if status == 0:
        state.unlink(missing_ok=True)
    return status


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _rel_entry(path: Path) -> str:
    """:func:`_rel` of the folder, then the name: a page that is a broken
    symbolic link or a loop of links is shown by its own name (resolving
    would follow it, or fail on a loop)."""
    folder = _rel(path.parent)
    return path.name if folder == "." else f"{folder}/{path.name}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
