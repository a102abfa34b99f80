"""Command line: ``python -m snipcheck <command>`` (no Sphinx needed).

``run ID...``
    run snippets and print their output as a terminal shows it;
``record [ID...]``
    run snippets and write their actual output into the chapter source as the
    stated output.  Without ids, every placed snippet whose stated output is
    missing or drifted.  Only stated outputs that differ are rewritten; every
    other byte of the source stays as it was, and each file is written
    atomically.  A run that ends differently from what its tags expect is not
    recorded.

Exit status: 0 on success, 1 if something could not be run or recorded,
2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from . import docsource
from .compare import judge, terminal_text
from .environment import ProbeError, probe
from .settings import Settings
from .snippets import SnippetError, load


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
    args = parser.parse_args(argv)
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
            print(f"{exc.path or snippet_id}:{exc.line or 1}: {exc.message}", file=sys.stderr)
            status = 1
            continue
        executor.submit(snippet)
    for snippet_id in ids:
        try:
            snippet = load(snippet_id, settings.snippets_dir, settings.root)
        except SnippetError:
            continue
        outcome = executor.outcome(snippet)
        print(f"── {snippet.path}", file=sys.stderr)
        if outcome.result is None:
            print(f"   not run: this environment lacks {', '.join(outcome.missing)}", file=sys.stderr)
            continue
        print(terminal_text(outcome.result, settings.normalizers))
        r = outcome.result
        print(f"── {r.stamp.label()} · {r.duration:.2f} s · {outcome.origin}", file=sys.stderr)
    return status


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
        executor.submit(snippet)
        loaded.append((p, snippet))
    edits: dict[Path, dict[int, tuple[str, dict[str, str]]]] = defaultdict(dict)
    for p, snippet in loaded:
        where = f"{_rel(p.path)}:{p.line}"
        outcome = executor.outcome(snippet)
        if outcome.result is None:
            print(f"{where}: {p.snippet_id}: not run here (lacks {', '.join(outcome.missing)}); left as is")
            continue
        verdict = judge(snippet.tags, outcome.result, p.body, settings.normalizers)
        if verdict.status in ("exec", "timeout") or (verdict.status == "drift" and not verdict.diff):
            print(f"{where}: {p.snippet_id}: not recorded: " + "; ".join(verdict.problems), file=sys.stderr)
            status = 1
            continue
        if verdict.status == "drift" and len(verdict.problems) > 1:
            print(f"{where}: {p.snippet_id}: not recorded: " + verdict.problems[0], file=sys.stderr)
            status = 1
            continue
        if not verdict.diff:
            continue
        options = {"stated-env": f"{stamp.label()} · {stamp.platform}"} if snippet.tags.requires else {}
        edits[p.path][p.line] = (verdict.actual, options)
        print(f"{where}: {p.snippet_id}: {'would record' if dry_run else 'recorded'}")
        if dry_run:
            print(verdict.diff)
    if not dry_run:
        for path, file_edits in edits.items():
            docsource.rewrite(path, file_edits)
    count = sum(len(e) for e in edits.values())
    print(f"{count} stated output(s) {'would change' if dry_run else 'recorded'}; {len(loaded) - count} unchanged or skipped")
    return status


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
