"""The fork runner and a plain ``python snippets/x.py`` give byte-identical results
on every snippet of the real chapter (issue 5).

The fork runner runs each snippet in a fork of a warm server that imported
torch (and what ``conf.py`` preloads) once; the subprocess runner starts a
fresh interpreter.  Same events (stream, kind, text, in order), same exit
status, signal and exception: otherwise the speed would cost the truth.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from snipcheck.judge.compare import judge
from snipcheck.judge.wildcards import uses_wildcards
from snipcheck.run.fork import ForkRunner
from snipcheck.run.python import SubprocessRunner
from snipcheck.settings import Settings
from snipcheck.sources.chains import attach, cells_of
from snipcheck.sources.snippets import find
from snipcheck.sources.tags import resolved_seed

REPO = Path(__file__).parents[2]


def chapter_python_snippets(settings: Settings, index) -> tuple[list, list]:
    """The chapter's Python snippets that run here: those on their own, and
    the chains (each a list of its cells, in order)."""
    code = {(c.docname, c.snippet_id): c for c in index.code}
    items = []
    for p in sorted(index.placements, key=lambda p: (p.docname, p.line)):
        snippet = find(p.snippet_id, code.get((p.docname, p.snippet_id)), settings.snippets_dir, settings.root)
        items.append((p.docname, p.chain, snippet))
    alone, chains = [], {}
    for snippet in attach(items):
        if snippet.language != "python" or snippet.tags.requires:
            continue
        if snippet.chain:
            chains[snippet.chain] = cells_of(snippet)  # the last cell's line holds the whole chain
        else:
            alone.append(snippet)
    return alone, list(chains.values())


def limit(snippet) -> float:
    """The snippet's own timeout tag (the torch.compile one needs minutes on a busy machine), else 120 s."""
    return max(snippet.tags.timeout or 0.0, 120.0)


@pytest.mark.chapter
def test_every_chapter_snippet_gives_the_same_result_forked_and_alone(stamp, chapter_index) -> None:
    settings, _ = Settings.from_conf(REPO)
    snippets, chains = chapter_python_snippets(settings, chapter_index)
    assert len(snippets) > 30 and len(chains) >= 2
    fork = ForkRunner(settings.python, stamp, preload=settings.preload)
    assert fork.unavailable is None, fork.unavailable  # the chapter must not fall back
    plain = SubprocessRunner(settings.python, stamp)

    def chain(runner, cells):
        seeded = [dataclasses.replace(c, tags=dataclasses.replace(c.tags, seed=resolved_seed(c.tags, settings.seed))) for c in cells]
        return runner.run_chain(seeded, timeouts=[limit(c) for c in cells], output_limit=settings.output_limit)

    try:
        forked = [fork.run(s, timeout=limit(s), output_limit=settings.output_limit) for s in snippets]
        forked_cells = [r for cells in chains for r in chain(fork, cells)]
    finally:
        fork.close()
    with ThreadPoolExecutor(max_workers=2) as pool:
        alone = list(pool.map(lambda s: plain.run(s, timeout=limit(s), output_limit=settings.output_limit), snippets))
    alone_cells = [r for cells in chains for r in chain(plain, cells)]
    ids = [s.id for s in snippets] + [c.id for cells in chains for c in cells]
    assert len(forked_cells) == len(alone_cells) == sum(len(cells) for cells in chains)  # every cell ran
    stated = {p.snippet_id: p.stated for p in chapter_index.placements}
    by_id = {s.id: s for s in [*snippets, *(c for cells in chains for c in cells)]}
    different = []
    for snippet_id, a, b in zip(ids, forked + forked_cells, alone + alone_cells, strict=True):
        if uses_wildcards(stated[snippet_id]):  # what varies on every run (a timing): both must match the page
            tags = by_id[snippet_id].tags
            if not all(judge(tags, r, stated[snippet_id], settings.normalizers).ok for r in (a, b)):
                different.append(snippet_id)
        elif (a.events, a.exit_status, a.signal, a.exception, a.figures) != (b.events, b.exit_status, b.signal, b.exception, b.figures):
            different.append(snippet_id)
    assert different == []
    assert {r.runner for r in forked + forked_cells} == {"fork"}
