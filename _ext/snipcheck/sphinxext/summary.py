"""The end-of-build summary and report (``build-finished``).

Logs one counted line, e.g. ``snipcheck: 31 snippets: 30 checked (28 from
cache), 1 not run (cuda); 0 drift``, and writes ``report.json`` in the report
directory with every placed snippet's status, problems and diff.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..cache import write_atomic
from . import state as state_mod
from .collector import iter_all

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger("snipcheck")


def summarize(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.env is None:
        return
    state = state_mod.get(app)
    recs = list(iter_all(app.env))
    if not recs:
        return
    counts = Counter(r.status for r in recs)
    origins = Counter(r.origin for r in recs if r.status != "not-run" and r.docname in state.read_now)
    missing = Counter(m for r in recs for m in r.missing)
    pages = len({r.docname for r in recs})
    parts = [f"{len(recs)} snippets on {pages} page{'s' if pages != 1 else ''}: {counts['ok']} match their stated output"]
    names = {"drift": "drift", "exec": "failed", "timeout": "timed out", "error": "could not be loaded",
             "off": "not executed (execution off)"}
    for status, name in names.items():
        if counts[status]:
            parts.append(f"{counts[status]} {name}")
    if counts["not-run"]:
        parts.append(f"{counts['not-run']} not run here (needs " + ", ".join(sorted(missing)) + ")")
    line = "snipcheck: " + ", ".join(parts)
    if state.read_now:
        kept = sum(1 for r in recs if r.docname not in state.read_now)
        line += (
            f"; this build ran {origins['run']}, took {origins['cache']} from the cache"
            + (f" and kept {kept} from pages it did not re-read" if kept else "")
        )
    else:
        line += "; this build re-read no page"
    logger.info(line)
    report = {
        "stamp": dataclasses.asdict(state.stamp) if state.stamp else None,
        "reference": state.settings.reference,
        "snippets": [dataclasses.asdict(r) for r in recs],
    }
    try:
        write_atomic(state.settings.report_dir / "report.json", json.dumps(report, ensure_ascii=False, indent=1).encode())
    except OSError as exc:
        logger.warning(f"snipcheck: cannot write the report: {exc}", type="snipcheck", subtype="config")


def register(app: Sphinx) -> None:
    app.connect("build-finished", summarize, priority=500)
