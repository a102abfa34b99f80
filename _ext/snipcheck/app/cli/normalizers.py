"""``snipcheck normalizers``: list the normalizers and what each does."""

from __future__ import annotations

import argparse

from snipcheck.app.cli.output import plain
from snipcheck.judge import normalize


def command(args: argparse.Namespace) -> int:
    """Print one line per normalizer: its name, whether it changes what is shown, its doc."""
    for n in normalize.REGISTRY.values():
        kind = "display" if n.display else "compare-only"
        print(f"{n.name:28} {kind:13} {plain(n.doc)}")
    return 0
