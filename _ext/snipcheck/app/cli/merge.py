"""``snipcheck merge REPORT...``: combine the shard reports of one verify run."""

from __future__ import annotations

import argparse

from snipcheck.app.cli.output import USAGE_ERROR, fail
from snipcheck.app.cli.verify import emit
from snipcheck.report import read as report_file
from snipcheck.report.verify import merge


def command(args: argparse.Namespace) -> int:
    """Read every report (:func:`snipcheck.report.read.read`), merge them, print and write the result."""
    try:
        reports = [report_file.read(path) for path in args.reports]
        merged = merge(reports)
    except ValueError as exc:
        return fail(f"cannot merge: {exc}", USAGE_ERROR)
    return emit(merged, args.json, args.html, quiet=args.quiet)
