"""The fork runner and a plain ``python snippets/x.py`` give byte-identical results
on every snippet of the real chapter (issue 5).

The fork runner runs each snippet in a fork of a warm server that imported
torch (and what ``conf.py`` preloads) once; the subprocess runner starts a
fresh interpreter.  Same events (stream, kind, text, in order), same exit
status, signal and exception: otherwise the speed would cost the truth.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from snipcheck.runner.fork import ForkRunner
from snipcheck.runner.python import SubprocessRunner
from snipcheck.settings import Settings
from snipcheck.snippets import load

REPO = Path(__file__).parent.parent


def chapter_python_snippets(settings: Settings, placements: list) -> list:
    ids = sorted({p.snippet_id for p in placements})
    snippets = [load(i, settings.snippets_dir, settings.root) for i in ids]
    return [s for s in snippets if s.language == "python" and not s.tags.requires]


def limit(snippet) -> float:  # noqa: ANN001
    """The snippet's own timeout tag (the torch.compile one needs minutes on a busy machine), else 120 s."""
    return max(snippet.tags.timeout or 0.0, 120.0)


@pytest.mark.chapter
def test_every_chapter_snippet_gives_the_same_result_forked_and_alone(stamp, chapter_placements) -> None:  # noqa: ANN001
    settings, _ = Settings.from_conf(REPO)
    snippets = chapter_python_snippets(settings, chapter_placements)
    assert len(snippets) > 30
    fork = ForkRunner(settings.python, stamp, preload=settings.preload)
    assert fork.unavailable is None, fork.unavailable  # the chapter must not fall back
    plain = SubprocessRunner(settings.python, stamp)
    try:
        forked = [fork.run(s, timeout=limit(s), output_limit=settings.output_limit) for s in snippets]
    finally:
        fork.close()
    with ThreadPoolExecutor(max_workers=2) as pool:
        alone = list(pool.map(lambda s: plain.run(s, timeout=limit(s), output_limit=settings.output_limit), snippets))
    different = []
    for snippet, a, b in zip(snippets, forked, alone):
        if (a.events, a.exit_status, a.signal, a.exception) != (b.events, b.exit_status, b.signal, b.exception):
            different.append(snippet.id)
    assert different == []
    assert {r.runner for r in forked} == {"fork"}
