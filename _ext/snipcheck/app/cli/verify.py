"""``snipcheck verify``: run every placed snippet, report drift; and the report's output, shared with ``merge``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from snipcheck.app.cli import session
from snipcheck.app.cli.output import USAGE_ERROR, fail, origin, progress, use_color
from snipcheck.app.project import Project
from snipcheck.files import signals_held, write_atomic
from snipcheck.report import show as report_format
from snipcheck.report.verify import Report, parse_shard, verify
from snipcheck.run import sandbox
from snipcheck.settings import absolute_command


def command(project: Project, args: argparse.Namespace) -> int:
    """Verify shard ``args.shard``, print the report, write the files asked for."""
    try:
        shard = parse_shard(args.shard)
    except ValueError as exc:
        return fail(str(exc), USAGE_ERROR)
    report = run_verify(project, args.python, shard, use_cache=not args.no_cache, quiet=args.quiet, verbose=args.verbose)
    if report is None:
        return 1
    return emit(report, args.json, args.html, quiet=args.quiet)


def run_verify(
    project: Project, python: str | None, shard: tuple[int, int], use_cache: bool, quiet: int = 0, verbose: int = 0
) -> Report | None:
    """Verify the project (on ``python``, default ``snipcheck_python``); ``None`` after saying why not."""
    settings = project.settings
    if python:
        settings = dataclasses.replace(settings, python=absolute_command(python))
    placements = project.placements()
    stamp = session.interpreter(settings, verbose, use_cache)
    if stamp is None:
        return None
    executor = session.executor(settings, stamp, use_cache=use_cache)
    try:
        report = verify(
            settings, placements, executor, stamp, shard, progress=progress if quiet < 1 else None, loader=project.snippet,
            srcdir=project.srcdir,
        )
    finally:
        executor.close()
        if quiet < 1 and sys.stderr.isatty():
            print(file=sys.stderr)
    if verbose:
        for s in report.snippets:
            origin(f"{s.doc}:{s.line}: {s.id}", s.origin, s.duration)
    lacking = sandbox.caveats() if any(s.origin == "run" for s in report.snippets) else None
    if lacking and quiet < 2:
        print(f"note: {lacking}", file=sys.stderr)  # once, as the build summary says it
    return report


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


def emit(report: Report, json_path: Path | None, html_path: Path | None, quiet: int = 0) -> int:
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
            session.written.append(json_path)
        if html_path:
            write_atomic(html_path, report_format.html(report).encode("utf-8"))
            session.written.append(html_path)
    if json_path and quiet < 2:
        print(f"JSON report: {json_path}")
    if html_path and quiet < 2:
        print(f"HTML report: {html_path}")
    return 0 if report.holds else 1
