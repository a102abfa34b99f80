"""``snipcheck new ID``: create a snippet file (or a cell to paste), print the directive to paste."""

from __future__ import annotations

import argparse

from snipcheck.app import scaffold
from snipcheck.app.cli import session
from snipcheck.app.cli.output import USAGE_ERROR, fail
from snipcheck.app.project import Project


def command(project: Project, args: argparse.Namespace) -> int:
    """See :func:`snipcheck.app.scaffold.new`; bad input exits with :data:`USAGE_ERROR`."""
    try:
        return scaffold.new(
            project.settings, args.id, rust=args.rust, expect=args.expect, requires=args.requires,
            srcdir=project.srcdir, written=session.written, in_page=args.cell,
        )  # fmt: skip
    except scaffold.ScaffoldError as exc:
        return fail(str(exc), USAGE_ERROR)
