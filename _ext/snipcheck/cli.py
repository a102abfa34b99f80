"""Command line: ``python -m snipcheck <command>`` (no Sphinx needed).

``run ID...``
    run snippets and print their output as a terminal shows it, and how each
    run ended; the exit status is the snippet's as a shell reports it (128 + N
    when signal N ended it, 124 at its timeout; with several ids, the first
    that is not 0);
``record [ID...]``
    run snippets and write their actual output into the chapter source as the
    stated output.  Without ids, every placed snippet whose stated output is
    missing or drifted.  Only stated outputs that differ are rewritten; every
    other byte of the source stays as it was, and each file is written
    atomically.  A run that ends differently from what its tags expect is not
    recorded.
``verify [--python PY] [--shard k/n] [--json F] [--html F]``
    run every placed snippet on PY and report drift (terminal, JSON, HTML);
    exit status 1 when the chapter does not hold.
``merge REPORT.json... [--json F] [--html F]``
    combine shard reports into one.
``accept [--python PY | --report F] [--dry-run] [--force]``
    rewrite the drifted stated outputs and move the reference pin.
``new ID [--rust] [--expect TYPE] [--requires R]``
    scaffold a snippet file and print the directive to paste into a page;
``normalizers``
    list the normalizers and what each does.

Exit status: 0 on success, 1 if something drifted or could not be run or
recorded, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from . import accept as accept_mod
from . import docsource, normalize, report_format, scaffold
from .cache import write_atomic
from .compare import judge, terminal_text, text_diff
from .environment import ProbeError, probe
from .model import RunResult
from .settings import Settings, absolute_command
from .snippets import SnippetError, load
from .verify import Report, merge, parse_shard, verify


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snipcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="directory holding conf.py (default: .)")
    parser.add_argument("--docs", type=Path, default=None, help="chapter sources (default: ROOT/docs)")
    parser.add_argument("--no-cache", action="store_true", help="run every snippet, ignoring cached results")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run snippets and print their output")
    p_run.add_argument("ids", nargs="+")
    p_rec = sub.add_parser("record", help="write actual outputs into the chapter source")
    p_rec.add_argument("ids", nargs="*")
    p_rec.add_argument("--dry-run", action="store_true", help="show what would change, write nothing")
    p_ver = sub.add_parser("verify", help="run every placed snippet and report drift")
    p_ver.add_argument("--python", help="interpreter to run the snippets (default: snipcheck_python)")
    p_ver.add_argument("--shard", default="1/1", help="run the k-th of n deterministic slices, e.g. 2/8")
    p_ver.add_argument("--json", type=Path, help="write the report as JSON here")
    p_ver.add_argument("--html", type=Path, help="write the report as an HTML page here")
    p_mrg = sub.add_parser("merge", help="combine shard reports")
    p_mrg.add_argument("reports", nargs="+", type=Path)
    p_mrg.add_argument("--json", type=Path)
    p_mrg.add_argument("--html", type=Path)
    p_acc = sub.add_parser("accept", help="rewrite drifted stated outputs, move the reference pin")
    src = p_acc.add_mutually_exclusive_group()
    src.add_argument("--python", help="verify on this interpreter first (default: snipcheck_python)")
    src.add_argument("--report", type=Path, help="accept from a verify JSON report instead of running")
    p_acc.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    p_acc.add_argument("--force", action="store_true", help="write even over uncommitted changes or failing snippets")
    p_new = sub.add_parser("new", help="scaffold a snippet and print its directive")
    p_new.add_argument("id", help="snippet id, e.g. inplace/my-example")
    p_new.add_argument("--rust", action="store_true", help="a Rust snippet (.rs) instead of Python")
    p_new.add_argument("--expect", default="ok", help='what it must end with, e.g. "RuntimeError"')
    p_new.add_argument("--requires", action="append", default=[], help="a requirement, e.g. cuda (repeatable)")
    sub.add_parser("normalizers", help="list the normalizers")
    args = parser.parse_args(argv)
    if args.command == "normalizers":
        for n in normalize.REGISTRY.values():
            kind = "display" if n.display else "compare-only"
            print(f"{n.name:28} {kind:13} {n.doc}")
        return 0
    if args.command == "merge":
        return _merge(args.reports, args.json, args.html)
    try:
        settings, messages = Settings.from_conf(args.root)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    docs = args.docs or settings.root / "docs"
    if args.command == "run":
        return _run(settings, args.ids, use_cache=not args.no_cache)
    if args.command == "new":
        return scaffold.new(settings, args.id, rust=args.rust, expect=args.expect, requires=args.requires)
    if args.command == "verify":
        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        report = _verify(settings, docs, args.python, shard, use_cache=not args.no_cache)
        if report is None:
            return 1
        return _emit(report, args.json, args.html)
    if args.command == "accept":
        return _accept(settings, docs, args, use_cache=not args.no_cache)
    return _record(settings, docs, args.ids, dry_run=args.dry_run, use_cache=not args.no_cache)


def _stamp(settings: Settings):  # type: ignore[no-untyped-def]
    try:
        return probe(settings.python, settings.cache_dir)
    except ProbeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _run(settings: Settings, ids: list[str], use_cache: bool) -> int:
    stamp = _stamp(settings)
    if stamp is None:
        return 1
    executor = settings.executor(stamp, use_cache=use_cache)
    status = 0
    for snippet_id in ids:
        try:
            snippet = load(snippet_id, settings.snippets_dir, settings.root)
        except SnippetError as exc:
            where = f"{exc.path}:{exc.line}: " if exc.path and exc.line else ""
            print(f"error: {where}{exc.message}", file=sys.stderr)
            status = 1
            continue
        executor.submit(snippet)
    for snippet_id in ids:
        try:
            snippet = load(snippet_id, settings.snippets_dir, settings.root)
        except SnippetError:
            continue
        outcome = executor.outcome(snippet)
        print(f"── {snippet.path}")
        if outcome.origin == "error":
            print("   " + "; ".join(outcome.notes))
            status = 1
            continue
        if outcome.result is None:
            print(f"   not run: this environment lacks {', '.join(outcome.missing)}")
            continue
        print(terminal_text(outcome.result, settings.normalizers))
        r = outcome.result
        ended, code = _ended(r)
        print(f"── {ended} · {r.stamp.label()} · {r.duration:.2f} s · {outcome.origin}")
        if status == 0:
            status = code
    return status


def _ended(result: RunResult) -> tuple[str, int]:
    """How a run ended, in words, and its status as a shell reports it."""
    if result.timed_out:
        return f"timed out after {result.duration:.1f} s, killed (status 124)", 124
    if result.signal:
        number = getattr(signal.Signals, result.signal, None) if result.signal.startswith("SIG") else None
        code = 128 + int(number) if number is not None else 1
        return f"killed by {result.signal} (status {code})", code
    code = result.exit_status if result.exit_status is not None else 1
    return f"exit status {code}", code


def _record(settings: Settings, docs: Path, ids: list[str], dry_run: bool, use_cache: bool) -> int:
    placements = docsource.scan_tree(docs)
    if ids:
        placed = {p.snippet_id for p in placements}
        unknown = [i for i in ids if i not in placed]
        if unknown:
            for i in unknown:
                print(f"error: snippet {i!r} is not placed in any page under {docs}", file=sys.stderr)
            return 1
        placements = [p for p in placements if p.snippet_id in set(ids)]
    stamp = _stamp(settings)
    if stamp is None:
        return 1
    executor = settings.executor(stamp, use_cache=use_cache)
    loaded = []
    status = 0
    for p in placements:
        try:
            snippet = load(p.snippet_id, settings.snippets_dir, settings.root)
        except SnippetError as exc:
            print(f"{_rel(p.path)}:{p.line}: {exc.message}", file=sys.stderr)
            status = 1
            continue
        loaded.append((p, snippet))
    executor.plan(s for _, s in loaded)
    for _, snippet in loaded:
        executor.submit(snippet)
    edits: dict[Path, dict[int, tuple[str, dict[str, str]]]] = defaultdict(dict)
    # Every output about to be recorded is produced a second time, afresh: an
    # output that changes from run to run (a time, an address, unseeded
    # randomness) would drift on the next build, and no recording can fix it.
    second = settings.executor(stamp, use_cache=False)
    for p, snippet in loaded:
        where = f"{_rel(p.path)}:{p.line}"
        outcome = executor.outcome(snippet)
        if outcome.origin == "error":
            print(f"{where}: {p.snippet_id}: " + "; ".join(outcome.notes), file=sys.stderr)
            status = 1
            continue
        if outcome.result is None:
            print(f"{where}: {p.snippet_id}: not run here (lacks {', '.join(outcome.missing)}); left as is")
            continue
        verdict = judge(snippet.tags, outcome.result, p.body, settings.normalizers)
        if verdict.ended_wrong:
            print(f"{where}: {p.snippet_id}: not recorded: " + "; ".join(verdict.problems), file=sys.stderr)
            status = 1
            continue
        if not verdict.diff:
            continue
        again = second.outcome(snippet).result
        unstable = text_diff(
            verdict.actual,
            terminal_text(again, settings.normalizers) if again else "",
            settings.normalizers,
            "first run",
            "second run",
        )
        if unstable:
            print(
                f"{where}: {p.snippet_id}: not recorded: its output differs between two runs of the same code, "
                "so any recording would drift on the next build; make it deterministic (seed random generators, "
                "do not print times, addresses or durations):\n" + unstable,
                file=sys.stderr,
            )
            status = 1
            continue
        options = {"stated-env": f"{stamp.label()} · {stamp.platform}"} if snippet.tags.requires else {}
        edits[p.path][p.line] = (verdict.actual, options)
        print(f"{where}: {p.snippet_id}: {'would record' if dry_run else 'recorded'}")
        if dry_run:
            print(verdict.diff)
    if not dry_run:
        for path, file_edits in edits.items():
            try:
                docsource.rewrite(path, file_edits)
            except docsource.UnwritableBody as exc:
                print(f"error: {exc}; nothing in {_rel(path)} was changed", file=sys.stderr)
                status = 1
    second.close()
    count = sum(len(e) for e in edits.values())
    print(f"{count} stated output(s) {'would change' if dry_run else 'recorded'}; {len(loaded) - count} unchanged or skipped")
    return status


def _verify(
    settings: Settings, docs: Path, python: str | None, shard: tuple[int, int], use_cache: bool
) -> Report | None:
    if python:
        settings = dataclasses.replace(settings, python=absolute_command(python))
    stamp = _stamp(settings)
    if stamp is None:
        return None
    executor = settings.executor(stamp, use_cache=use_cache)
    return verify(settings, docs, executor, stamp, shard)


def _emit(report: Report, json_path: Path | None, html_path: Path | None) -> int:
    print(report_format.terminal(report, color=sys.stdout.isatty()))
    if json_path:
        write_atomic(json_path, (json.dumps(report.to_json(), ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
        print(f"JSON report: {json_path}")
    if html_path:
        write_atomic(html_path, report_format.html(report).encode("utf-8"))
        print(f"HTML report: {html_path}")
    return 0 if report.holds else 1


def _merge(paths: list[Path], json_path: Path | None, html_path: Path | None) -> int:
    reports = []
    for path in paths:
        try:
            reports.append(Report.from_json(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: cannot read report {path}: {exc}", file=sys.stderr)
            return 2
    try:
        merged = merge(reports)
    except ValueError as exc:
        print(f"error: cannot merge: {exc}", file=sys.stderr)
        return 2
    return _emit(merged, json_path, html_path)


def _accept(settings: Settings, docs: Path, args: argparse.Namespace, use_cache: bool) -> int:
    if args.report:
        try:
            report = Report.from_json(json.loads(args.report.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: cannot read report {args.report}: {exc}", file=sys.stderr)
            return 2
    else:
        found = _verify(settings, docs, args.python, (1, 1), use_cache)
        if found is None:
            return 1
        report = found
        print(report_format.terminal(report, color=sys.stdout.isatty()))
    if report.shard != (1, 1):
        print("error: this is one shard's report; merge the shards first (python -m snipcheck merge)", file=sys.stderr)
        return 2
    failing = [s.id for s in report.snippets if s.status in ("failing", "error")]
    if failing and not args.force:
        print(
            "error: not accepting: these snippets fail on this version and need a person: "
            + ", ".join(failing) + " (fix them, or --force to accept the rest anyway)",
            file=sys.stderr,
        )
        return 1
    plan = accept_mod.plan(report, settings.root)
    for snippet_id, reason in plan.skipped:
        print(f"skipped {snippet_id}: {reason}", file=sys.stderr)
    targets = sorted(plan.edits) + [settings.root / "pyproject.toml"]
    if args.dry_run:
        print(accept_mod.preview(plan) or "(no stated output changes)")
        print(f"would accept {len(plan.accepted)} output(s) and set reference-torch = {plan.pin!r}")
        return 0
    if not args.force:
        dirty = accept_mod.uncommitted(targets, settings.root)
        if dirty is None:
            print("error: not a git checkout, so uncommitted changes cannot be protected; use --force", file=sys.stderr)
            return 1
        if dirty:
            print(
                "error: uncommitted changes in " + ", ".join(dirty)
                + "; commit or stash them first (or --force)",
                file=sys.stderr,
            )
            return 1
    try:
        changed = accept_mod.apply(plan, settings.root)
    except (OSError, docsource.UnwritableBody, KeyError, ValueError) as exc:
        print(f"error: accept wrote nothing: {exc}", file=sys.stderr)
        return 1
    for path in changed:
        print(f"rewrote {_rel(path)}")
    print(f"accepted {len(plan.accepted)} output(s); reference-torch = {plan.pin!r}")
    return 0


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
