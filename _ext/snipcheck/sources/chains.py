"""Chains: snippets of one page that run in one process, cell after cell.

A tutorial's cells build on each other (``x`` from the second cell is used
in the fifth), as a notebook's cells share one kernel.  A page groups its
snippets into a *chain* with the ``snippet-chain`` directive (the snippets
after it, in page order, until the next ``snippet-chain``) or with a
snippet's ``chain`` option; the placement index records each placement's
chain name (:attr:`snipcheck.sources.placement.Placement.chain`).

:func:`attach` turns the placements of a project, in page order, into
snippets that know their chain: ``Snippet.chain`` names it
(``"<docname>:<name>"``) and ``Snippet.earlier`` holds the cells before it.
The executor runs a chain's cells in one process (``Runner.run_chain``);
each cell's output is captured, stated and compared on its own; the cache key
of a cell covers every cell before it, so an edit re-runs the edited cell and
those after it (the cells before it run again in the same process to rebuild
the state, their results must agree with what they had).

Chains are per page, like sphinx.ext.doctest's groups, Documenter.jl's named
``@example`` blocks and a notebook's kernel: a chain never spans pages, so
re-reading one page re-runs whole chains only.

Pure core: standard library and :mod:`snipcheck.model`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from snipcheck.model import Snippet

__all__ = ["Broken", "attach", "cells_of", "with_later"]


@dataclasses.dataclass(frozen=True)
class Broken:
    """A chain cell that cannot run because of what comes before it.

    :param message: what is wrong and what to do (names the cell at fault).
    """

    message: str


def attach(items: Iterable[tuple[str, str, Snippet | None]]) -> list[Snippet | Broken | None]:
    """Link the cells of each chain.

    :param items: ``(docname, chain name, snippet)`` per placement, in page
        order (the placement index's order); ``""`` for no chain; snippet
        ``None`` where it could not be loaded (its placement reports why).
    :return: per item: the snippet with ``chain`` and ``earlier`` set, the
        snippet as it was (no chain), ``None`` (not loaded), or
        :class:`Broken` for a cell after one that cannot run (not loaded, or
        not Python), or one that sets a seed without being the first.
    """
    seen: dict[tuple[str, str], list[Snippet]] = {}
    broken: dict[tuple[str, str], str] = {}
    out: list[Snippet | Broken | None] = []
    for docname, name, snippet in items:
        if not name:
            out.append(snippet)
            continue
        key = (docname, name)
        if key in broken:
            out.append(Broken(broken[key]) if snippet is not None else None)
            continue
        if snippet is None:
            broken[key] = f"an earlier cell of chain {name!r} could not be loaded (see its warning); fix it first"
            out.append(None)
            continue
        if snippet.language != "python":
            broken[key] = f"chain {name!r} holds {snippet.id!r}, a {snippet.language} snippet; a chain runs Python cells only"
            out.append(Broken(broken[key]))
            continue
        cells = seen.setdefault(key, [])
        if cells and snippet.tags.seed is not None:
            broken[key] = (
                f"{snippet.id!r} sets a seed, but it is not the first cell of chain {name!r}: a chain's "
                f"process is seeded once, at its start; move the seed tag to {cells[0].id!r}"
            )
            out.append(Broken(broken[key]))
            continue
        chain = f"{docname}:{name}"
        out.append(dataclasses.replace(snippet, chain=chain, earlier=tuple(cells)))
        cells.append(dataclasses.replace(snippet, chain=chain, earlier=()))
    return out


def cells_of(snippet: Snippet) -> tuple[Snippet, ...]:
    """The cells that run for ``snippet``: the earlier ones, then itself (without ``earlier`` and ``later``)."""
    return (*snippet.earlier, dataclasses.replace(snippet, earlier=(), later=()))




def with_later(snippets: Sequence[Snippet]) -> list[Snippet]:
    """``snippets`` with each chain cell's ``later`` filled in from the longest
    cell of its chain among them (as :mod:`snipcheck.engine.chain_job` runs it),
    where the caller did not know it (a build links a cell as its page is
    read, before the cells after it): what its cache key needs."""
    longest: dict[str, Snippet] = {}
    for snippet in snippets:
        if snippet.chain and len(snippet.earlier) >= len(longest.get(snippet.chain, snippet).earlier):
            longest[snippet.chain] = snippet
    out = []
    for snippet in snippets:
        line = longest.get(snippet.chain) if snippet.chain and not snippet.later else None
        if line is not None:
            ids = [cell.id for cell in cells_of(line)] + list(line.later)
            snippet = dataclasses.replace(snippet, later=tuple(ids[len(snippet.earlier) + 1 :]))
        out.append(snippet)
    return out
