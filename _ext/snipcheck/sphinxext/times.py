"""The execution-time table of a build, per page and per chain.

Like sphinx-gallery's ``sg_execution_times``: one row per chain and one per
page for its snippets outside any chain, slowest first, each with its
snippets, the seconds their runs took and where their results came from.
The total is the *wall* time of the build's execution (the executor's first
job to its last, :attr:`snipcheck.engine.execute.Executor.wall`), not the sum of
the durations, which with parallel slots is larger: both are given.  The
build summary shows the slowest rows, ``report.json`` all of them
(``execution``).

Plain functions of the judged records: no Sphinx import.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from snipcheck.sphinxext.collector import SnippetRecord

#: Where a snippet's result came from, as the rows count it: taken from the
#: cache; taken from the cache, which a CI cache carried it into
#: (:mod:`snipcheck.shard.carried`); run in this build with the stated output, or with a new one;
#: kept from a page this build did not re-read; no result (not run here,
#: stopped by its chain, not loaded, execution off).
ORIGINS = ("cache", "ci-cache", "same", "new", "kept", "none")
_WORDS = {"cache": "from the cache", "ci-cache": "from the CI cache", "same": "same", "new": "new", "kept": "kept", "none": "no result"}
#: Rows the build summary shows.
SLOWEST = 3


@dataclass(frozen=True)
class Row:
    """One row of the table.

    :param page: Sphinx's name of the page.
    :param chain: the chain's name on that page (``snippet-chain``), or
        ``None`` for the page's snippets outside any chain.
    :param snippets: placements in the row.
    :param seconds: the sum of their results' durations, in seconds (a
        cached result's as it ran then), to the millisecond.
    :param origin: how many came from each of :data:`ORIGINS`.
    :param notebook: for the row of a notebook page's cells, the notebook's
        file as the summary names it (``nb.ipynb``); ``""`` for any other.
        ``report.json`` keeps the row's ``page`` and ``chain`` (``notebook``).
    """

    page: str
    chain: str | None
    snippets: int
    seconds: float
    origin: dict[str, int]
    notebook: str = ""

    def to_json(self) -> dict[str, object]:
        return {"page": self.page, "chain": self.chain, "snippets": self.snippets,
                "seconds": self.seconds, "origin": self.origin}  # fmt: skip

    def label(self) -> str:
        """``tutorial, chain tensors 0.90 s (5 snippets: 5 from the cache)``;
        ``nb.ipynb (notebook) 0.90 s (5 cells: 5 same)`` for a notebook page."""
        where = self.page if self.chain is None else f"{self.page}, chain {self.chain}"
        counts = ", ".join(f"{n} {_WORDS[name]}" for name, n in self.origin.items() if n)
        plural = "s" if self.snippets != 1 else ""
        if self.notebook:
            return f"{self.notebook} (notebook) {self.seconds:.2f} s ({self.snippets} cell{plural}: {counts})"
        return f"{where} {self.seconds:.2f} s ({self.snippets} snippet{plural}: {counts})"


def origin(rec: SnippetRecord, read_now: frozenset[str], carried: frozenset[int] = frozenset()) -> str:
    """Which of :data:`ORIGINS` ``rec``'s result came from (``carried``: the
    ``id()`` of the records whose result a CI cache carried in)."""
    if rec.docname not in read_now:
        return "kept"
    if rec.origin == "cache":
        return "ci-cache" if id(rec) in carried else "cache"
    if rec.origin == "run":
        return "new" if rec.output == "new" else "same"
    return "none"


def rows(
    recs: Iterable[SnippetRecord],
    read_now: frozenset[str],
    carried: frozenset[int] = frozenset(),
    notebooks: Mapping[tuple[str, str], str] | None = None,
) -> list[Row]:
    """The table: a row per chain and per page (its snippets outside chains),
    slowest first (then by page and chain, so equal times keep one order);
    ``carried`` as :func:`origin` takes it; ``notebooks`` maps ``(page,
    chain)`` of a notebook page's cells to the notebook's file (:attr:`Row.notebook`)."""
    groups: dict[tuple[str, str | None], list[SnippetRecord]] = {}
    for rec in recs:
        chain = rec.snippet.chain.partition(":")[2] if rec.snippet is not None and rec.snippet.chain else None
        groups.setdefault((rec.docname, chain), []).append(rec)
    table = []
    for (page, chain), group in groups.items():
        counted = Counter(origin(r, read_now, carried) for r in group)
        seconds = sum(r.duration for r in group)  # 0 without a result
        # rounded once, so the summary and report.json show the same figure
        notebook = (notebooks or {}).get((page, chain or ""), "")
        table.append(Row(page, chain, len(group), round(seconds, 3), {name: counted[name] for name in ORIGINS}, notebook))
    return sorted(table, key=lambda row: (-row.seconds, row.page, row.chain or ""))


def run_seconds(recs: Iterable[SnippetRecord], read_now: frozenset[str]) -> float:
    """The sum of the durations of this build's runs, in seconds (to the millisecond)."""
    return round(sum(r.duration for r in recs if r.origin == "run" and r.docname in read_now), 3)


def report(table: Sequence[Row], wall: float, runs: float) -> dict[str, object]:
    """``report.json``'s ``execution``: ``wall`` (seconds of the build's
    execution, to the millisecond), ``runs`` (:func:`run_seconds`) and every row."""
    return {"wall": wall, "runs": runs, "rows": [row.to_json() for row in table]}


def summary(table: Sequence[Row], wall: float, runs: float) -> str:
    """The summary's line: the wall time, the runs' sum and the slowest rows."""
    slow = [row.label() for row in table[:SLOWEST] if row.seconds > 0]
    line = f"snipcheck: execution took {wall:.2f} s of wall time, its runs {runs:.2f} s in all"
    return line + ("; slowest: " + "; ".join(slow) if slow else "")
